//! Immutable columnar segment files (`format-spec.md` §6): the byte layout, the column
//! codecs (frame-of-reference bit-packing, runs, string heaps), per-chunk crc32, and the
//! encoder / verifying decoder between a file and a `SegData`.
//!
//! This file holds the layout (magic, versions, chunk ids and codecs, the chunk layout of
//! each minor); the column encoders are in `seg/encode.rs`, the writer in `seg/write.rs`,
//! the verifying decoders in `seg/decode.rs`.

use crate::error::CorruptionKind;
use crate::model::{Closure, Content, Disc, IdentRec, Marks, Row, SegData, Table, NONE};
use crate::op::Origin;
use crate::time::OPEN_END;

/// File magic of a segment.
pub const SEG_MAGIC: &[u8; 8] = b"TGMSSEG\0";
/// Magic closing the trailer of a segment.
pub const SEG_TRAILER_MAGIC: &[u8; 4] = b"TGSE";
/// Segment format major version.
pub const SEG_MAJOR: u16 = 1;
/// Segment minor of flush segments written by formats 1.2–1.4: codec 4 (DFOR) for integer
/// columns, rows in write order.
pub const SEG_MINOR: u16 = 1;
/// Segment minor of a compacted full image with index chunks (64–76) and random-access
/// integer codecs only (FOR, DFORS, PFOR): format 1.3.
pub const SEG_MINOR_INDEXED: u16 = 2;
/// Segment minor of a full image that also holds the valid-time index chunks (77–80):
/// format 1.4.
pub const SEG_MINOR_TIME_INDEX: u16 = 3;
/// Segment minor of a full image whose row tables are in segment order `(vt_s, ident,
/// tt_s)` (invariant S9), with the closed-row sets (chunks 81–82, codec ROARING): format
/// 1.5. Compaction writes it.
pub const SEG_MINOR_SORTED: u16 = 4;
/// Segment minor of flush segments written by format 1.5: minor 1 with its rows in segment
/// order and the closed-row sets (chunks 81–82) of the closures it records.
pub const SEG_MINOR_FLUSH: u16 = 5;
/// Segment minor of a full image written by format 1.9: minor 4 whose integer chunks may
/// also use the ARITH codec (a piecewise arithmetic sequence: 24 bytes and 12 per break).
/// Compaction writes it.
pub const SEG_MINOR_ARITH: u16 = 6;
/// The highest segment minor this version reads.
pub const SEG_MINOR_MAX: u16 = SEG_MINOR_ARITH;

/// True for the minors of full images with index chunks (64–76 and more): 2, 3, 4 and 6.
pub fn is_indexed(minor: u16) -> bool {
    matches!(
        minor,
        SEG_MINOR_INDEXED..=SEG_MINOR_SORTED | SEG_MINOR_ARITH
    )
}

/// True for the minors whose rows are in segment order, with closed-row sets: 4, 5 and 6.
pub fn is_sorted(minor: u16) -> bool {
    minor >= SEG_MINOR_SORTED
}

/// True for the minors whose integer chunks may use the ARITH codec: 6.
pub fn has_arith(minor: u16) -> bool {
    minor == SEG_MINOR_ARITH
}
/// Header bytes: magic 8, major 2, minor 2, flags 4, seq 8, base marks 7 × 8, crc 4, pad 4.
pub const SEG_HEADER_LEN: usize = 88;

/// Byte offset of the minor version (`u16`) in a segment header.
pub const MINOR_AT: usize = 10;
/// Header bytes up to and including the minor version: what [`header_minor`] needs.
pub const MINOR_END: usize = MINOR_AT + 2;

/// The minor version a segment header names; `None` when `b` ends before it.
pub fn header_minor(b: &[u8]) -> Option<u16> {
    (b.len() >= MINOR_END).then(|| crate::format::le::u16_at(b, MINOR_AT))
}
/// Trailer bytes: footer offset 8, footer length 8, footer crc 4, magic 4.
pub const SEG_TRAILER_LEN: usize = 24;
/// Bytes of one chunk-directory entry.
pub const DIR_ENTRY_LEN: usize = 24;

