//! tgms-engine: the bi-temporal storage engine — data model and write rules
//! (`spec/data-model.md`), hybrid logical clock, write-ahead log, open / recovery / replay,
//! store digest, statistics and the read API that operators use.
// Unsafe code is denied everywhere except the one mmap module, which allows it and justifies
// each block with a SAFETY paragraph.
#![deny(unsafe_code)]

mod apply;
mod base;
mod bitmap;
pub mod canon;
pub mod clock;
mod cols;
mod compact;
mod delta;
pub mod error;
pub mod eventlog;
pub mod fault;
pub mod ident;
mod lazy;
mod lazy_write;
mod lowercase;
pub mod manifest;
mod mapscan;
pub mod mmap;
pub mod op;
pub mod op_input;
pub mod read;
pub mod seg;
mod state;
pub mod store;
pub mod time;
mod tindex;
pub mod wal;

pub use cols::EdgeColumns;
pub use error::{Error, Result};
pub use op::{Event, EventEnd, Op, Origin, Ref};
pub use read::{
    EdgeScan, EdgeVersion, Identity, NodeVersion, Snapshot, StartEvent, Touch, Version,
};
pub use state::Stats;
pub use store::{IngestReport, Options, Store};
pub use time::OPEN_END;
