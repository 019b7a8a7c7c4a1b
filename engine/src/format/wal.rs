//! The write-ahead log: an append-only file of checksummed binary records
//! (`format-spec.md` §3). A batch record is fsynced before its batch is applied; an outcome
//! record after it says whether the apply succeeded. Recovery truncates a torn final record
//! and refuses to repair damage anywhere before it.

use crate::error::{CorruptionKind, Error, Result};
use crate::format::le::{u16_at, u32_at, Cursor};
use crate::op::{
    AssertEdge, AssertNode, Audit, Correct, Event, EventEnd, IngestEvents, Op, Ref, Retract,
};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// File magic: the first 8 bytes of every log file.
pub const MAGIC: &[u8; 8] = b"TGMSWAL\0";
/// Format major version; a reader refuses other majors.
pub const VERSION_MAJOR: u16 = 1;
/// Format minor version: 1 adds keyed batch records (type 3). A reader of minor 0 reports a
/// keyed record as an unknown record type (it refuses the log instead of misreading it).
pub const VERSION_MINOR: u16 = 1;
/// Bytes of the file header: magic, major, minor, reserved u32.
pub const HEADER_LEN: u64 = 16;
/// Bytes of a record frame before its payload: len, len_crc, payload_crc.
pub const FRAME_LEN: u64 = 12;
/// Largest accepted payload (1 GiB): a larger length is damage, not a record.
pub const MAX_PAYLOAD: u32 = 1 << 30;

/// Record type tag: a batch.
pub const REC_BATCH: u8 = 1;
/// Record type tag: the outcome of the preceding batch.
pub const REC_OUTCOME: u8 = 2;
/// Record type tag: a batch with a client-supplied idempotency key (log minor 1).
pub const REC_KEYED_BATCH: u8 = 3;
/// Longest accepted batch key, in bytes.
pub const MAX_BATCH_KEY: usize = 1024;

/// One decoded log record.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// A committed batch: its ops as written.
    Batch {
        /// The batch's transaction time (µs).
        tt: i64,
        /// The ops, in order.
        ops: Vec<Op>,
        /// The batch's idempotency key (a keyed record, type 3), if it has one.
        key: Option<String>,
    },
    /// Whether the preceding batch of the same `tt` applied.
    Outcome {
        /// The transaction time (µs) of the batch it is about.
        tt: i64,
        /// The batch applied; `false`: it failed and was rolled back.
        ok: bool,
        /// The error code of a failed batch (`E_INVALID_ARG`, ...); empty when `ok`.
        code: String,
        /// The error message of a failed batch; empty when `ok`.
        message: String,
    },
}

/// The 16-byte file header.
pub fn header_bytes() -> [u8; 16] {
    let mut h = [0u8; 16];
    h[..8].copy_from_slice(MAGIC);
    h[8..10].copy_from_slice(&VERSION_MAJOR.to_le_bytes());
    h[10..12].copy_from_slice(&VERSION_MINOR.to_le_bytes());
    h
}

/// Frames a payload: `len u32 | crc32(len) u32 | crc32(payload) u32 | payload`.
pub fn frame(payload: &[u8], out: &mut Vec<u8>) {
    let len = (payload.len() as u32).to_le_bytes();
    out.extend_from_slice(&len);
    out.extend_from_slice(&crc32fast::hash(&len).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
}

// ---------------------------------------------------------------- payload encoding

struct Enc<'a>(&'a mut Vec<u8>);

impl Enc<'_> {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.varint(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.u8(0),
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
        }
    }
    fn audit(&mut self, a: &Audit) {
        self.opt_str(a.reason.as_deref());
        self.str(&a.source);
        self.str(&a.provenance_ref);
    }
    fn target(&mut self, r: &Ref) {
        match r {
            Ref::Node { uid } => {
                self.u8(1);
                self.str(uid);
            }
            Ref::Edge {
                src,
                dst,
                rel_type,
                disc,
            } => {
                self.u8(2);
                self.str(src);
                self.str(dst);
                self.str(rel_type);
                self.str(disc);
            }
        }
    }
}

