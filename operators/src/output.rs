//! Payload construction with the framework's list rules (`operators.md` §6): cursor
//! pagination of `rows`, capped secondary lists, totals and completeness certificates. The
//! list's row key and certificate field names come from the registry declaration, so a
//! kernel never spells them.

use crate::args::Args;
use crate::error::OpError;
use crate::json::set_digest;
use crate::registry::{Cut, OpSpec};
use serde_json::{Map, Value};

/// The payload being built by a kernel.
pub struct Output {
    spec: &'static OpSpec,
    limit: usize,
    offset: Result<usize, OpError>,
    map: Map<String, Value>,
}

impl Output {
    /// An empty payload for one call of `spec`.
    pub fn new(spec: &'static OpSpec, args: &Args) -> Self {
        Output {
            spec,
            limit: args.limit(),
            offset: args.offset(),
            map: Map::new(),
        }
    }

    /// Sets a plain field.
    pub fn set(&mut self, name: &str, v: Value) {
        self.map.insert(name.to_string(), v);
    }

    fn decl(&self, name: &str, cut: Cut) -> Result<&'static crate::registry::ListDecl, OpError> {
        self.spec
            .output(name)
            .and_then(|o| o.list.as_ref())
            .filter(|l| l.cut == cut)
            .ok_or_else(|| {
                OpError::internal(format!(
                    "{}: no {cut:?} list '{name}' declared",
                    self.spec.name
                ))
            })
    }

    /// Pages the complete ordered list `rows` (§6.1): sets `rows`, `rows_total`,
    /// `truncated`, `cursor` and `set_digest`. Returns whether the page is truncated.
    pub fn paged(&mut self, name: &str, rows: Vec<Value>) -> Result<bool, OpError> {
        let decl = self.decl(name, Cut::Paged)?;
        let keys: Vec<Value> = rows.iter().map(|r| decl.key.of(r)).collect();
        self.paged_keyed(name, rows, keys)
    }

    /// [`Output::paged`] with the row keys given by the kernel (one per row, in row order),
    /// for lists whose key depends on the call ([`crate::registry::RowKey::Computed`]).
    pub fn paged_keyed(
        &mut self,
        name: &str,
        rows: Vec<Value>,
        keys: Vec<Value>,
    ) -> Result<bool, OpError> {
        if keys.len() != rows.len() {
            return Err(OpError::internal(format!(
                "{name}: one key per row expected"
            )));
        }
        self.paged_lazy(name, keys, |page| {
            Ok(rows.into_iter().skip(page.start).take(page.len()).collect())
        })
    }

    /// [`Output::paged`] for long lists whose rows are costly to build: `keys` are the
    /// declared row keys of the complete ordered list (one per row, in row order) and
    /// `page(range)` builds the rows at positions `range` (the page, possibly empty).
    pub fn paged_lazy(
        &mut self,
        name: &str,
        keys: Vec<Value>,
        page: impl FnOnce(std::ops::Range<usize>) -> Result<Vec<Value>, OpError>,
    ) -> Result<bool, OpError> {
        let decl = self.decl(name, Cut::Paged)?;
        let offset = self.offset.clone()?;
        let total = keys.len();
        let digest = set_digest(&keys);
        let range = offset.min(total)..offset.saturating_add(self.limit).min(total);
        let want = range.len();
        let page = page(range)?;
        if page.len() != want {
            return Err(OpError::internal(format!(
                "{name}: {want} page rows expected, got {}",
                page.len()
            )));
        }
        let end = offset.saturating_add(page.len());
        let truncated = end < total;
        self.set(name, Value::Array(page));
        self.set(&decl.total_field, Value::from(total));
        self.set("truncated", Value::Bool(truncated));
        self.set(
            "cursor",
            if truncated {
                Value::from(end.to_string())
            } else {
                Value::Null
            },
        );
        self.set(&decl.digest_field, Value::from(digest));
        Ok(truncated)
    }

    /// Caps the complete ordered list at `limit` (§6.2): sets the list, its total, its
    /// `_truncated` flag when declared, and its certificate. Returns `total > limit`.
    pub fn capped(&mut self, name: &str, rows: Vec<Value>) -> Result<bool, OpError> {
        let decl = self.decl(name, Cut::Capped)?;
        let total = rows.len();
        let digest = set_digest(&rows.iter().map(|r| decl.key.of(r)).collect::<Vec<_>>());
        self.capped_certified(name, rows, total, digest)
    }

    /// [`Output::capped`] for kernels that render only the rows that survive the cap:
    /// `head` holds the list's first `min(total, limit)` rows (more are dropped), `total`
    /// is the length of the complete list and `digest` its certificate (e.g. from
    /// [`crate::json::set_digest_by`] over every row's key).
    pub fn capped_certified(
        &mut self,
        name: &str,
        head: Vec<Value>,
        total: usize,
        digest: String,
    ) -> Result<bool, OpError> {
        let decl = self.decl(name, Cut::Capped)?;
        if head.len() < total.min(self.limit) {
            return Err(OpError::internal(format!(
                "{name}: {} rows rendered, {} needed",
                head.len(),
                total.min(self.limit)
            )));
        }
        let cut = total > self.limit;
        let head: Vec<Value> = head.into_iter().take(self.limit).collect();
        self.set(name, Value::Array(head));
        self.set(&decl.total_field, Value::from(total));
        if let Some(f) = &decl.truncated_field {
            self.set(f, Value::Bool(cut));
        }
        self.set(&decl.digest_field, Value::from(digest));
        Ok(cut)
    }

    /// The row cap of the call (`limit`).
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The finished payload.
    pub fn into_payload(self) -> Map<String, Value> {
        self.map
    }
}
