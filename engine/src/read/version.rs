//! Version views: [`Version`], [`NodeVersion`], [`EdgeVersion`] — a row of a source read
//! field by field — and their canonical stored-row lines (the store digest's).

use super::*;

/// A node or an edge version.
#[derive(Clone, Copy)]
pub enum Version<'a> {
    /// A version of a node: its label, props, both intervals and audit fields.
    Node(NodeVersion<'a>),
    /// A version of an edge: its identity, props, both intervals and audit fields.
    Edge(EdgeVersion<'a>),
}

impl Version<'_> {
    pub(super) fn row(&self) -> Row {
        match self {
            Version::Node(n) => n.row(),
            Version::Edge(e) => e.row(),
        }
    }

    /// The row's canonical stored-row object (the digest's row line without `\n`).
    pub fn to_json(&self) -> serde_json::Value {
        let mut s = String::new();
        match self {
            Version::Node(n) => n.write_line(&mut s),
            Version::Edge(e) => e.write_line(&mut s),
        }
        canon::parse(s.trim_end()).unwrap_or(serde_json::Value::Null)
    }
}

/// Fields every version shares.
macro_rules! common_fields {
    ($t:ident, $k:expr) => {
        impl<'a> $t<'a> {
            #[inline]
            fn row(&self) -> Row {
                self.src.row($k, self.idx)
            }
            /// Start of the valid interval.
            #[inline]
            pub fn vt_s(&self) -> i64 {
                self.src.row_vt($k, self.idx).0
            }
            /// End of the valid interval.
            #[inline]
            pub fn vt_e(&self) -> i64 {
                self.src.row_vt($k, self.idx).1
            }
            /// Start of the transaction interval.
            #[inline]
            pub fn tt_s(&self) -> i64 {
                self.src.row_tt_s($k, self.idx)
            }
            /// End of the transaction interval as stored (uncensored).
            #[inline]
            pub fn tt_e(&self) -> i64 {
                self.src.row_close($k, self.idx).0
            }
            /// `tt_s − vt_s`.
            #[inline]
            pub fn ingestion_lag_us(&self) -> i64 {
                self.tt_s() - self.vt_s()
            }
            /// Canonical JSON text of `props`.
            #[inline]
            pub fn props(&self) -> &'a str {
                self.src.string(self.src.row_content($k, self.idx).props)
            }
            /// Provenance label.
            #[inline]
            pub fn source(&self) -> &'a str {
                self.src.string(self.src.row_content($k, self.idx).source)
            }
            /// Canonical JSON text of `provenance_ref`.
            #[inline]
            pub fn provenance_ref(&self) -> &'a str {
                self.src
                    .string(self.src.row_content($k, self.idx).provenance)
            }
            /// Kind of the op that wrote the row.
            #[inline]
            pub fn origin(&self) -> Origin {
                self.src.row_origin($k, self.idx)
            }
            /// Reason of the op that wrote the row.
            #[inline]
            pub fn reason(&self) -> Option<&'a str> {
                let r = self.src.row_reason($k, self.idx);
                (r != NONE).then(|| self.src.string(r))
            }
            /// Kind of the op that closed the row (uncensored).
            #[inline]
            pub fn closed_by(&self) -> Option<Origin> {
                self.src.row_close($k, self.idx).1
            }
            /// Reason of the op that closed the row (uncensored).
            #[inline]
            pub fn close_reason(&self) -> Option<&'a str> {
                let r = self.src.row_close($k, self.idx).2;
                (r != NONE).then(|| self.src.string(r))
            }
        }
    };
}

/// A node version view.
#[derive(Clone, Copy)]
pub struct NodeVersion<'a> {
    pub(super) src: Src<'a>,
    pub(super) idx: u32,
}

/// An edge version view.
#[derive(Clone, Copy)]
pub struct EdgeVersion<'a> {
    pub(super) src: Src<'a>,
    pub(super) idx: u32,
}

