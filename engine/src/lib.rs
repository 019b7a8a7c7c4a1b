//! tgms-engine: the bi-temporal storage engine — data model and write rules, hybrid
//! logical clock, write-ahead log, open / recovery / replay, store digest, statistics and the
//! read API that operators use. The user guide to the model is `docs/data-model.md`; the
//! on-disk format is `format-spec.md`.
//!
//! # A store in five lines
//!
//! A [`Store`] is one directory with one writer. Each [`Store::write`] is one atomic batch
//! of [`Op`]s at a new transaction time `tt`; a [`Snapshot`] reads one published state.
//! Times are µs since 1970 UTC; [`OPEN_END`] is the open upper bound.
//!
//! ```
//! use serde_json::json;
//! use tgms_engine::{Identity, Op, Store, OPEN_END};
//!
//! let dir = tempfile::tempdir()?;
//! let mut store = Store::create(&dir.path().join("s"))?;
//! // Valid time: what was true when. Ops are the JSON shapes of docs/data-model.md.
//! let tt1 = store.write(vec![Op::parse(&json!(
//!     {"op": "assert_node", "uid": "a", "label": "N", "props": {"p": 1}, "vt_s": 0, "vt_e": 100}))?])?;
//! // A correction closes the old belief instead of overwriting it.
//! store.write(vec![Op::parse(&json!(
//!     {"op": "correct", "ref": {"kind": "node", "uid": "a"}, "props": {"p": 2},
//!      "vt_s": 40, "vt_e": 60, "reason": "fix p over [40,60)"}))?])?;
//! let snap = store.snapshot();
//! let a = Identity::Node("a".into());
//! assert_eq!(snap.versions_of(&a, tt1).len(), 1); // believed at tt1: one version
//! assert_eq!(snap.versions_of(&a, OPEN_END).len(), 3); // now: [0,40) [40,60) [60,100)
//! assert_eq!(snap.history_of(&a).len(), 4); // stored: the closed one stays
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Read-only handles ([`Store::open_read_only`]) share the directory with a live writer;
//! [`Store::digest`] is a BLAKE3 digest of every stored row, equal after replay and
//! compaction.
// Unsafe code is denied everywhere (`[workspace.lints]`) except the one mmap module, which
// allows it and justifies each block with a SAFETY paragraph.

mod apply;
pub mod canon;
pub mod clock;
pub mod error;
pub mod eventlog;
pub mod fault;
pub mod format;
pub mod ident;
pub mod load;
mod lowercase;
mod model;
pub mod op;
pub mod op_input;
pub mod read;
mod rows;
pub mod store;
pub mod time;

pub use error::{CorruptionKind, Error, Result, StateAbout};
pub use load::Load;
pub use model::{Stats, Table};
pub use op::{Event, EventEnd, Op, Origin, Ref};
pub use read::{
    EdgeScan, EdgeSpan, EdgeVersion, Identity, NodeVersion, RowTimes, Snapshot, StartEvent,
    TimeCols, Touch, Version,
};
pub use rows::cols::EdgeColumns;
pub use store::{IngestReport, Options, Store};
pub use time::OPEN_END;
