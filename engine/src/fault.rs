//! Crash and I/O-error injection for tests: every durability point of the engine (an
//! `fsync` / `fdatasync` of a file or of the store directory) first calls [`sync_point`],
//! and every append to the write-ahead log first calls [`write_point`]; each runs the hook
//! installed on the current thread, if any. A hook can snapshot the files as they
//! are at that instant (a crash image) and fail the sync, which poisons the handle. With no
//! hook installed this is one thread-local check.

use std::cell::RefCell;
use std::path::Path;

/// A hook called with the path about to be synced.
pub type SyncHook = Box<dyn FnMut(&Path) -> std::io::Result<()>>;

/// A hook called with the path and the bytes about to be written; an error fails the write
/// before any byte reaches the file.
pub type WriteHook = Box<dyn FnMut(&Path, &[u8]) -> std::io::Result<()>>;

thread_local! {
    static HOOK: RefCell<Option<SyncHook>> = const { RefCell::new(None) };
    static WRITE_HOOK: RefCell<Option<WriteHook>> = const { RefCell::new(None) };
}

/// Installs (or with `None` removes) the write hook of the current thread.
pub fn set_write_hook(hook: Option<WriteHook>) {
    WRITE_HOOK.with(|h| *h.borrow_mut() = hook);
}

/// Called before every append to the log; an error from the hook is the write's error.
pub(crate) fn write_point(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    WRITE_HOOK.with(|h| match h.borrow_mut().as_mut() {
        Some(f) => f(path, bytes),
        None => Ok(()),
    })
}

/// Installs (or with `None` removes) the sync hook of the current thread.
pub fn set_sync_hook(hook: Option<SyncHook>) {
    HOOK.with(|h| *h.borrow_mut() = hook);
}

/// Called before every fsync / fdatasync; an error from the hook is the sync's error.
pub(crate) fn sync_point(path: &Path) -> std::io::Result<()> {
    HOOK.with(|h| match h.borrow_mut().as_mut() {
        Some(f) => f(path),
        None => Ok(()),
    })
}
