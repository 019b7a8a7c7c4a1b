//! tgms-bench: the deterministic synthetic generator of spec/evaluation.md §1.
pub mod collegemsg_log;
pub mod generate;