/// Chunk ids (`format-spec.md` §6.3). Row chunks are `ROWS_NODE + k` / `ROWS_EDGE + k`.
pub mod chunk {
    /// uid table `[base, end)`: the uid strings (HEAP).
    pub const UIDS: u16 = 1;
    /// string table `[base, end)`: labels, props, sources, provenance refs, reasons, rel
    /// types and string discs, deduplicated store-wide (HEAP).
    pub const STRINGS: u16 = 2;
    /// content table: the label's string id.
    pub const CONTENT_LABEL: u16 = 3;
    /// content table: the props' string id (canonical JSON text).
    pub const CONTENT_PROPS: u16 = 4;
    /// content table: the source's string id.
    pub const CONTENT_SOURCE: u16 = 5;
    /// content table: the provenance ref's string id (canonical JSON text).
    pub const CONTENT_PROV: u16 = 6;
    /// edge identity table: the src uid id.
    pub const IDENT_SRC: u16 = 7;
    /// edge identity table: the dst uid id.
    pub const IDENT_DST: u16 = 8;
    /// edge identity table: the rel type's string id.
    pub const IDENT_REL: u16 = 9;
    /// edge identity table: disc tag; bit 0 set = string disc (clear = ordinal `#k`), bit 1
    /// set = the identity is in the explicit-identity map, other bits 0.
    pub const IDENT_DISC_TAG: u16 = 10;
    /// edge identity table: the disc value, the ordinal `k` or a string id (per the tag).
    pub const IDENT_DISC_VAL: u16 = 11;
    /// ordinal slots: the identity created by ingest ordinal `k`, `0xFFFFFFFF` for none.
    pub const SLOTS: u16 = 12;
    /// first chunk of the node row columns: column `c` is chunk `ROWS_NODE + c` (16–27).
    pub const ROWS_NODE: u16 = 16;
    /// first chunk of the edge row columns: column `c` is chunk `ROWS_EDGE + c` (32–43).
    pub const ROWS_EDGE: u16 = 32;
    // offsets inside a row group
    /// row column: the uid id (nodes) or edge identity id (edges).
    pub const IDENT: u16 = 0;
    /// row column: the content id.
    pub const CONTENT: u16 = 1;
    /// row column: start of the valid interval, µs.
    pub const VT_S: u16 = 2;
    /// row column: `vt_e - vt_s` in µs, or 0 for an open end (`vt_e = OPEN_END`).
    pub const VT_LEN: u16 = 3;
    /// row column: start of the transaction interval (the batch's `tt`), µs; RUNS, one run
    /// per batch, unless an integer column is smaller (minors 4 and 5).
    pub const TT_S: u16 = 4;
    /// row column: the reason, 0 for none, else its string id + 1.
    pub const REASON: u16 = 5;
    /// row column: the origin tag (1 assert, 2 retract, 3 correct, 4 ingest).
    pub const ORIGIN: u16 = 6;
    /// row column: 1, or 0 for a row retired inside its own batch.
    pub const ALIVE: u16 = 7;
    /// closure column: the store-wide row number closed, strictly ascending.
    pub const CLOSE_ROW: u16 = 8;
    /// closure column: the closed row's `tt_e`, µs.
    pub const CLOSE_TT_E: u16 = 9;
    /// closure column: the `closed_by` tag (1–4, as the origin).
    pub const CLOSE_BY: u16 = 10;
    /// closure column: the close reason, 0 for none, else its string id + 1.
    pub const CLOSE_REASON: u16 = 11;
    // index chunks of a minor-2, 3 or 4 segment (full image only)
    /// uid heap: n_uids + 1 cumulative byte offsets into the heap's string bytes.
    pub const UID_OFFS: u16 = 64;
    /// string heap: n_strings + 1 cumulative byte offsets.
    pub const STR_OFFS: u16 = 65;
    /// uid ids sorted by their UTF-8 bytes.
    pub const UID_ORDER: u16 = 66;
    /// string ids sorted by their UTF-8 bytes.
    pub const STR_ORDER: u16 = 67;
    /// node postings per uid: n_uids + 1 offsets into `NODE_POST`.
    pub const NODE_POST_OFF: u16 = 68;
    /// node row numbers grouped by uid, ascending within a uid.
    pub const NODE_POST: u16 = 69;
    /// edge postings per identity: n_idents + 1 offsets into `EDGE_POST`.
    pub const EDGE_POST_OFF: u16 = 70;
    /// edge row numbers grouped by identity, ascending within an identity.
    pub const EDGE_POST: u16 = 71;
    /// out adjacency per uid (edge rows whose identity has that src).
    pub const OUT_OFF: u16 = 72;
    /// out adjacency: edge row numbers grouped by src uid, ascending within a uid.
    pub const OUT: u16 = 73;
    /// in adjacency per uid (edge rows whose identity has that dst).
    pub const IN_OFF: u16 = 74;
    /// in adjacency: edge row numbers grouped by dst uid, ascending within a uid.
    pub const IN: u16 = 75;
    /// ids of the mapped identities sorted by (src, dst, rel, disc tag bit 0, disc value
    /// as u64).
    pub const MAPPED_ORDER: u16 = 76;
    // valid-time index chunks of a minor-3 segment (full image only)
    /// node row numbers sorted by `(vt_s, row)`.
    pub const NODE_BY_START: u16 = 77;
    /// node rows whose interval is not one microsecond, sorted by `(vt_e, row)`.
    pub const NODE_LONG_BY_END: u16 = 78;
    /// edge row numbers sorted by `(vt_s, row)`.
    pub const EDGE_BY_START: u16 = 79;
    /// edge rows whose interval is not one microsecond, sorted by `(vt_e, row)`.
    pub const EDGE_LONG_BY_END: u16 = 80;
    // closed-row sets of a minor-4 or 5 segment, codec ROARING
    /// the node rows that have a closure.
    pub const NODE_CLOSED: u16 = 81;
    /// the edge rows that have a closure.
    pub const EDGE_CLOSED: u16 = 82;

