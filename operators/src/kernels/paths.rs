//! Temporal paths (operators.md §13).
