//! `temporal_reachability` (O4, `operators.md` §12, D-O1): time-respecting reachability from
//! `src` inside a window — earliest arrivals forward, latest departures backward (a genuine
//! backward search), or both. The candidate edges of the window are loaded once and searched
//! by [`crate::kernels::reach`]; with `delta_max_wait` the exact multi-label search runs under
//! the §7.5 budget of 500,000 edge examinations.

use super::edge_pred::{self, EdgePred};
use super::tgraph::{exceeded, windowed_edges, Graph, SpanGraph, WORK_BUDGET};
use super::validate_window;
use crate::args::Args;
use crate::cost::Estimate;
use crate::error::OpError;
use crate::json::set_digest_by;
use crate::kernels::reach::{reachability, Direction, ReachIndex};
use crate::kernels::Span;
use crate::output::{Cell, CellSink, Output};
use crate::registry::{common, frag, ArgDecl, Ctx, OpSpec, Outputs, RowKey};
use serde_json::{json, Value};
use tgms_engine::{canon, Stats};

const MANUAL: &str = "Time-respecting reachability from `src` inside `window` (edges must be traversed in non-decreasing time; an edge valid over an interval can be used at any instant of it). `direction: \"out\"` → who `src` can reach and the earliest arrival; `\"in\"` → who can reach `src` and the latest time they can leave; `\"both\"` → union. `delta_max_wait` caps the wait at intermediate nodes. For counts read `rows_total` (exact even when the page is cut) and keep `limit` small. Example: `{\"src\": {\"$ref\": \"s1.rows[0].uid\"}, \"window\": {\"t_a\": 1700000000000000, \"t_b\": 1700604800000000}, \"limit\": 1}` → `rows_total`. Edge predicates: `prop_filter` (`{prop, cmp, value}` as in `aggregate_events`; events whose property is absent or of another type are excluded and counted in `prop_coercion`) and `self_loops` (`exclude` or `only`) hide the events they reject from the pattern.";

const SUGGESTIONS: &[&str] = &["narrow the window", "drop or loosen delta_max_wait"];

/// The registry entry.
pub fn spec() -> OpSpec {
    OpSpec {
        name: "temporal_reachability",
        manual: MANUAL,
        args: vec![
            ArgDecl::req("src", frag::uid()).uids(&[""]),
            ArgDecl::req("window", frag::window()),
            common::as_of_tt(),
            ArgDecl::opt(
                "delta_max_wait",
                frag::duration(true, "max wait at an intermediate node"),
                Value::Null,
            ),
            ArgDecl::opt(
                "direction",
                json!({"type": "string", "enum": ["out", "in", "both"]}),
                json!("out"),
            ),
            common::limit(),
            common::cursor(),
        ]
        .into_iter()
        .chain(edge_pred::pattern_args())
        .collect(),
        validators: vec![validate_window, edge_pred::validate_prop_filter],
        cost: Some(cost),
        // Calibrated (issue 26; spec value 170): whole-span reachability over the 10M
        // generated store (9 · 10M units) answers in 1.3–1.4 s in a fresh process on the
        // bench VM since the index builds only what its search reads, about 15 ms per
        // million units; 20 keeps a margin (estimate 1,800 ms; 18,000 ms over 10^8 events,
        // still refused). See docs/paging.md.
        coeff: 20.0,
        outputs: Outputs::default()
            .rows(
                "obj{uid: uid, earliest_arrival: int|null, latest_departure: int|null}",
                RowKey::Field("uid"),
            )
            .field("prop_coercion", "obj{*}")
            .conditional(&["prop_coercion"])
            .build(),
        kernel,
    }
}

/// §12: `rows = int(n_edge_versions * wf)`, `expansions = 8 * rows`.
fn cost(args: &Args, stats: &Stats) -> Estimate {
    let rows = windowed_edges(args, stats);
    edge_pred::priced(Estimate::new(rows, rows.saturating_mul(8)), args, rows)
}

