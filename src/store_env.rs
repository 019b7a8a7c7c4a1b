//! The store-open settings the CLI and the servers take from the environment: `TGMS_IO`
//! (`pread` reads segment files into memory instead of mapping them) and `TGMS_OPEN`
//! (`eager` decodes every segment at open). The engine reads no environment; these
//! functions fill its [`Options`] for the commands.

use std::path::Path;
use tgms_engine::format::mmap::IoMode;
use tgms_engine::store::{self, CheckReport};
use tgms_engine::{Options, Result, Store};

/// [`Options`] with `io` and `eager` as `TGMS_IO` and `TGMS_OPEN` say (unset: mmap, lazy).
pub fn options() -> Options {
    Options {
        io: Some(match std::env::var("TGMS_IO").as_deref() {
            Ok("pread") => IoMode::Pread,
            _ => IoMode::Mmap,
        }),
        eager: std::env::var("TGMS_OPEN").as_deref() == Ok("eager"),
        ..Options::default()
    }
}

/// [`Store::open`] with the environment's [`options`].
pub fn open(dir: &Path) -> Result<Store> {
    Store::open_with(dir, options())
}

/// [`Store::open_read_only`] with the environment's [`options`].
pub fn open_read_only(dir: &Path) -> Result<Store> {
    let read_only = true;
    Store::open_with(
        dir,
        Options {
            read_only,
            ..options()
        },
    )
}

/// [`Store::create`] with the environment's [`options`].
pub fn create(dir: &Path) -> Result<Store> {
    Store::create_with(dir, options())
}

/// [`store::check`] whose comparison opens follow the environment's [`options`].
pub fn check(dir: &Path) -> Result<CheckReport> {
    let o = options();
    store::check_with(dir, o.io, o.eager)
}

/// Applies `TGMS_PAGE_CACHE_BYTES` (the byte budget of the page cache, `docs/paging.md`;
/// `0` turns it off) to this process; unset or blank keeps the default. A value that is not
/// a whole number of bytes is refused with a message naming the variable.
pub fn apply_page_cache_budget() -> std::result::Result<(), String> {
    let Some(v) = std::env::var("TGMS_PAGE_CACHE_BYTES")
        .ok()
        .filter(|v| !v.trim().is_empty())
    else {
        return Ok(());
    };
    let bytes = v.trim().parse::<usize>().map_err(|_| {
        format!(
            "TGMS_PAGE_CACHE_BYTES={v} is not a whole number of bytes; give e.g. 268435456 \
             (256 MiB, the default) or 0 to turn the page cache off"
        )
    })?;
    tgms_operators::page_cache::set_budget_bytes(Some(bytes));
    Ok(())
}
