//! Crash and I/O-error injection for tests: every durability point of the engine (an
//! `fsync` / `fdatasync` of a file or of the store directory) first calls `sync_point`,
//! and every write of a store file (a log append, a segment, a manifest record or a fresh
//! manifest) and the manifest's rename first call `write_point`; each runs the hook
//! installed on the current thread, if any (a store operation that does its I/O on a
//! helper thread carries the caller's hooks there: `take_hooks`). A hook can snapshot
//! the files as they are at that instant (a crash image) and fail the sync, which poisons
//! the handle. With no hook installed this is one thread-local check.

use std::cell::RefCell;
use std::path::Path;

/// A hook called with the path about to be synced.
pub type SyncHook = Box<dyn FnMut(&Path) -> std::io::Result<()> + Send>;

/// What a [`WriteHook`] is about to let happen.
#[derive(Clone, Copy, Debug)]
pub enum FaultPoint<'a> {
    /// These bytes are about to be written to the path (`&[]` for a segment image that is
    /// streamed: the point is before its first byte).
    Write(&'a [u8]),
    /// The path (a temporary manifest) is about to be renamed over the manifest.
    Rename,
}

/// A hook called with the path and the operation about to run; an error fails the
/// operation before it touches the file.
pub type WriteHook = Box<dyn FnMut(&Path, FaultPoint<'_>) -> std::io::Result<()> + Send>;

thread_local! {
    static HOOK: RefCell<Option<SyncHook>> = const { RefCell::new(None) };
    static WRITE_HOOK: RefCell<Option<WriteHook>> = const { RefCell::new(None) };
}

/// Both hooks of a thread, taken to another ([`take_hooks`], [`put_hooks`]).
pub(crate) struct Hooks(Option<SyncHook>, Option<WriteHook>);

/// Takes the current thread's hooks (it has none after): a store operation that writes on
/// a helper thread installs them there with [`put_hooks`] and gives them back the same
/// way, so its fault points are the calling thread's.
pub(crate) fn take_hooks() -> Hooks {
    Hooks(
        HOOK.with(|h| h.borrow_mut().take()),
        WRITE_HOOK.with(|h| h.borrow_mut().take()),
    )
}

/// Installs hooks taken by [`take_hooks`] on the current thread.
pub(crate) fn put_hooks(hooks: Hooks) {
    set_sync_hook(hooks.0);
    set_write_hook(hooks.1);
}

/// Installs (or with `None` removes) the write hook of the current thread.
pub fn set_write_hook(hook: Option<WriteHook>) {
    WRITE_HOOK.with(|h| *h.borrow_mut() = hook);
}

/// Called before every write of a store file and the manifest's rename; an error from the
/// hook is the operation's error.
pub(crate) fn write_point(path: &Path, what: FaultPoint<'_>) -> std::io::Result<()> {
    WRITE_HOOK.with(|h| match h.borrow_mut().as_mut() {
        Some(f) => f(path, what),
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
