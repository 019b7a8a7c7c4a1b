//! A read-only store served from its mapped base image (`format-spec.md` §6.5, §9.4): when
//! the published generation is one full-image segment with indexes and the log holds
//! nothing after it, a read-only open maps that segment, checks it, and answers every read
//! from the file: point reads through the image's indexes, scans and window reads through
//! zone-pruned block decodes (`mapscan.rs`). Nothing is decoded into an in-memory state,
//! so a reader's memory is the pages it touches plus each answer's working set.

use crate::base::Base;
use crate::state::Stats;

/// A read-only store's base image and the statistics the manifest published for it.
pub(crate) struct Lazy {
    pub(crate) base: Base,
    pub(crate) stats: Stats,
}
