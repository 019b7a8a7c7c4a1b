//! The write rules of `data-model.md` §6 (carving, supersede, same-batch retirement, D-W3
//! endpoint nodes, ingest ordinals), written once over [`Tables`]: the dictionaries, rows and
//! postings a batch reads and appends to, implemented by a store's rows (a base image with
//! its writable delta above it, [`Rows`](crate::rows::Rows), `rows/write.rs`), so the rules
//! read as the data model states them, apart from how rows are stored, and a writer or a
//! reader replaying a log tail need not decode the image. Batch atomicity (the undo of a
//! failed batch) and the statistics are `rows/write.rs`'s.

use crate::error::{Error, Result};
use crate::ident;
use crate::model::{ordinal_of, Content, Disc, Row, Table, NONE};
use crate::op::{AssertEdge, AssertNode, Correct, IngestEvents, Op, Origin, Ref, Retract};
use crate::time::{overlaps, OPEN_END};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

/// What the ops applied since the trace was (re)set did beyond TGMS's rules (§13.3).
#[derive(Default, Debug)]
pub(crate) struct Trace {
    /// One entry per `assert_edge` op applied, in op order: whether the op inserted a node
    /// version for `src` / for `dst` (D-W3).
    pub(crate) created_endpoints: Vec<[bool; 2]>,
    /// Ingest events whose identity had believed versions overlapping the event's interval,
    /// so that the carving rule superseded rows (D-W2).
    pub(crate) carved_events: u64,
}

/// Key of the explicit-identity map: `(src, dst, rel_type, disc)` as ids.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct EdgeKey {
    pub(crate) src: u32,
    pub(crate) dst: u32,
    pub(crate) rel: u32,
    pub(crate) disc: Disc,
}

/// What an op is writing: its kind, reason, and the batch time.
#[derive(Clone, Copy)]
pub(crate) struct Ctx {
    pub(crate) tt: i64,
    pub(crate) kind: Origin,
    pub(crate) reason: u32,
}

impl Ctx {
    /// A believed row this op writes for `ident` over `[s, e)`.
    pub(crate) fn row(self, ident: u32, content: u32, s: i64, e: i64) -> Row {
        Row {
            ident,
            content,
            vt_s: s,
            vt_e: e,
            tt_s: self.tt,
            tt_e: OPEN_END,
            reason: self.reason,
            close_reason: NONE,
            origin: self.kind,
            closed_by: None,
            alive: true,
        }
    }
}

/// Believed rows of one identity (a few at most, by invariant I1).
pub(crate) type Hits = SmallVec<[u32; 4]>;

/// What the write rules read and append to. Ids are the store's dense ids; a row is
/// "believed now" when it is alive and its `tt_e` is open.
pub(crate) trait Tables {
    /// The uid's id, registering it when new.
    fn register(&mut self, uid: &str) -> u32;
    fn uid_id(&self, uid: &str) -> Option<u32>;
    fn uid_name(&self, id: u32) -> &str;
    /// The string's id, interning it when new.
    fn intern(&mut self, s: &str) -> u32;
    fn string_id(&self, s: &str) -> Option<u32>;
    fn string(&self, id: u32) -> &str;
    /// The content's id, adding it when new (contents are not duplicated).
    fn content_id(&mut self, c: Content) -> u32;
    fn content(&self, id: u32) -> Content;
    /// The identity `key` names: through its ordinal slot (default ingest discs) or the
    /// explicit-identity map.
    fn find_ident(&self, key: EdgeKey) -> Option<u32>;
    /// The identity of `key` in the explicit-identity map only.
    fn find_mapped(&self, key: EdgeKey) -> Option<u32>;
    /// A new identity; `mapped` puts it in the explicit-identity map.
    fn new_ident(&mut self, key: EdgeKey, mapped: bool) -> u32;
    /// Records identity `id` for ingest ordinal `k` unless the slot is taken.
    fn set_slot(&mut self, k: u64, id: u32);
    /// Row `r` of `kind`'s table, closure applied.
    fn row(&self, kind: Table, r: u32) -> Row;
    /// Every row of an identity (uid for nodes), ascending.
    fn postings(&self, kind: Table, ident: u32) -> Vec<u32>;
    /// Supersede (§6.2): closes a row of an earlier batch at `cx.tt`, retires one of this
    /// batch.
    fn supersede(&mut self, kind: Table, r: u32, cx: Ctx);
    /// Appends a believed row.
    fn insert(&mut self, kind: Table, ident: u32, content: u32, s: i64, e: i64, cx: Ctx);
    /// The ingest ordinal counter (§6.7).
    fn ordinal(&mut self) -> &mut u64;
    /// The observation trace of export (§13.3), when one is being recorded.
    fn trace(&mut self) -> Option<&mut Trace>;