common_fields!(NodeVersion, Table::Nodes);
common_fields!(EdgeVersion, Table::Edges);

pub(super) fn opt_str(s: &mut String, v: Option<&str>) {
    match v {
        None => s.push_str("null"),
        Some(x) => canon::write_str(s, x),
    }
}

pub(super) fn opt_id_str(s: &mut String, src: Src<'_>, id: u32) {
    opt_str(s, (id != NONE).then(|| src.string(id)));
}

/// The row line's keys before the kind-specific ones: `close_reason`, `closed_by`.
pub(super) fn write_head(s: &mut String, src: Src<'_>, r: &Row) {
    s.push_str("{\"close_reason\":");
    opt_id_str(s, src, r.close_reason);
    s.push_str(",\"closed_by\":");
    opt_str(s, r.closed_by.map(Origin::as_str));
}

/// The shared keys `origin`, `props`, `provenance_ref`, `reason`.
pub(super) fn write_body(s: &mut String, src: Src<'_>, r: &Row, c: &Content) {
    s.push_str(",\"origin\":");
    canon::write_str(s, r.origin.as_str());
    s.push_str(",\"props\":");
    s.push_str(src.string(c.props));
    s.push_str(",\"provenance_ref\":");
    s.push_str(src.string(c.provenance));
    s.push_str(",\"reason\":");
    opt_id_str(s, src, r.reason);
}

pub(super) fn int(s: &mut String, k: &str, v: i64) {
    s.push_str(k);
    s.push_str(itoa::Buffer::new().format(v));
}

impl<'a> NodeVersion<'a> {
    /// The node's uid.
    #[inline]
    pub fn uid(&self) -> &'a str {
        self.src.uid(self.uid_id())
    }
    /// The node's label.
    #[inline]
    pub fn label(&self) -> &'a str {
        self.src
            .string(self.src.row_content(Table::Nodes, self.idx).label)
    }
    /// `vid(uid, tt_s, vt_s)`.
    pub fn vid(&self) -> String {
        ident::vid(self.uid(), self.tt_s(), self.vt_s())
    }

    /// Appends the canonical row line (with `\n`) of `data-model.md` §10.
    pub fn write_line(&self, s: &mut String) {
        // The row is read once (a mapped row is decoded from several columns).
        let (src, r) = (self.src, self.row());
        let c = src.content(r.content);
        let uid = src.uid(r.ident);
        write_head(s, src, &r);
        s.push_str(",\"kind\":\"node\",\"label\":");
        canon::write_str(s, src.string(c.label));
        write_body(s, src, &r, &c);
        s.push_str(",\"source\":");
        canon::write_str(s, src.string(c.source));
        int(s, ",\"tt_e\":", r.tt_e);
        int(s, ",\"tt_s\":", r.tt_s);
        s.push_str(",\"uid\":");
        canon::write_str(s, uid);
        s.push_str(",\"vid\":\"");
        s.push_str(&ident::vid(uid, r.tt_s, r.vt_s));
        int(s, "\",\"vt_e\":", r.vt_e);
        int(s, ",\"vt_s\":", r.vt_s);
        s.push_str("}\n");
    }
}

