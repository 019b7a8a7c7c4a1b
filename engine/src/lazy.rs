//! A read-only store served from its mapped base image (`format-spec.md` §6.5): when the
//! published generation is one full-image segment with indexes and the log holds nothing
//! after it, a read-only open maps that segment, checks it, and answers point reads
//! (identity history, adjacency, uid lookups, statistics) from the file. The in-memory
//! state is decoded from the same bytes only when a read needs it (scans, windows,
//! digests), once, and then serves every later read.
//!
//! Invariant: the state decoded from the base image numbers every uid, string, identity
//! and row exactly as the image does, so views and ids handed out before the decode stay
//! valid after it.

use crate::base::Base;
use crate::seg;
use crate::state::{State, Stats};
use std::sync::OnceLock;

/// A read-only store's base image and its lazily decoded state.
pub(crate) struct Lazy {
    pub(crate) base: Base,
    /// The statistics the manifest published for the image.
    pub(crate) stats: Stats,
    full: OnceLock<State>,
    error: OnceLock<String>,
}

impl Lazy {
    pub(crate) fn new(base: Base, stats: Stats) -> Lazy {
        Lazy {
            base,
            stats,
            full: OnceLock::new(),
            error: OnceLock::new(),
        }
    }

    /// True once the state has been decoded.
    pub(crate) fn hydrated(&self) -> bool {
        self.full.get().is_some()
    }

    /// The in-memory state, decoded from the base image by the first caller. A decode
    /// failure (a defect: the image passed its checksums at open) leaves an empty state
    /// and records the error for [`Lazy::error`].
    pub(crate) fn full(&self) -> &State {
        self.full.get_or_init(|| {
            decode(&self.base, &self.stats).unwrap_or_else(|e| {
                let _ = self.error.set(e);
                State::default()
            })
        })
    }

    /// The decode failure, if the state could not be decoded.
    pub(crate) fn error(&self) -> Option<&str> {
        self.error.get().map(String::as_str)
    }
}

/// The state of a store whose only segment is the base image.
fn decode(base: &Base, stats: &Stats) -> Result<State, String> {
    let (_, data) =
        seg::decode(base.bytes()).map_err(|(o, k)| format!("base image at offset {o}: {k}"))?;
    let mut st = State::default();
    st.load_seg(data)?;
    st.finish_load(stats.clone())?;
    Ok(st)
}