    /// Currently believed rows of an identity that overlap `[s, e)`, by `vt_s`.
    fn hits(&self, kind: Table, ident: u32, s: i64, e: i64) -> Hits {
        let mut h: SmallVec<[(i64, u32); 4]> = self
            .postings(kind, ident)
            .into_iter()
            .filter_map(|r| {
                let row = self.row(kind, r);
                (row.believed_now() && overlaps(row.vt_s, row.vt_e, s, e)).then_some((row.vt_s, r))
            })
            .collect();
        // Believed rows of one identity are disjoint (I1), so vt_s orders them totally.
        h.sort_unstable();
        h.into_iter().map(|x| x.1).collect()
    }

    /// True when the uid has a believed node version.
    fn has_believed_node(&self, uid: u32) -> bool {
        self.postings(Table::Nodes, uid)
            .into_iter()
            .any(|r| self.row(Table::Nodes, r).believed_now())
    }
}

/// Applies one validated op at `tt`.
pub(crate) fn apply_op<T: Tables>(t: &mut T, tt: i64, op: &Op) -> Result<()> {
    op.validate()?;
    match op {
        Op::AssertNode(o) => assert_node(t, tt, o),
        Op::AssertEdge(o) => assert_edge(t, tt, o),
        Op::Retract(o) => retract(t, tt, o),
        Op::Correct(o) => correct(t, tt, o),
        Op::IngestEvents(o) => ingest(t, tt, o),
        // validate() always fails for raw ops.
        Op::Raw(_) => Err(Error::state("raw op passed validation")),
    }
}

/// Paranoid mode: invariant I1 (believed rows of an identity are disjoint) for `touched`.
pub(crate) fn check_disjoint<T: Tables>(
    t: &T,
    touched: impl IntoIterator<Item = (Table, u32)>,
    eid_hex: impl Fn(u32) -> String,
) -> Result<()> {
    for (kind, ident) in touched {
        let mut iv: Vec<(i64, i64)> = t
            .postings(kind, ident)
            .into_iter()
            .map(|r| t.row(kind, r))
            .filter(|r| r.believed_now())
            .map(|r| (r.vt_s, r.vt_e))
            .collect();
        iv.sort_unstable();
        if iv.windows(2).any(|w| w[0].1 > w[1].0) {
            let shown = match kind {
                Table::Nodes => t.uid_name(ident).to_string(),
                Table::Edges => eid_hex(ident),
            };
            return Err(Error::state(format!("disjointness violated for {shown}")));
        }
    }
    Ok(())
}

fn ctx<T: Tables>(t: &mut T, tt: i64, kind: Origin, reason: Option<&str>) -> Ctx {
    Ctx {
        tt,
        kind,
        reason: reason.map_or(NONE, |s| t.intern(s)),
    }
}

/// The id of the content `(label, props, source, provenance)`, interning each part in that
/// order and adding the content when new.
pub(crate) fn make_content<T: Tables>(
    t: &mut T,
    label: &str,
    props: &str,
    source: &str,
    prov: &str,
) -> u32 {
    let c = Content {
        label: t.intern(label),
        props: t.intern(props),
        source: t.intern(source),
        provenance: t.intern(prov),
    };
    t.content_id(c)
}

fn disc_of<T: Tables>(t: &mut T, s: &str) -> Disc {
    match ordinal_of(s) {
        Some(k) => Disc::Ordinal(k),
        None => Disc::Str(t.intern(s)),
    }
}

/// Finds or creates the identity for an explicit key (assert_edge, explicit disc).
fn ident_for<T: Tables>(t: &mut T, key: EdgeKey) -> u32 {
    match t.find_ident(key) {
        Some(id) => id,
        None => t.new_ident(key, true),
    }
}

/// The assert carving rule (§6.3 steps 2–4): remainders keep the hit's content.
fn carve<T: Tables>(t: &mut T, kind: Table, ident: u32, content: u32, s: i64, e: i64, cx: Ctx) {
    let hits = t.hits(kind, ident, s, e);
    replace(t, kind, ident, &hits, (s, e), cx);
    t.insert(kind, ident, content, s, e, cx);
}

