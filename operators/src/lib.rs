//! tgms-operators: placeholder crate of the workspace layout (design.md §2); its content arrives with its issue.
#![forbid(unsafe_code)]

pub mod kernels;
