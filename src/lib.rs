//! tgms: facade library re-exporting the engine, plus the CLI's loaders, evaluation
//! harnesses, demo, benchmark runner and the agent loop ([`ask`]).
pub use tgms_engine as engine;
pub mod ask;
pub mod benchmcp;
pub mod benchrun;
pub mod demo;
pub mod eval;
pub mod export_rows;
pub mod grounding;
pub mod load;
pub mod mcp;
pub mod soak;
pub mod trace_graph;
pub mod trace_list;
pub mod trace_view;
pub mod verified;