    use crate::model::Table;

    /// The first chunk id of table `k`'s row columns (`ROWS_NODE` or `ROWS_EDGE`; a column
    /// is this plus its offset, `IDENT` … `CLOSE_REASON`).
    pub const fn row_columns(k: Table) -> u16 {
        match k {
            Table::Nodes => ROWS_NODE,
            Table::Edges => ROWS_EDGE,
        }
    }

    /// Table `k`'s long rows by `vt_e` (`NODE_LONG_BY_END` or `EDGE_LONG_BY_END`).
    pub const fn long_by_end(k: Table) -> u16 {
        match k {
            Table::Nodes => NODE_LONG_BY_END,
            Table::Edges => EDGE_LONG_BY_END,
        }
    }

    /// Table `k`'s closed-row set (`NODE_CLOSED` or `EDGE_CLOSED`).
    pub const fn closed_rows(k: Table) -> u16 {
        match k {
            Table::Nodes => NODE_CLOSED,
            Table::Edges => EDGE_CLOSED,
        }
    }
}

/// Codec tags of the chunk directory.
pub mod codec {
    /// Frame-of-reference bit-packed integers.
    pub const FOR: u8 = 1;
    /// Runs of equal i64 values.
    pub const RUNS: u8 = 2;
    /// A string heap.
    pub const HEAP: u8 = 3;
    /// Delta + frame-of-reference bit packing (segment minor ≥ 1).
    pub const DFOR: u8 = 4;
    /// DFOR followed by a FOR column of every 32nd value, for random access (segment
    /// minors 2–4 and 6).
    pub const DFORS: u8 = 5;
    /// Patched frame of reference with exception starts per 32 values, for sparse columns
    /// (segment minors 2–4 and 6).
    pub const PFOR: u8 = 6;
    /// A roaring bitmap in the portable serialization, without run containers (segment
    /// minors 4–6).
    pub const ROARING: u8 = 7;
    /// A piecewise arithmetic sequence, `first + i × step` plus the offset of the last
    /// break at or before `i`: `u32 count | i64 first | i64 step | u32 n_brk | n_brk × u32
    /// index | n_brk × i64 offset` (segment minor 6).
    pub const ARITH: u8 = 8;
}

/// Bytes of an ARITH column before its breaks: count, first, step, break count.
pub const ARITH_HEAD: usize = 24;
/// Bytes of one ARITH break: its index and its offset (in two lists).
pub const ARITH_BREAK: usize = 12;

/// Values between two skip entries of a DFORS column (and between two exception starts of
/// a PFOR column).
pub const DFORS_STRIDE: usize = 32;

/// Every chunk id a version-1.0 segment holds, in file order, with its codec.
pub fn chunk_layout() -> Vec<(u16, u8)> {
    use chunk::*;
    let mut v = vec![(UIDS, codec::HEAP), (STRINGS, codec::HEAP)];
    for id in CONTENT_LABEL..=SLOTS {
        v.push((id, codec::FOR));
    }
    for g in [ROWS_NODE, ROWS_EDGE] {
        for k in IDENT..=CLOSE_REASON {
            v.push((g + k, if k == TT_S { codec::RUNS } else { codec::FOR }));
        }
    }
    v
}

/// Every chunk id a segment of minor `minor` holds, in file order, with its nominal codec
/// (FOR chunks may use DFOR in minors 1 and 5, DFORS or PFOR in minors 2–4 and 6, and
/// ARITH in minor 6; the `tt_s` RUNS chunks may use those integer codecs in minors 4–6).
pub fn chunk_layout_for(minor: u16) -> Vec<(u16, u8)> {
    let mut v = chunk_layout();
    if is_indexed(minor) {
        for id in chunk::UID_OFFS..=chunk::MAPPED_ORDER {
            v.push((id, codec::FOR));
        }
    }
    if is_indexed(minor) && minor >= SEG_MINOR_TIME_INDEX {
        for id in chunk::NODE_BY_START..=chunk::EDGE_LONG_BY_END {
            v.push((id, codec::FOR));
        }
    }
    if is_sorted(minor) {
        v.push((chunk::NODE_CLOSED, codec::ROARING));
        v.push((chunk::EDGE_CLOSED, codec::ROARING));
    }
    v
}

mod decode;
mod encode;
mod write;

pub(crate) use decode::*;
pub use decode::{decode_structure, verify, SegErr};
pub use encode::{
    put_arith, put_dfor, put_dfors, put_for, put_heap, put_int, put_int_image, put_int_ra,
    put_pfor, put_runs, ARITH_MAX_BREAKS,
};
pub use write::ZoneMap;
pub(crate) use write::*;

#[cfg(test)]
mod tests;
