//! The one module that memory-maps files (`design.md` §4): sealed, read-only segment files
//! only. A mapping is created read-only and private; the store decodes from it only after
//! the whole mapped content has passed its BLAKE3 check against the manifest. The pread
//! path ([`SegBytes::read`]) serves the same bytes through an ordinary read; the test suite
//! runs against both (`TGMS_IO=pread` / `TGMS_IO=mmap`).
#![allow(unsafe_code)]

use std::fs::File;
use std::io::Read;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// How segment files are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoMode {
    /// Memory-map the file (read-only, private).
    Mmap,
    /// Read the file into memory.
    Pread,
}

impl IoMode {
    /// The mode the `TGMS_IO` environment variable names (`pread` or `mmap`), default mmap.
    pub fn from_env() -> IoMode {
        match std::env::var("TGMS_IO").as_deref() {
            Ok("pread") => IoMode::Pread,
            _ => IoMode::Mmap,
        }
    }
}

/// A read-only private mapping of a whole file.
pub(crate) struct Mapping {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `len` are exactly what a successful `mmap` returned and the
        // mapping has not been unmapped before (Drop runs once). No slice borrowed from it
        // outlives `self`: `SegBytes::bytes` ties the slice's lifetime to `&self`.
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
    }
}

/// The bytes of one segment file, mapped or read.
pub(crate) enum SegBytes {
    Map(Mapping),
    Heap(Vec<u8>),
}

impl SegBytes {
    /// Opens `path` and maps it (or reads it, for `Pread`, an empty file, or a platform
    /// that refuses the mapping).
    pub(crate) fn open(path: &Path, mode: IoMode) -> std::io::Result<SegBytes> {
        let mut f = File::open(path)?;
        let len = f.metadata()?.len();
        if mode == IoMode::Pread || len == 0 || len > isize::MAX as u64 {
            let mut v = Vec::with_capacity(len as usize);
            f.read_to_end(&mut v)?;
            return Ok(SegBytes::Heap(v));
        }
        let len = len as usize;
        // SAFETY: we ask the kernel for a fresh read-only (PROT_READ), private (MAP_PRIVATE)
        // mapping of `len` bytes of an open file descriptor, at an address of its choosing;
        // this cannot alias any Rust-owned memory. The result is checked for MAP_FAILED
        // before use. The descriptor may be closed after the call: the mapping keeps its own
        // reference to the file.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                f.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(SegBytes::Map(Mapping { ptr, len }))
    }

    /// Reads `path` into memory (the pread path).
    pub(crate) fn read(path: &Path) -> std::io::Result<SegBytes> {
        SegBytes::open(path, IoMode::Pread)
    }

    /// The file's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            SegBytes::Heap(v) => v,
            // SAFETY: `ptr` is the start of a live PROT_READ mapping of exactly `len` bytes
            // (created in `open`, unmapped only in Drop, which cannot run while `&self` is
            // borrowed), so it is valid for reads of `len` bytes and properly aligned for
            // `u8`. Nothing writes through the mapping (it is read-only and private). The
            // file behind it is a sealed segment: tgms never writes to, truncates or renames
            // an existing segment file, and deleting it (garbage collection) leaves existing
            // mappings intact. A file truncated by a foreign process would fault on access;
            // `format-spec.md` §13 states that assumption about the medium.
            SegBytes::Map(m) => unsafe { std::slice::from_raw_parts(m.ptr as *const u8, m.len) },
        }
    }
}