impl<'a> EdgeVersion<'a> {
    pub(super) fn ident(&self) -> IdentRec {
        self.src.ident(self.ident_id())
    }
    /// Snapshot-local interned ids of the source uid, destination uid and rel_type: within
    /// one snapshot, equal ids ⇔ equal strings (uids and rel_types are separate id spaces).
    /// For grouping and set membership without hashing strings; never persisted or compared
    /// across snapshots.
    #[inline]
    pub fn src_id(&self) -> u32 {
        self.src.ident_part(self.ident_id(), IdentPart::Src)
    }
    /// See [`EdgeVersion::src_id`].
    #[inline]
    pub fn dst_id(&self) -> u32 {
        self.src.ident_part(self.ident_id(), IdentPart::Dst)
    }
    /// See [`EdgeVersion::src_id`].
    #[inline]
    pub fn rel_id(&self) -> u32 {
        self.src.ident_part(self.ident_id(), IdentPart::Rel)
    }
    /// Source uid.
    #[inline]
    pub fn src(&self) -> &'a str {
        self.src.uid(self.src_id())
    }
    /// Destination uid.
    #[inline]
    pub fn dst(&self) -> &'a str {
        self.src.uid(self.dst_id())
    }
    /// Relationship type.
    #[inline]
    pub fn rel_type(&self) -> &'a str {
        self.src.string(self.rel_id())
    }
    /// Discriminator.
    pub fn disc(&self) -> String {
        self.src.disc_text(self.ident().disc)
    }
    /// Snapshot-local interned id of the edge identity (see [`EdgeVersion::src_id`]):
    /// equal ids ⇔ same `(src, dst, rel_type, disc)`.
    #[inline]
    pub fn ident_id(&self) -> u32 {
        self.src.row_ident(Table::Edges, self.idx)
    }
    /// The 12 eid bytes (the hex of [`EdgeVersion::eid`] orders as these bytes do).
    #[inline]
    pub fn eid_bytes(&self) -> Id12 {
        self.src.eid(self.ident_id())
    }
    /// The 24-hex eid.
    pub fn eid(&self) -> String {
        canon::hex(&self.src.eid(self.ident_id()))
    }
    /// `vid(eid, tt_s, vt_s)`.
    pub fn vid(&self) -> String {
        ident::vid(&self.eid(), self.tt_s(), self.vt_s())
    }

    /// Appends the canonical row line (with `\n`) of `data-model.md` §10.
    pub fn write_line(&self, s: &mut String) {
        // The row and identity are read once (a mapped row is decoded from several columns).
        let (src, r) = (self.src, self.row());
        let id = src.ident(r.ident);
        write_edge_line(s, src, &r, &id, &src.eid(r.ident));
    }
}

/// [`EdgeVersion::write_line`] of edge row `r` of identity `id`, whose eid is `eid` (the
/// store digest reads rows and identities in its own order and has the eids).
pub(super) fn write_edge_line(s: &mut String, src: Src<'_>, r: &Row, id: &IdentRec, eid: &Id12) {
    let c = src.content(r.content);
    let eid = canon::hex(eid);
    write_head(s, src, r);
    s.push_str(",\"disc\":");
    match id.disc {
        // `"#k"` needs no escape.
        Disc::Ordinal(k) => {
            s.push_str("\"#");
            s.push_str(itoa::Buffer::new().format(k));
            s.push('"');
        }
        Disc::Str(_) => canon::write_str(s, &src.disc_text(id.disc)),
    }
    s.push_str(",\"dst\":");
    canon::write_str(s, src.uid(id.dst));
    s.push_str(",\"eid\":\"");
    s.push_str(&eid);
    s.push_str("\",\"kind\":\"edge\"");
    write_body(s, src, r, &c);
    s.push_str(",\"rel_type\":");
    canon::write_str(s, src.string(id.rel));
    s.push_str(",\"source\":");
    canon::write_str(s, src.string(c.source));
    s.push_str(",\"src\":");
    canon::write_str(s, src.uid(id.src));
    int(s, ",\"tt_e\":", r.tt_e);
    int(s, ",\"tt_s\":", r.tt_s);
    s.push_str(",\"vid\":\"");
    s.push_str(&ident::vid(&eid, r.tt_s, r.vt_s));
    int(s, "\",\"vt_e\":", r.vt_e);
    int(s, ",\"vt_s\":", r.vt_s);
    s.push_str("}\n");
}

impl NodeVersion<'_> {
    /// The snapshot-local interned id of the version's uid (see [`Snapshot::uid_id`]).
    #[inline]
    pub fn uid_id(&self) -> u32 {
        self.src.row_ident(Table::Nodes, self.idx)
    }
}
