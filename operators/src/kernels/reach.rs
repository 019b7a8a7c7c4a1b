//! Temporal reachability (operators.md §12).
