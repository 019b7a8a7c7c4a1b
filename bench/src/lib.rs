//! tgms-bench: the deterministic synthetic generator of the spec's evaluation.md §1, the CollegeMsg
//! replay log (§7.2), the incident and state-at-T regression datasets (§5, §6) and the
//! benchmark registry runner (§2).

pub mod collegemsg_log;
pub mod generate;
pub mod registry;
pub mod scenarios;