/// Op tags inside a batch payload.
const OP_ASSERT_NODE: u8 = 1;
const OP_ASSERT_EDGE: u8 = 2;
const OP_RETRACT: u8 = 3;
const OP_CORRECT: u8 = 4;
const OP_INGEST: u8 = 5;
const OP_RAW: u8 = 6;

/// Encodes a batch record payload.
pub fn encode_batch(tt: i64, ops: &[Op], out: &mut Vec<u8>) {
    encode_keyed_batch(tt, None, ops, out)
}

/// Encodes a batch record payload: type 1 without a key, type 3 (the key before the tt)
/// with one.
pub fn encode_keyed_batch(tt: i64, key: Option<&str>, ops: &[Op], out: &mut Vec<u8>) {
    let mut e = Enc(out);
    match key {
        None => e.u8(REC_BATCH),
        Some(k) => {
            e.u8(REC_KEYED_BATCH);
            e.str(k);
        }
    }
    e.i64(tt);
    e.varint(ops.len() as u64);
    for op in ops {
        match op {
            Op::AssertNode(o) => {
                e.u8(OP_ASSERT_NODE);
                e.str(&o.uid);
                e.str(&o.label);
                e.str(&o.props);
                e.i64(o.vt_s);
                e.i64(o.vt_e);
                e.audit(&o.audit);
            }
            Op::AssertEdge(o) => {
                e.u8(OP_ASSERT_EDGE);
                e.str(&o.src);
                e.str(&o.dst);
                e.str(&o.rel_type);
                e.str(&o.disc);
                e.str(&o.props);
                e.i64(o.vt_s);
                e.i64(o.vt_e);
                e.audit(&o.audit);
                e.str(&o.src_label);
                e.str(&o.dst_label);
            }
            Op::Retract(o) => {
                e.u8(OP_RETRACT);
                e.target(&o.target);
                e.i64(o.t);
                e.audit(&o.audit);
            }
            Op::Correct(o) => {
                e.u8(OP_CORRECT);
                e.target(&o.target);
                e.str(&o.props);
                e.i64(o.vt_s);
                e.i64(o.vt_e);
                e.audit(&o.audit);
            }
            Op::IngestEvents(o) => {
                e.u8(OP_INGEST);
                e.varint(o.ordinal_base);
                e.str(&o.node_label);
                e.audit(&o.audit);
                e.varint(o.events.len() as u64);
                for ev in &o.events {
                    e.str(&ev.src);
                    e.str(&ev.dst);
                    e.str(&ev.rel_type);
                    e.i64(ev.vt_s);
                    match ev.vt_e {
                        EventEnd::Absent => e.u8(0),
                        EventEnd::Null => e.u8(1),
                        EventEnd::At(x) => {
                            e.u8(2);
                            e.i64(x);
                        }
                    }
                    e.opt_str(ev.disc.as_deref());
                    e.opt_str(ev.props.as_deref());
                }
            }
            Op::Raw(text) => {
                e.u8(OP_RAW);
                e.str(text);
            }
        }
    }
}

/// Encodes an outcome record payload.
pub fn encode_outcome(tt: i64, ok: bool, code: &str, message: &str, out: &mut Vec<u8>) {
    let mut e = Enc(out);
    e.u8(REC_OUTCOME);
    e.i64(tt);
    e.u8(ok as u8);
    e.str(code);
    e.str(message);
}

type DecResult<T> = std::result::Result<T, CorruptionKind>;

