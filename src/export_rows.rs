//! `tgms export-rows STORE OUT.csv` (`spec/agent-surface.md` §11.2): every stored row
//! (believed and closed) in store-digest order, one line per version, columns
//! `kind, vid, uid, label, eid, src, dst, rel_type, disc, vt_s, vt_e, tt_s, tt_e, props,
//! source, provenance_ref, origin, reason, closed_by, close_reason`. CSV has a header line, an
//! empty unquoted field for null and `""` for the empty string; `props` and `provenance_ref`
//! are canonical JSON text. Parquet output is not in this build (no columnar writer
//! dependency yet): `OUT.parquet` is refused.

use std::io::Write;
use tgms_engine::Store;

/// The column names, in order.
pub const COLUMNS: [&str; 20] = [
    "kind",
    "vid",
    "uid",
    "label",
    "eid",
    "src",
    "dst",
    "rel_type",
    "disc",
    "vt_s",
    "vt_e",
    "tt_s",
    "tt_e",
    "props",
    "source",
    "provenance_ref",
    "origin",
    "reason",
    "closed_by",
    "close_reason",
];

/// Appends one CSV field: `None` → empty, `""` → `""`, quoted when needed.
fn field(s: &mut String, v: Option<&str>) {
    match v {
        None => {}
        Some("") => s.push_str("\"\""),
        Some(t) if t.contains([',', '"', '\n', '\r']) || t.starts_with(' ') || t.ends_with(' ') => {
            s.push('"');
            s.push_str(&t.replace('"', "\"\""));
            s.push('"');
        }
        Some(t) => s.push_str(t),
    }
}

fn line(s: &mut String, cells: &[Option<&str>]) {
    for (i, c) in cells.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        field(s, *c);
    }
    s.push('\n');
}

/// Writes the CSV of every stored row; returns `(node rows, edge rows)`.
pub fn write_csv(store: &Store, out: &mut dyn Write) -> std::io::Result<(u64, u64)> {
    let snap = store.snapshot();
    let mut s = String::new();
    line(&mut s, &COLUMNS.map(Some));
    out.write_all(s.as_bytes())?;
    let (mut nn, mut ne) = (0u64, 0u64);
    s.clear();
    for n in snap.all_nodes() {
        let (vs, ve, ts, te) = (
            n.vt_s().to_string(),
            n.vt_e().to_string(),
            n.tt_s().to_string(),
            n.tt_e().to_string(),
        );
        let vid = n.vid();
        let closed = n.closed_by().map(|o| o.as_str());
        line(
            &mut s,
            &[
                Some("node"),
                Some(&vid),
                Some(n.uid()),
                Some(n.label()),
                None,
                None,
                None,
                None,
                None,
                Some(&vs),
                Some(&ve),
                Some(&ts),
                Some(&te),
                Some(n.props()),
                Some(n.source()),
                Some(n.provenance_ref()),
                Some(n.origin().as_str()),
                n.reason(),
                closed,
                n.close_reason(),
            ],
        );
        nn += 1;
        if s.len() > 1 << 20 {
            out.write_all(s.as_bytes())?;
            s.clear();
        }
    }
    for e in snap.all_edges() {
        let (vs, ve, ts, te) = (
            e.vt_s().to_string(),
            e.vt_e().to_string(),
            e.tt_s().to_string(),
            e.tt_e().to_string(),
        );
        let (eid, disc) = (e.eid(), e.disc());
        let vid = tgms_engine::ident::vid(&eid, e.tt_s(), e.vt_s());
        let closed = e.closed_by().map(|o| o.as_str());
        line(
            &mut s,
            &[
                Some("edge"),
                Some(&vid),
                None,
                None,
                Some(&eid),
                Some(e.src()),
                Some(e.dst()),
                Some(e.rel_type()),
                Some(&disc),
                Some(&vs),
                Some(&ve),
                Some(&ts),
                Some(&te),
                Some(e.props()),
                Some(e.source()),
                Some(e.provenance_ref()),
                Some(e.origin().as_str()),
                e.reason(),
                closed,
                e.close_reason(),
            ],
        );
        ne += 1;
        if s.len() > 1 << 20 {
            out.write_all(s.as_bytes())?;
            s.clear();
        }
    }
    out.write_all(s.as_bytes())?;
    Ok((nn, ne))
}