/// Supersedes `hits` and re-inserts, with their contents, the parts of them outside
/// `[s, e)`.
fn replace<T: Tables>(
    t: &mut T,
    kind: Table,
    ident: u32,
    hits: &[u32],
    (s, e): (i64, i64),
    cx: Ctx,
) {
    let mut frags: SmallVec<[(u32, i64, i64); 4]> = SmallVec::new();
    for &h in hits {
        let row = t.row(kind, h);
        for (fs, fe) in crate::time::remainder(row.vt_s, row.vt_e, s, e) {
            frags.push((row.content, fs, fe));
        }
    }
    for &h in hits {
        t.supersede(kind, h, cx);
    }
    for (c, fs, fe) in frags {
        t.insert(kind, ident, c, fs, fe, cx);
    }
}

fn assert_node<T: Tables>(t: &mut T, tt: i64, o: &AssertNode) -> Result<()> {
    let uid = t.register(&o.uid);
    let cx = ctx(t, tt, Origin::Assert, o.audit.reason.as_deref());
    let c = make_content(
        t,
        &o.label,
        &o.props,
        &o.audit.source,
        &o.audit.provenance_ref,
    );
    carve(t, Table::Nodes, uid, c, o.vt_s, o.vt_e, cx);
    Ok(())
}

fn assert_edge<T: Tables>(t: &mut T, tt: i64, o: &AssertEdge) -> Result<()> {
    let key = EdgeKey {
        src: t.register(&o.src),
        dst: t.register(&o.dst),
        rel: t.intern(&o.rel_type),
        disc: disc_of(t, &o.disc),
    };
    let ident = ident_for(t, key);
    let cx = ctx(t, tt, Origin::Assert, o.audit.reason.as_deref());
    let c = make_content(t, "", &o.props, &o.audit.source, &o.audit.provenance_ref);
    carve(t, Table::Edges, ident, c, o.vt_s, o.vt_e, cx);
    // D-W3: endpoints without any believed node version get one.
    let ends = [(key.src, &o.src_label), (key.dst, &o.dst_label)];
    let n = if key.src == key.dst { 1 } else { 2 };
    let mut created = [false; 2];
    for (k, &(uid, label)) in ends[..n].iter().enumerate() {
        if !t.has_believed_node(uid) {
            let nc = make_content(t, label, "{}", &o.audit.source, &o.audit.provenance_ref);
            t.insert(Table::Nodes, uid, nc, o.vt_s, OPEN_END, cx);
            created[k] = true;
        }
    }
    if let Some(tr) = t.trace() {
        tr.created_endpoints.push(created);
    }
    Ok(())
}

/// The identity `(src, dst, rel_type, disc)` names, if it exists, registering nothing.
pub(crate) fn lookup_edge<T: Tables>(
    t: &T,
    src: &str,
    dst: &str,
    rel: &str,
    disc: &str,
) -> Option<u32> {
    t.find_ident(EdgeKey {
        src: t.uid_id(src)?,
        dst: t.uid_id(dst)?,
        rel: t.string_id(rel)?,
        disc: match ordinal_of(disc) {
            Some(k) => Disc::Ordinal(k),
            None => Disc::Str(t.string_id(disc)?),
        },
    })
}

/// Resolves a ref to an existing identity, registering nothing (§6.5: a retract registers
/// no uid). Returns the spec's display identity (uid or eid) too.
fn resolve_ref<T: Tables>(t: &T, r: &Ref) -> (Table, Option<u32>, String) {
    match r {
        Ref::Node { uid } => (Table::Nodes, t.uid_id(uid), uid.clone()),
        Ref::Edge {
            src,
            dst,
            rel_type,
            disc,
        } => {
            let eid = ident::eid(src, dst, rel_type, disc);
            (Table::Edges, lookup_edge(t, src, dst, rel_type, disc), eid)
        }
    }
}

fn kind_name(k: Table) -> &'static str {
    match k {
        Table::Nodes => "node",
        Table::Edges => "edge",
    }
}

fn retract<T: Tables>(t: &mut T, tt: i64, o: &Retract) -> Result<()> {
    let (kind, ident, shown) = resolve_ref(t, &o.target);
    let hits = ident
        .map(|id| t.hits(kind, id, o.t, o.t + 1))
        .unwrap_or_default();
    let Some(id) = ident.filter(|_| !hits.is_empty()) else {
        return Err(Error::not_found(format!(
            "no believed {} version of {shown} valid at {}",
            kind_name(kind),
            o.t
        )));
    };
    let cx = ctx(t, tt, Origin::Retract, o.audit.reason.as_deref());
    for &h in &hits {
        let row = t.row(kind, h);
        t.supersede(kind, h, cx);
        if row.vt_s < o.t {
            t.insert(kind, id, row.content, row.vt_s, o.t, cx);
        }
    }
    Ok(())
}