/// The record decoders, read through the format's cursor over one payload.
impl Cursor<'_> {
    fn str(&mut self) -> DecResult<String> {
        let n = self.varint()?;
        let at = self.pos;
        let bytes = self.take(usize::try_from(n).unwrap_or(usize::MAX))?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| (at, CorruptionKind::from("string is not UTF-8")).into())
    }
    fn opt_str(&mut self) -> DecResult<Option<String>> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.str()?)),
            t => Err(format!("bad option tag {t}").into()),
        }
    }
    fn audit(&mut self) -> DecResult<Audit> {
        Ok(Audit {
            reason: self.opt_str()?,
            source: self.str()?,
            provenance_ref: self.str()?,
        })
    }
    fn target(&mut self) -> DecResult<Ref> {
        match self.u8()? {
            1 => Ok(Ref::Node { uid: self.str()? }),
            2 => Ok(Ref::Edge {
                src: self.str()?,
                dst: self.str()?,
                rel_type: self.str()?,
                disc: self.str()?,
            }),
            t => Err(format!("bad ref tag {t}").into()),
        }
    }
}

/// Decodes a record payload (after its checksum was verified).
pub fn decode(payload: &[u8]) -> DecResult<Record> {
    let mut d = Cursor::new(payload);
    let rec = match d.u8()? {
        t @ (REC_BATCH | REC_KEYED_BATCH) => {
            let key = if t == REC_KEYED_BATCH {
                Some(d.str()?)
            } else {
                None
            };
            let tt = d.i64()?;
            let n = d.varint()?;
            let mut ops = Vec::with_capacity(n.min(1024) as usize);
            for _ in 0..n {
                ops.push(decode_op(&mut d)?);
            }
            Record::Batch { tt, ops, key }
        }
        REC_OUTCOME => Record::Outcome {
            tt: d.i64()?,
            ok: d.u8()? == 1,
            code: d.str()?,
            message: d.str()?,
        },
        t => return Err(format!("unknown record type {t}").into()),
    };
    d.done()?;
    Ok(rec)
}

fn decode_op(d: &mut Cursor<'_>) -> DecResult<Op> {
    Ok(match d.u8()? {
        OP_ASSERT_NODE => Op::AssertNode(AssertNode {
            uid: d.str()?,
            label: d.str()?,
            props: d.str()?,
            vt_s: d.i64()?,
            vt_e: d.i64()?,
            audit: d.audit()?,
        }),
        OP_ASSERT_EDGE => Op::AssertEdge(AssertEdge {
            src: d.str()?,
            dst: d.str()?,
            rel_type: d.str()?,
            disc: d.str()?,
            props: d.str()?,
            vt_s: d.i64()?,
            vt_e: d.i64()?,
            audit: d.audit()?,
            src_label: d.str()?,
            dst_label: d.str()?,
        }),
        OP_RETRACT => Op::Retract(Retract {
            target: d.target()?,
            t: d.i64()?,
            audit: d.audit()?,
        }),
        OP_CORRECT => Op::Correct(Correct {
            target: d.target()?,
            props: d.str()?,
            vt_s: d.i64()?,
            vt_e: d.i64()?,
            audit: d.audit()?,
        }),
        OP_INGEST => {
            let ordinal_base = d.varint()?;
            let node_label = d.str()?;
            let audit = d.audit()?;
            let n = d.varint()?;
            let mut events = Vec::with_capacity(n.min(65536) as usize);
            for _ in 0..n {
                events.push(Event {
                    src: d.str()?,
                    dst: d.str()?,
                    rel_type: d.str()?,
                    vt_s: d.i64()?,
                    vt_e: match d.u8()? {
                        0 => EventEnd::Absent,
                        1 => EventEnd::Null,
                        2 => EventEnd::At(d.i64()?),
                        t => return Err(format!("bad vt_e tag {t}").into()),
                    },
                    disc: d.opt_str()?,
                    props: d.opt_str()?,
                });
            }
            Op::IngestEvents(IngestEvents {
                events,
                ordinal_base,
                node_label,
                audit,
            })
        }
        OP_RAW => Op::Raw(d.str()?),
        t => return Err(format!("unknown op tag {t}").into()),
    })
}

// ---------------------------------------------------------------- reading

/// Where a scan of the log stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum Tail {
    /// The file ends exactly after the last good record.
    Clean,
    /// The final record is torn or fails its checksum; it starts at this offset.
    Torn {
        /// Byte offset where the torn record starts.
        offset: u64,
        /// What is wrong with it.
        reason: String,
    },
}

