//! The format layer: the store's bytes on disk and nothing else (`format-spec.md`). It
//! knows the stored model (`model.rs`) and the ops it logs, never the memtable or the read
//! path: the write-ahead log's frames and records (`wal`), the segment encoder, decoder
//! and verifier (`seg`), the reader of a mapped full image (`base`, with the structural
//! checks in `base/structure.rs`, and the record that an image passed them, `checked`), the
//! manifest (`manifest`), the roaring-bitmap chunks
//! (`bitmap`), file mapping (`mmap`), and what its decoders share: the little-endian reader
//! (`le`) and the binary search over positions (`search`).
//!
//! Readers of stored bytes must not panic on any input: they read through the
//! bounds-checked reader (`le`) or `get`, never by indexing, and never unwrap (denied
//! below outside tests; the exceptions say why they hold).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

pub(crate) mod base;
pub(crate) mod bitmap;
pub mod checked;
pub(crate) mod le;
pub mod manifest;
pub mod mmap;
pub(crate) mod search;
pub mod seg;
pub mod wal;

pub use base::open_image;
