//! TGMS's frozen CollegeMsg replay log (the spec's `evaluation.md` §7.2), rebuilt byte for byte
//! from `CollegeMsg.txt` (`tgms bench collegemsg-log OUT.jsonl`).
//!
//! The log is a TGMS JSONL event log (`data-model.md` §13.1): the header, two
//! `ingest_events` batches of the file's events in TGMS shape (50,000 and 9,835 events) and
//! eight one-op `correct` batches (the correction probes), each line canonical JSON with its
//! `batch_id`. Its SHA-256 is [`SHA256`] and its length [`BYTES`].

use serde_json::{json, Value};
use std::io::{self, Write};
use tgms_engine::canon;
use tgms_engine::eventlog::HEADER;
use tgms_engine::op::{batch_id, INGEST_CHUNK};

/// SHA-256 of the frozen log file.
pub const SHA256: &str = "e1d4f611ab5f60c552e0f22b0c36603eb060122a11deb465c656c20ab0ccc037";
/// Length of the frozen log file in bytes.
pub const BYTES: u64 = 4_144_590;

/// `tt` of the two `ingest_events` batches (events 0–49,999, then 50,000–59,834).
pub const INGEST_TTS: [i64; 2] = [1_783_612_865_737_377, 1_783_612_869_254_066];

/// The eight correction probes: `(tt, uid, vt_s, vt_e)`.
pub const CORRECTIONS: [(i64, &str, i64, i64); 8] = [
    (
        1_783_612_870_858_704,
        "n772",
        1_089_694_877_332_557,
        1_091_368_495_432_557,
    ),
    (
        1_783_612_870_871_858,
        "n308",
        1_084_810_051_577_502,
        1_086_483_669_677_502,
    ),
    (
        1_783_612_870_881_315,
        "n368",
        1_085_595_669_398_000,
        1_087_269_287_498_000,
    ),
    (
        1_783_612_870_890_759,
        "n1624",
        1_086_543_560_127_440,
        1_088_217_178_227_440,
    ),
    (
        1_783_612_870_900_683,
        "n605",
        1_083_974_910_274_599,
        1_085_648_528_374_599,
    ),
    (
        1_783_612_870_909_432,
        "n676",
        1_084_260_716_962_489,
        1_085_934_335_062_489,
    ),
    (
        1_783_612_870_917_653,
        "n27",
        1_084_586_642_484_103,
        1_086_260_260_584_103,
    ),
    (
        1_783_612_870_927_528,
        "n495",
        1_090_548_410_350_631,
        1_092_222_028_450_631,
    ),
];

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// The events of a SNAP temporal edge list (`evaluation.md` §7.1, `snap`): one
/// `src dst seconds` per line; blank lines, `#`/`%` comments and lines whose third field is
/// not an integer (the header `src dst time`) are skipped. Event objects are in TGMS shape
/// `{src: "n"+src, dst: "n"+dst, rel_type: "MSG", vt_s: seconds · 1,000,000}`.
fn snap_events(text: &str) -> io::Result<Vec<Value>> {
    let mut events = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with('%') {
            continue;
        }
        let f: Vec<&str> = t.split_whitespace().collect();
        let Some(secs) = f.get(2).and_then(|s| s.parse::<i64>().ok()) else {
            continue;
        };
        let vt_s = secs
            .checked_mul(1_000_000)
            .ok_or_else(|| invalid(format!("line {}: time {secs} overflows", i + 1)))?;
        events.push(json!({
            "src": format!("n{}", f[0]),
            "dst": format!("n{}", f[1]),
            "rel_type": "MSG",
            "vt_s": vt_s,
        }));
    }
    Ok(events)
}

fn write_record(
    out: &mut dyn Write,
    line: &mut String,
    tt: i64,
    ops: Vec<Value>,
) -> io::Result<()> {
    let id = batch_id(tt, &ops);
    line.clear();
    canon::write_value(line, &json!({"batch_id": id, "ops": ops, "tt": tt}));
    line.push('\n');
    out.write_all(line.as_bytes())
}

/// Writes TGMS's frozen CollegeMsg replay log, rebuilt from the text of `CollegeMsg.txt`,
/// to `out`. Fails with `InvalidData` if the file holds more events than the two frozen
/// ingest batches can carry.
pub fn write_collegemsg_log(snap_text: &str, out: &mut dyn Write) -> io::Result<()> {
    let events = snap_events(snap_text)?;
    if events.len() > INGEST_TTS.len() * INGEST_CHUNK {
        return Err(invalid(format!(
            "{} events do not fit the frozen log's two ingest batches",
            events.len()
        )));
    }
    let mut line = String::with_capacity(1 << 22);
    line.push_str(HEADER);
    line.push('\n');
    out.write_all(line.as_bytes())?;
    for (k, chunk) in events.chunks(INGEST_CHUNK).enumerate() {
        let op = json!({
            "events": chunk,
            "node_label": "Node",
            "offset": k * INGEST_CHUNK,
            "op": "ingest_events",
            "provenance_ref": null,
            "source": "ingest",
        });
        write_record(out, &mut line, INGEST_TTS[k], vec![op])?;
    }
    for (tt, uid, vt_s, vt_e) in CORRECTIONS {
        let op = json!({
            "op": "correct",
            "props": {"note": "correction probe", "revised": true},
            "provenance_ref": null,
            "ref": {"kind": "node", "uid": uid},
            "source": "ingest",
            "vt_e": vt_e,
            "vt_s": vt_s,
        });
        write_record(out, &mut line, tt, vec![op])?;
    }
    out.flush()
}