/// Reads every record of a log file, calling `f(record_no, offset, record)` in order.
/// Damage before the final record is an error naming file, record number and offset; a
/// torn final record is reported in the returned [`Tail`] and not passed to `f`.
pub fn scan(path: &Path, f: impl FnMut(u64, u64, Record) -> Result<()>) -> Result<(Tail, u64)> {
    scan_from(path, HEADER_LEN, 0, f)
}

/// [`scan`] starting at byte `start` (a record boundary a manifest recorded), numbering the
/// first record read there `start_record`. The header is still checked.
pub fn scan_from(
    path: &Path,
    start: u64,
    start_record: u64,
    f: impl FnMut(u64, u64, Record) -> Result<()>,
) -> Result<(Tail, u64)> {
    scan_range(path, start, start_record, u64::MAX, f)
}

/// [`scan_from`] that stops at the first record boundary at or after byte `stop_at`
/// (reporting a clean end there).
pub fn scan_range(
    path: &Path,
    start: u64,
    start_record: u64,
    stop_at: u64,
    mut f: impl FnMut(u64, u64, Record) -> Result<()>,
) -> Result<(Tail, u64)> {
    let (tail, end) = scan_frames(path, start, start_record, stop_at, |no, offset, p| {
        let rec = decode(p).map_err(|kind| Error::LogDamaged {
            file: path.to_path_buf(),
            record: no,
            offset,
            kind,
        })?;
        f(no, offset, rec)
    })?;
    Ok((tail, end.offset))
}

/// Where a scan of the log's frames stopped: the byte offset after the last good record read
/// and the number of the next record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct End {
    /// Byte offset just after the last good record.
    pub offset: u64,
    /// 0-based number of the next record.
    pub record: u64,
}

/// Checks the frames of the log from its header up to byte `stop_at` (or its end) without
/// decoding payloads: where the good records end, and the tail's state when the end was
/// reached first. What the recovery commands compare with a manifest's checkpoint
/// (`format-spec.md` §4).
pub fn extent(path: &Path, stop_at: u64) -> Result<(Tail, End)> {
    scan_frames(path, HEADER_LEN, 0, stop_at, |_, _, _| Ok(()))
}

