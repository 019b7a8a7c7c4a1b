//! The page cache: the complete form of a paged result, kept in memory so that the next
//! pages of the same call are read from it instead of re-running the kernel
//! (`docs/paging.md`).
//!
//! An entry is keyed by the operator, the store state the result was computed on
//! ([`tgms_engine::Snapshot::state_token`]: the store handle and its batch count, so a write
//! makes every older entry unreachable) and the SHA-256 digest of the call's canonical
//! arguments without `cursor` (`as_of_tt` and `limit` included: capped lists depend on the
//! limit). It holds the kernel's payload and the complete paged list; a page is cut from it
//! by the same rule as a kernel's page ([`crate::output::page_of`]), so the envelope bytes
//! are the same. The cache is bounded by bytes ([`set_budget_bytes`], default 256 MiB; `0`
//! turns it off; the CLI sets it from `TGMS_PAGE_CACHE_BYTES`, the library reads no
//! environment) and evicts the least recently used entry first.

use crate::args::Args;
use crate::output::{Complete, KeptRows};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The default byte budget of the cache.
pub const DEFAULT_BUDGET_BYTES: usize = 256 << 20;

/// Kernel runs of the call pipeline in this process (a test hook: a page read from the
/// cache does not count).
static KERNEL_RUNS: AtomicU64 = AtomicU64::new(0);

/// Counts one kernel run.
pub(crate) fn count_kernel_run() {
    KERNEL_RUNS.fetch_add(1, Ordering::Relaxed);
}

/// Kernel runs of the call pipeline in this process so far.
pub fn kernel_runs() -> u64 {
    KERNEL_RUNS.load(Ordering::Relaxed)
}

/// The budget set by [`set_budget_bytes`]; `usize::MAX` = none (the default's).
static BUDGET_OVERRIDE: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The byte budget: the one set by [`set_budget_bytes`], else [`DEFAULT_BUDGET_BYTES`].
/// `0` turns the cache off.
pub fn budget_bytes() -> usize {
    match BUDGET_OVERRIDE.load(Ordering::Relaxed) {
        usize::MAX => DEFAULT_BUDGET_BYTES,
        b => b,
    }
}

/// Sets this process's byte budget (`None`: back to [`DEFAULT_BUDGET_BYTES`]). A smaller
/// budget takes effect at the next insertion.
pub fn set_budget_bytes(budget: Option<usize>) {
    BUDGET_OVERRIDE.store(budget.unwrap_or(usize::MAX), Ordering::Relaxed);
}

struct Cache {
    lru: lru::LruCache<String, (Arc<Complete>, usize)>,
    bytes: usize,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| {
        Mutex::new(Cache {
            lru: lru::LruCache::unbounded(),
            bytes: 0,
        })
    })
}

fn lock() -> std::sync::MutexGuard<'static, Cache> {
    // A panic while holding the lock leaves a consistent map (every mutation is one call).
    cache().lock().unwrap_or_else(|p| p.into_inner())
}

/// The cache key of a call of `op` with filled `args` on the state `token`; `None` when the
/// cache is off.
pub fn key(op: &str, args: &Args, token: (u64, u64, u64)) -> Option<String> {
    if budget_bytes() == 0 {
        return None;
    }
    // The digest, not the text: a `compute` call's args may hold a table of a million rows.
    let (h, b, f) = token;
    Some(format!(
        "{op}\u{0}{h}.{b}.{f}\u{0}{}",
        tgms_engine::canon::digest_map_without(&args.0, "cursor")
    ))
}

/// The kept complete result of `key`, marked most recently used.
pub fn get(key: &str) -> Option<Arc<Complete>> {
    lock().lru.get(key).map(|(c, _)| Arc::clone(c))
}

/// True when `key` is kept (without touching its recency).
pub fn contains(key: &str) -> bool {
    lock().lru.contains(key)
}

/// Keeps `c` under `key` unless it is larger than the whole budget; evicts the least
/// recently used entries until the cache fits its budget.
pub fn put(key: String, c: Complete) {
    let budget = budget_bytes();
    let rows = match &c.rows {
        KeptRows::Values(rows) => rows.iter().map(approx_bytes).sum::<usize>(),
        KeptRows::Cells { bytes, .. } => *bytes,
    };
    let size = key.len() + approx_bytes_map(&c.payload) + rows;
    if size > budget {
        return;
    }
    let mut g = lock();
    if let Some((_, old)) = g.lru.put(key, (Arc::new(c), size)) {
        g.bytes -= old;
    }
    g.bytes += size;
    while g.bytes > budget {
        match g.lru.pop_lru() {
            Some((_, (_, n))) => g.bytes -= n,
            None => break,
        }
    }
}

/// Entries and bytes kept now.
pub fn usage() -> (usize, usize) {
    let g = lock();
    (g.lru.len(), g.bytes)
}

/// Forgets every entry.
pub fn clear() {
    let mut g = lock();
    g.lru.clear();
    g.bytes = 0;
}

/// An estimate of the heap bytes of `v` (the cache's unit of account): the text of strings
/// and numbers, plus a fixed overhead per value and per object key.
fn approx_bytes(v: &Value) -> usize {
    const NODE_BYTES: usize = 32;
    NODE_BYTES
        + match v {
            Value::String(s) => s.len(),
            Value::Array(a) => a.iter().map(approx_bytes).sum(),
            Value::Object(m) => approx_bytes_map(m),
            _ => 0,
        }
}

fn approx_bytes_map(m: &serde_json::Map<String, Value>) -> usize {
    m.iter().map(|(k, v)| 32 + k.len() + approx_bytes(v)).sum()
}
