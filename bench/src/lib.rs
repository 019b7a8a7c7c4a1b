//! tgms-bench: the deterministic synthetic generator of spec/evaluation.md §1.