/// The frame scanner behind [`scan_from`] and [`extent`]: passes each checksummed payload to
/// `f` and stops at the first record boundary at or after `stop_at`, at a torn tail, or at
/// the end of the file.
fn scan_frames(
    path: &Path,
    start: u64,
    start_record: u64,
    stop_at: u64,
    mut f: impl FnMut(u64, u64, &[u8]) -> Result<()>,
) -> Result<(Tail, End)> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let file_len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    let corrupt = |offset: u64, kind: CorruptionKind| Error::Corruption {
        file: path.to_path_buf(),
        offset,
        kind,
    };
    let mut head = [0u8; 16];
    if file_len < HEADER_LEN {
        return Err(corrupt(
            0,
            format!("file of {file_len} bytes has no log header").into(),
        ));
    }
    file.read_exact(&mut head).map_err(|e| Error::io(path, e))?;
    if &head[..8] != MAGIC {
        let format = "write-ahead log";
        return Err(corrupt(0, CorruptionKind::BadMagic { format }));
    }
    let major = u16_at(&head, 8);
    if major != VERSION_MAJOR {
        return Err(corrupt(
            8,
            CorruptionKind::UnsupportedVersion {
                what: "log format major",
                version: major,
                reads: Some(VERSION_MAJOR),
            },
        ));
    }
    if start < HEADER_LEN || start > file_len {
        return Err(corrupt(
            start,
            format!("checkpoint offset {start} lies outside the log (length {file_len})").into(),
        ));
    }
    file.seek(SeekFrom::Start(start))
        .map_err(|e| Error::io(path, e))?;
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut offset = start;
    let mut record_no: u64 = start_record;
    let mut payload = Vec::new();
    let damaged = |record: u64, offset: u64, kind: CorruptionKind| Error::LogDamaged {
        file: path.to_path_buf(),
        record,
        offset,
        kind,
    };
    // A damaged stretch that no valid frame follows is the end of the log (zeros or
    // preallocated garbage after a power loss, §4); one that a valid frame follows is
    // damage.
    let tail_or_damage = |offset: u64, record: u64, kind: &str| -> Result<(Tail, End)> {
        let end = End { offset, record };
        match garbage_tail(path, offset, file_len).map_err(|e| Error::io(path, e))? {
            Ok(()) => Ok((
                Tail::Torn {
                    offset,
                    reason: format!(
                        "{kind}, and none of the {} bytes from here on starts a valid record \
                         (a zero-filled or garbage tail)",
                        file_len - offset
                    ),
                },
                end,
            )),
            Err(why) => Err(damaged(record, offset, format!("{kind}; {why}").into())),
        }
    };
    loop {
        let end = End {
            offset,
            record: record_no,
        };
        if offset >= stop_at {
            return Ok((Tail::Clean, end));
        }
        let left = file_len - offset;
        if left == 0 {
            return Ok((Tail::Clean, end));
        }
        if left < FRAME_LEN {
            return Ok((
                Tail::Torn {
                    offset,
                    reason: format!("incomplete frame header ({left} bytes)"),
                },
                end,
            ));
        }
        let mut fr = [0u8; 12];
        r.read_exact(&mut fr).map_err(|e| Error::io(path, e))?;
        let len_bytes = &fr[..4];
        let (len, len_crc, crc) = (u32_at(&fr, 0), u32_at(&fr, 4), u32_at(&fr, 8));
        if crc32fast::hash(len_bytes) != len_crc || len > MAX_PAYLOAD {
            // A damaged length cannot be torn by an append: report, never guess — unless
            // nothing valid follows (see `tail_or_damage`).
            return tail_or_damage(offset, record_no, "frame length check failed");
        }
        let rec_end = offset + FRAME_LEN + len as u64;
        if rec_end > file_len {
            return Ok((
                Tail::Torn {
                    offset,
                    reason: format!("record needs {} bytes, file has {}", rec_end - offset, left),
                },
                end,
            ));
        }
        payload.resize(len as usize, 0);
        r.read_exact(&mut payload).map_err(|e| Error::io(path, e))?;
        if crc32fast::hash(&payload) != crc {
            if rec_end == file_len {
                return Ok((
                    Tail::Torn {
                        offset,
                        reason: "final record fails its checksum".into(),
                    },
                    end,
                ));
            }
            return tail_or_damage(offset, record_no, "record checksum mismatch");
        }
        f(record_no, offset, &payload)?;
        record_no += 1;
        offset = rec_end;
    }
}

