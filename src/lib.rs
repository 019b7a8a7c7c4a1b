//! tgms: facade library re-exporting the engine.
pub use tgms_engine as engine;
pub mod load;
