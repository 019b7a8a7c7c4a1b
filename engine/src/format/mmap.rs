//! The one module that memory-maps files (`design.md` §4): sealed, read-only segment files
//! only. A mapping is created read-only and private; the store decodes from it only after
//! the whole mapped content has passed its BLAKE3 check against the manifest. The pread
//! path (`SegBytes::read`) serves the same bytes through an ordinary read; the test suite
//! runs against both ([`crate::Options::io`]; the CLI reads `TGMS_IO=pread` / `mmap`).
#![allow(unsafe_code)]

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Bytes of a mapped segment that a pass over the whole file (the checks at open) reads
/// before releasing them ([`SegBytes::release`]).
pub(crate) const RELEASE_BYTES: usize = 8 << 20;

/// How segment files are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoMode {
    /// Memory-map the file (read-only, private).
    Mmap,
    /// Read the file into memory.
    Pread,
}

/// The bytes of one segment file, mapped or read.
pub(crate) enum SegBytes {
    Map(memmap2::Mmap),
    Heap(Vec<u8>),
}

impl SegBytes {
    /// Opens `path` and maps it (or reads it, for `Pread`, an empty file, or a platform
    /// that refuses the mapping).
    pub(crate) fn open(path: &Path, mode: IoMode) -> std::io::Result<SegBytes> {
        SegBytes::open_stat(path, mode).map(|(b, _)| b)
    }

    /// [`SegBytes::open`], with the metadata of the file it opened (from its handle, so the
    /// two describe the same file even when the path is replaced meanwhile).
    pub(crate) fn open_stat(
        path: &Path,
        mode: IoMode,
    ) -> std::io::Result<(SegBytes, std::fs::Metadata)> {
        let mut f = File::open(path)?;
        let meta = f.metadata()?;
        let len = meta.len();
        if mode == IoMode::Pread || len == 0 || len > isize::MAX as u64 {
            let mut v = Vec::with_capacity(len as usize);
            f.read_to_end(&mut v)?;
            return Ok((SegBytes::Heap(v), meta));
        }
        // SAFETY: the mapping is read-only (memmap2's `Mmap`) and private to this handle.
        // The file behind it is a sealed segment: tgms never writes to, truncates or renames
        // an existing segment file, and deleting it (garbage collection) leaves existing
        // mappings intact. A file truncated by a foreign process would fault on access;
        // `format-spec.md` states that assumption about the medium. Callers decode only
        // after the whole mapped content passed its BLAKE3 check against the manifest, or
        // its check record names this very file, unchanged since it passed (§6.6).
        let map = unsafe { memmap2::Mmap::map(&f)? };
        Ok((SegBytes::Map(map), meta))
    }

    /// Reads `path` into memory (the pread path).
    pub(crate) fn read(path: &Path) -> std::io::Result<SegBytes> {
        SegBytes::open(path, IoMode::Pread)
    }

    /// Drops the mapped pages of bytes `[offset, offset + len)` from this process's resident
    /// set (`madvise(MADV_DONTNEED)`; the range is widened to whole pages) once a pass over
    /// them (the checksums at open) is done with them: reads fault back in only the pages
    /// they touch, from the page cache. Nothing for bytes read into memory, and nothing on a
    /// platform that refuses the advice (it only frees memory sooner).
    pub(crate) fn release(&self, offset: usize, len: usize) {
        if let SegBytes::Map(m) = self {
            let len = len.min(m.len().saturating_sub(offset));
            if len == 0 {
                return;
            }
            // SAFETY: the mapping is read-only and private and its file is a sealed segment
            // that nobody writes (see `open`), so dropping its pages loses nothing: the
            // next access reads the same bytes back from the file.
            let _ = unsafe {
                m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, offset, len)
            };
        }
    }

    /// Advises the kernel that the mapped bytes are read at random (`true`: no readahead
    /// around a page fault) or as usual (`false`). An open that reads only the image's
    /// headers, scattered over the file, would otherwise have each fault read ahead as far
    /// as the device's readahead window (8 MB on the developer VM: 650 MB read from a cold
    /// disk for one open at 10^8 events). Nothing for bytes read into memory, and nothing
    /// on a platform that refuses the advice.
    pub(crate) fn read_at_random(&self, random: bool) {
        if let SegBytes::Map(m) = self {
            let advice = match random {
                true => memmap2::Advice::Random,
                false => memmap2::Advice::Normal,
            };
            let _ = m.advise(advice);
        }
    }

    /// The file's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            SegBytes::Heap(v) => v,
            SegBytes::Map(m) => m,
        }
    }
}