/// Decides whether the bytes of `path` from `offset` (where a frame failed its checks) to
/// `file_len` are a tail to drop (`Ok(Ok(()))`) or damage (`Ok(Err(why))`). Damage is
/// either a later byte position that starts a frame whose length check and payload
/// checksum both hold (a record written after the damaged one), or — for a frame that is
/// not all zeros — a payload checksum that matches every byte after the frame (a final
/// record whose length field was damaged). Reads the tail a window at a time; memory
/// stays bounded whatever the tail's size.
fn garbage_tail(
    path: &Path,
    offset: u64,
    file_len: u64,
) -> std::io::Result<std::result::Result<(), CorruptionKind>> {
    use std::os::unix::fs::FileExt;
    const WINDOW: usize = 1 << 20;
    let file = File::open(path)?;
    let mut fr = [0u8; 12];
    file.read_exact_at(&mut fr, offset)?;
    let stored_crc = u32_at(&fr, 8);
    let rest = file_len - offset - FRAME_LEN;
    let mut whole = (fr != [0u8; 12] && rest > 0 && rest <= u64::from(MAX_PAYLOAD))
        .then(crc32fast::Hasher::new);
    let mut buf = vec![0u8; WINDOW + FRAME_LEN as usize];
    let mut payload = Vec::new();
    // `at`: file offset of buf[0]. Every position p in (offset, file_len - 12] is tried as
    // the start of a frame; windows overlap by the 12 bytes a frame needs.
    let mut at = offset;
    while at < file_len {
        let n = ((file_len - at) as usize).min(buf.len());
        let window = buf.get_mut(..n).unwrap_or_default();
        file.read_exact_at(window, at)?;
        if let Some(h) = whole.as_mut() {
            let from = ((offset + FRAME_LEN).saturating_sub(at) as usize).min(n);
            h.update(buf.get(from..n.min(WINDOW).max(from)).unwrap_or_default());
        }
        let positions = n.saturating_sub(FRAME_LEN as usize - 1).min(WINDOW);
        for i in 0..positions {
            let p = at + i as u64;
            if p <= offset {
                continue;
            }
            let Some(w) = buf.get(i..i + FRAME_LEN as usize) else {
                break;
            };
            let len = u32_at(w, 0);
            if len == 0 || len > MAX_PAYLOAD || p + FRAME_LEN + u64::from(len) > file_len {
                continue;
            }
            if crc32fast::hash(w.get(..4).unwrap_or_default()) != u32_at(w, 4) {
                continue;
            }
            payload.resize(len as usize, 0);
            file.read_exact_at(&mut payload, p + FRAME_LEN)?;
            if crc32fast::hash(&payload) == u32_at(w, 8) {
                return Ok(Err(format!("a valid record follows at offset {p}").into()));
            }
        }
        at += WINDOW as u64;
    }
    if whole.is_some_and(|h| h.finalize() == stored_crc) {
        return Ok(Err(format!(
            "the frame's payload checksum matches the {rest} bytes after it: the final \
             record's length field is damaged"
        )
        .into()));
    }
    Ok(Ok(()))
}

/// What the log says about one batch key: the batch's tt and number, and its recorded
/// outcome (`None` when no outcome record follows it: a crash between its sync and its
/// outcome; the batch was still committed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyedBatch {
    /// The batch's transaction time (µs).
    pub tt: i64,
    /// 0-based number of the batch among the log's batches.
    pub seq: u64,
    /// `(ok, code, message)` of its outcome record, if one follows it.
    pub outcome: Option<(bool, String, String)>,
}

/// Every batch key of the log, read from its first record (payloads of keyed records are
/// decoded only up to their tt; outcome records in full). A writer builds this once, at its
/// first keyed commit: keys before the manifest's checkpoint are not in memory otherwise.
pub fn batch_keys(path: &Path) -> Result<std::collections::HashMap<String, KeyedBatch>> {
    let mut keys = std::collections::HashMap::new();
    let mut seq = 0u64;
    let mut pending: Option<(String, i64)> = None;
    let damaged = |record: u64, offset: u64, kind: CorruptionKind| Error::LogDamaged {
        file: path.to_path_buf(),
        record,
        offset,
        kind,
    };
    scan_frames(path, HEADER_LEN, 0, u64::MAX, |no, offset, p| {
        match p.first().copied() {
            Some(REC_BATCH) => {
                pending = None;
                seq += 1;
            }
            Some(REC_KEYED_BATCH) => {
                let mut d = Cursor { b: p, pos: 1 };
                let key = d.str().map_err(|k| damaged(no, offset, k))?;
                let tt = d.i64().map_err(|k| damaged(no, offset, k.into()))?;
                keys.insert(
                    key.clone(),
                    KeyedBatch {
                        tt,
                        seq,
                        outcome: None,
                    },
                );
                pending = Some((key, tt));
                seq += 1;
            }
            Some(REC_OUTCOME) => {
                if let Record::Outcome {
                    tt,
                    ok,
                    code,
                    message,
                } = decode(p).map_err(|k| damaged(no, offset, k))?
                {
                    if let Some((key, btt)) = pending.take() {
                        if btt == tt {
                            if let Some(k) = keys.get_mut(&key) {
                                k.outcome = Some((ok, code, message));
                            }
                        }
                    }
                }
            }
            _ => {
                decode(p).map_err(|k| damaged(no, offset, k))?;
            }
        }
        Ok(())
    })?;
    Ok(keys)
}