fn correct<T: Tables>(t: &mut T, tt: i64, o: &Correct) -> Result<()> {
    let (kind, ident, shown) = resolve_ref(t, &o.target);
    let hits = ident
        .map(|id| t.hits(kind, id, o.vt_s, o.vt_e))
        .unwrap_or_default();
    let Some(id) = ident.filter(|_| !hits.is_empty()) else {
        return Err(Error::not_found(format!(
            "no believed {} version of {shown} overlapping [{}, {})",
            kind_name(kind),
            o.vt_s,
            o.vt_e
        )));
    };
    let cx = ctx(t, tt, Origin::Correct, o.audit.reason.as_deref());
    let first = t.row(kind, hits[0]);
    let label = t.string(t.content(first.content).label).to_string();
    let c = make_content(
        t,
        &label,
        &o.props,
        &o.audit.source,
        &o.audit.provenance_ref,
    );
    replace(t, kind, id, &hits, (o.vt_s, o.vt_e), cx);
    t.insert(kind, id, c, o.vt_s, o.vt_e, cx);
    Ok(())
}

fn ingest<T: Tables>(t: &mut T, tt: i64, o: &IngestEvents) -> Result<()> {
    let counter = *t.ordinal();
    if o.ordinal_base != counter {
        return Err(Error::state(format!(
            "ingest ordinal mismatch: record says {}, store is at {counter}",
            o.ordinal_base
        )));
    }
    let cx = ctx(t, tt, Origin::Ingest, None);
    let mut last_props: Option<(&str, u32)> = None;
    let plain = make_content(t, "", "{}", &o.audit.source, &o.audit.provenance_ref);
    let mut first_seen: FxHashMap<u32, i64> = FxHashMap::default();
    for (i, e) in o.events.iter().enumerate() {
        let src = t.register(&e.src);
        let dst = t.register(&e.dst);
        let rel = t.intern(&e.rel_type);
        for (u, at) in [(src, e.vt_s), (dst, e.vt_s)] {
            first_seen
                .entry(u)
                .and_modify(|f| *f = (*f).min(at))
                .or_insert(at);
        }
        let content = match &e.props {
            None => plain,
            Some(p) => match last_props {
                Some((lp, id)) if lp == p.as_str() => id,
                _ => {
                    let id = make_content(t, "", p, &o.audit.source, &o.audit.provenance_ref);
                    last_props = Some((p.as_str(), id));
                    id
                }
            },
        };
        let ident = match &e.disc {
            Some(d) => {
                let disc = disc_of(t, d);
                ident_for(
                    t,
                    EdgeKey {
                        src,
                        dst,
                        rel,
                        disc,
                    },
                )
            }
            None => {
                let k = o.ordinal_base + i as u64;
                let key = EdgeKey {
                    src,
                    dst,
                    rel,
                    disc: Disc::Ordinal(k),
                };
                let (id, new) = match t.find_mapped(key) {
                    Some(id) => (id, false),
                    None => (t.new_ident(key, false), true),
                };
                t.set_slot(k, id);
                if new {
                    // A new identity has no rows: nothing to carve.
                    t.insert(Table::Edges, id, content, e.vt_s, e.end(), cx);
                    continue;
                }
                id
            }
        };
        if t.trace().is_some() && !t.hits(Table::Edges, ident, e.vt_s, e.end()).is_empty() {
            if let Some(tr) = t.trace() {
                tr.carved_events += 1;
            }
        }
        carve(t, Table::Edges, ident, content, e.vt_s, e.end(), cx);
    }
    // New nodes in uid-name order (canonical, whatever the ids); the names are copied once
    // instead of being looked up at every comparison. A node is new when no believed row
    // of its uid exists; inserting one uid's row does not change that of another, so the
    // uids are checked before they are sorted (most of a long load's uids are known).
    let mut names = String::new();
    let mut firsts: Vec<(u32, i64, std::ops::Range<usize>)> = first_seen
        .into_iter()
        .filter(|&(u, _)| !t.has_believed_node(u))
        .map(|(u, at)| {
            let a = names.len();
            names.push_str(t.uid_name(u));
            (u, at, a..names.len())
        })
        .collect();
    firsts.sort_unstable_by(|a, b| names[a.2.clone()].cmp(&names[b.2.clone()]));
    let nc = make_content(
        t,
        &o.node_label,
        "{}",
        &o.audit.source,
        &o.audit.provenance_ref,
    );
    for (uid, at, _) in firsts {
        t.insert(Table::Nodes, uid, nc, at, OPEN_END, cx);
    }
    *t.ordinal() = counter + o.events.len() as u64;
    Ok(())
}