fn kernel(ctx: &Ctx<'_>, args: &Args, out: &mut Output) -> Result<(), OpError> {
    let src = args.str("src")?;
    if !ctx.snap.has_uid(src) {
        return Err(OpError::unknown_uid(src));
    }
    let (t_a, t_b) = args
        .window("window")?
        .ok_or_else(|| OpError::internal("window missing"))?;
    let dir = match args.str("direction")? {
        "in" => Direction::In,
        "both" => Direction::Both,
        _ => Direction::Out,
    };
    let max_wait = args.get("delta_max_wait").and_then(Value::as_i64);
    let pred = EdgePred::parse(args)?;
    let window = Some((t_a, t_b));
    // Without a predicate no version is read: the spans are enough (the kernel orders
    // edges itself and never by eid).
    let (g, coerced) = match &pred {
        None => (SpanGraph::load(ctx.snap, window, args.as_of_tt()), 0),
        Some(p) => {
            let (g, c) = Graph::load_where(ctx.snap, window, args.as_of_tt(), Some(p))?;
            (
                SpanGraph {
                    uids: g.uids,
                    edges: g.edges.iter().map(Span::from).collect(),
                },
                c,
            )
        }
    };
    // (node, earliest arrival, latest departure) in the §12 row order of `dir`.
    let found: Vec<(u32, Option<i64>, Option<i64>)> = match g.id(src) {
        None => Vec::new(),
        Some(s) => {
            let ix = ReachIndex::new(&g.edges, g.n(), t_a, t_b);
            let budget = max_wait.map(|_| WORK_BUDGET);
            let r = reachability(&ix, s, dir, max_wait, budget)
                .map_err(|e| exceeded("temporal_reachability", WORK_BUDGET, e, SUGGESTIONS))?;
            match dir {
                Direction::Out => r.forward.iter().map(|&(v, a)| (v, Some(a), None)).collect(),
                Direction::In => r
                    .backward
                    .iter()
                    .map(|&(v, d)| (v, None, Some(d)))
                    .collect(),
                Direction::Both => r.both_rows(),
            }
        }
    };
    // The rows own their uids, so a paged call keeps them unrendered from its first page on
    // (only the page is rendered) and every later page is a read.
    let digest = || {
        set_digest_by(&found, |&(v, _, _), s| {
            canon::write_str(s, g.uids[v as usize])
        })
    };
    let rows = ReachRows::new(dir, &found, |v| g.uids[v as usize]);
    let (total, bytes) = (found.len(), rows.bytes());
    out.paged_cells_owned(
        "rows",
        total,
        digest,
        move |i, sink| rows.row(i, sink),
        bytes,
    )?;
    if let Some(p) = &pred {
        p.report(out, coerced);
    }
    Ok(())
}

/// A result's rows, owning what they show: each reached node's uid (one text buffer) and its
/// earliest arrival and latest departure, in row order.
struct ReachRows {
    dir: Direction,
    text: String,
    /// End of row `i`'s uid in `text` (its start is the previous row's end).
    ends: Vec<usize>,
    times: Vec<(Option<i64>, Option<i64>)>,
}

impl ReachRows {
    fn new<'a>(
        dir: Direction,
        found: &[(u32, Option<i64>, Option<i64>)],
        uid: impl Fn(u32) -> &'a str,
    ) -> ReachRows {
        let mut text = String::new();
        let mut ends = Vec::with_capacity(found.len());
        for &(v, _, _) in found {
            text.push_str(uid(v));
            ends.push(text.len());
        }
        ReachRows {
            dir,
            text,
            ends,
            times: found.iter().map(|&(_, a, d)| (a, d)).collect(),
        }
    }

    /// An estimate of the heap bytes held.
    fn bytes(&self) -> usize {
        self.text.len()
            + self.ends.len() * std::mem::size_of::<usize>()
            + self.times.len() * std::mem::size_of::<(Option<i64>, Option<i64>)>()
    }

    /// Row `i`'s members in key byte order: `{earliest_arrival, latest_departure, uid}` of
    /// §12, the time of a direction not searched left out.
    fn row(&self, i: usize, sink: &mut CellSink<'_>) {
        let (a, d) = self.times[i];
        if self.dir != Direction::In {
            sink("earliest_arrival", a.map_or(Cell::Null, Cell::Int));
        }
        if self.dir != Direction::Out {
            sink("latest_departure", d.map_or(Cell::Null, Cell::Int));
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        sink("uid", Cell::Str(&self.text[start..self.ends[i]]));
    }
}