// ---------------------------------------------------------------- appending

/// An open log file positioned for appends.
pub struct Wal {
    path: PathBuf,
    file: File,
    buf: Vec<u8>,
    frame: Vec<u8>,
    /// Length of the file as written so far.
    len: u64,
    /// Skip fsync (benchmarks of the non-durable path only).
    pub no_sync: bool,
}

impl Wal {
    /// Creates a new log file with its header, durably.
    pub fn create(path: &Path) -> Result<Wal> {
        let mut file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .read(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        file.write_all(&header_bytes())
            .map_err(|e| Error::io(path, e))?;
        crate::fault::sync_point(path)
            .and_then(|_| file.sync_all())
            .map_err(|e| Error::io(path, e))?;
        Ok(Wal {
            path: path.to_path_buf(),
            file,
            buf: Vec::new(),
            frame: Vec::new(),
            len: HEADER_LEN,
            no_sync: false,
        })
    }

    /// Opens an existing log for appending at `len` (the end of its last good record),
    /// truncating anything after it.
    pub fn open_append(path: &Path, len: u64) -> Result<Wal> {
        let mut file = OpenOptions::new()
            .write(true)
            .read(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        let actual = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if actual != len {
            file.set_len(len).map_err(|e| Error::io(path, e))?;
            crate::fault::sync_point(path)
                .and_then(|_| file.sync_all())
                .map_err(|e| Error::io(path, e))?;
        }
        file.seek(SeekFrom::Start(len))
            .map_err(|e| Error::io(path, e))?;
        Ok(Wal {
            path: path.to_path_buf(),
            file,
            buf: Vec::new(),
            frame: Vec::new(),
            len,
            no_sync: false,
        })
    }

    /// The log file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes written so far (header included).
    pub fn len_bytes(&self) -> u64 {
        self.len
    }

    fn append(&mut self, sync: bool) -> Result<()> {
        self.frame.clear();
        frame(&self.buf, &mut self.frame);
        crate::fault::write_point(&self.path, crate::fault::FaultPoint::Write(&self.frame))
            .and_then(|_| self.file.write_all(&self.frame))
            .map_err(|e| Error::io(&self.path, e))?;
        if sync && !self.no_sync {
            crate::fault::sync_point(&self.path)
                .and_then(|_| self.file.sync_data())
                .map_err(|e| Error::io(&self.path, e))?;
        }
        self.len += self.frame.len() as u64;
        Ok(())
    }

    /// Makes every appended byte durable (a flush checkpoints the log only after this).
    pub fn sync(&mut self) -> Result<()> {
        if !self.no_sync {
            crate::fault::sync_point(&self.path)
                .and_then(|_| self.file.sync_data())
                .map_err(|e| Error::io(&self.path, e))?;
        }
        Ok(())
    }

    /// Appends a batch record and makes it durable before returning.
    pub fn append_batch(&mut self, tt: i64, ops: &[Op]) -> Result<()> {
        self.append_keyed_batch(tt, None, ops)
    }

    /// Appends a batch record, keyed when `key` is given, and makes it durable before
    /// returning. Any error leaves the record's fate unknown: it may be whole on disk.
    pub fn append_keyed_batch(&mut self, tt: i64, key: Option<&str>, ops: &[Op]) -> Result<()> {
        self.buf.clear();
        encode_keyed_batch(tt, key, ops, &mut self.buf);
        self.append(true)
    }

    /// Appends the outcome of the batch just applied. Not synced on its own: an outcome is
    /// derivable by replay, so losing it in a crash loses nothing.
    pub fn append_outcome(&mut self, tt: i64, ok: bool, code: &str, message: &str) -> Result<()> {
        self.buf.clear();
        encode_outcome(tt, ok, code, message, &mut self.buf);
        self.append(false)
    }
}
