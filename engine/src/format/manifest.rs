//! The manifest (`format-spec.md` §7): an append-only log of segment publications, framed
//! like the WAL. Appending one record (O(change)) and syncing it publishes a flush;
//! compaction publishes by renaming a freshly written manifest over the old one.

use crate::error::{CorruptionKind, Error, Result};
use crate::format::le::{u16_at, u32_at, Cursor};
use crate::format::seg::ZoneMap;
use crate::format::wal::{frame, FRAME_LEN, MAX_PAYLOAD};
use crate::model::{Marks, Stats};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Name of the manifest inside a store directory.
pub const MANIFEST_FILE: &str = "MANIFEST";
/// Name of a manifest being written by compaction (renamed over [`MANIFEST_FILE`]).
pub const MANIFEST_TMP: &str = "MANIFEST.tmp";
/// Manifest magic.
pub const MANIFEST_MAGIC: &[u8; 8] = b"TGMSMAN\0";
/// Manifest major version (a reader refuses another major).
pub const MANIFEST_MAJOR: u16 = 1;
/// Manifest minor version.
pub const MANIFEST_MINOR: u16 = 0;
/// Record type: a segment was published.
pub const REC_SEGMENT: u8 = 1;

/// The file name of segment `seq`.
pub fn seg_name(seq: u64) -> String {
    format!("seg-{seq:08}.tgs")
}

/// The sequence number a segment file name encodes, if it is one.
pub fn seg_seq(name: &str) -> Option<u64> {
    seq_in(name, ".tgs")
}

/// The sequence number of a name `seg-NNNNNNNN<suffix>` (8 decimal digits), if it is one.
pub(crate) fn seq_in(name: &str, suffix: &str) -> Option<u64> {
    let d = name.strip_prefix("seg-")?.strip_suffix(suffix)?;
    (d.len() == 8 && d.bytes().all(|b| b.is_ascii_digit()))
        .then(|| d.parse().ok())
        .flatten()
}

/// One published segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegEntry {
    /// The segment's sequence number (its file is `seg_name(seq)`).
    pub seq: u64,
    /// The segment file's length in bytes.
    pub file_len: u64,
    /// BLAKE3 hash of the whole segment file.
    pub blake3: [u8; 32],
    pub(crate) base: Marks,
    pub(crate) end: Marks,
    /// WAL byte offset and record number the published state covers: replay starts there.
    pub wal_offset: u64,
    /// The WAL record number matching `wal_offset`.
    pub wal_record: u64,
    /// The segment's zone map (row counts, time ranges, rel types).
    pub zone: ZoneMap,
    /// Store statistics as of the covered log position.
    pub stats: Stats,
}

fn opt(out: &mut Vec<u8>, v: Option<i64>) {
    match v {
        None => out.push(0),
        Some(x) => {
            out.push(1);
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
}

/// Encodes a segment record payload.
pub fn encode_entry(e: &SegEntry) -> Vec<u8> {
    let mut o = vec![REC_SEGMENT];
    let p64 = |o: &mut Vec<u8>, v: u64| o.extend_from_slice(&v.to_le_bytes());
    p64(&mut o, e.seq);
    p64(&mut o, e.file_len);
    o.extend_from_slice(&e.blake3);
    for m in e.base.to_array().into_iter().chain(e.end.to_array()) {
        p64(&mut o, m);
    }
    p64(&mut o, e.wal_offset);
    p64(&mut o, e.wal_record);
    let z = &e.zone;
    p64(&mut o, z.node_rows);
    p64(&mut o, z.edge_rows);
    for v in [z.vt_min, z.vt_max, z.max_vt_e, z.tt_min, z.tt_max] {
        o.extend_from_slice(&v.to_le_bytes());
    }
    o.extend_from_slice(&(z.rels.len() as u32).to_le_bytes());
    for r in &z.rels {
        o.extend_from_slice(&r.to_le_bytes());
    }
    let s = &e.stats;
    p64(&mut o, s.n_entities);
    p64(&mut o, s.n_node_versions);
    p64(&mut o, s.n_edge_versions);
    opt(&mut o, s.vt_min);
    opt(&mut o, s.vt_max);
    p64(&mut o, s.max_out_degree);
    opt(&mut o, s.first_tt);
    opt(&mut o, s.last_tt);
    p64(&mut o, s.n_batches);
    p64(&mut o, s.n_failed_batches);
    p64(&mut o, s.ingest_ordinal);
    o.extend_from_slice(&(s.rel_type_counts.len() as u32).to_le_bytes());
    for (k, v) in &s.rel_type_counts {
        o.extend_from_slice(&(k.len() as u32).to_le_bytes());
        o.extend_from_slice(k.as_bytes());
        p64(&mut o, *v);
    }
    o
}

/// An optional `i64`: a tag byte (0 none, 1 some) and the value.
fn read_opt(r: &mut Cursor<'_>) -> std::result::Result<Option<i64>, CorruptionKind> {
    match r.u8()? {
        0 => Ok(None),
        1 => Ok(Some(r.i64()?)),
        t => Err(format!("bad option tag {t}").into()),
    }
}

/// Decodes a segment record payload.
pub fn decode_entry(b: &[u8]) -> std::result::Result<SegEntry, CorruptionKind> {
    let mut r = Cursor::new(b);
    let t = r.u8()?;
    if t != REC_SEGMENT {
        return Err(format!("unknown manifest record type {t}").into());
    }
    let seq = r.u64()?;
    let file_len = r.u64()?;
    let blake3: [u8; 32] = r.take(32)?.try_into().unwrap_or([0; 32]);
    let mut marks = [0u64; 14];
    for m in &mut marks {
        *m = r.u64()?;
    }
    let base = Marks::from_array(marks[..7].try_into().unwrap_or([0; 7]));
    let end = Marks::from_array(marks[7..].try_into().unwrap_or([0; 7]));
    let wal_offset = r.u64()?;
    let wal_record = r.u64()?;
    let mut zone = ZoneMap {
        node_rows: r.u64()?,
        edge_rows: r.u64()?,
        vt_min: r.i64()?,
        vt_max: r.i64()?,
        max_vt_e: r.i64()?,
        tt_min: r.i64()?,
        tt_max: r.i64()?,
        rels: Vec::new(),
    };
    let n = r.u32()? as usize;
    if n > b.len() / 4 {
        return Err("rel list longer than the record".into());
    }
    for _ in 0..n {
        zone.rels.push(r.u32()?);
    }
    let mut stats = Stats {
        n_entities: r.u64()?,
        n_node_versions: r.u64()?,
        n_edge_versions: r.u64()?,
        vt_min: read_opt(&mut r)?,
        vt_max: read_opt(&mut r)?,
        max_out_degree: r.u64()?,
        first_tt: read_opt(&mut r)?,
        last_tt: read_opt(&mut r)?,
        n_batches: r.u64()?,
        n_failed_batches: r.u64()?,
        ingest_ordinal: r.u64()?,
        rel_type_counts: BTreeMap::new(),
    };
    let n = r.u32()? as usize;
    for _ in 0..n {
        let l = r.u32()? as usize;
        let k = std::str::from_utf8(r.take(l)?)
            .map_err(|_| "rel type name is not UTF-8".to_string())?
            .to_string();
        let v = r.u64()?;
        stats.rel_type_counts.insert(k, v);
    }
    r.done()?;
    Ok(SegEntry {
        seq,
        file_len,
        blake3,
        base,
        end,
        wal_offset,
        wal_record,
        zone,
        stats,
    })
}

fn header() -> [u8; 16] {
    let mut h = [0u8; 16];
    h[..8].copy_from_slice(MANIFEST_MAGIC);
    h[8..10].copy_from_slice(&MANIFEST_MAJOR.to_le_bytes());
    h[10..12].copy_from_slice(&MANIFEST_MINOR.to_le_bytes());
    h
}

/// The published segments of a manifest file, and the length of its good prefix. A torn
/// final record (cut short, or failing its checksum at the end of the file) is not part of
/// the manifest: its publication never completed. Damage before the end is corruption.
pub fn read(path: &Path) -> Result<(Vec<SegEntry>, u64)> {
    let b = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let corrupt = |offset: u64, kind: CorruptionKind| Error::Corruption {
        file: path.to_path_buf(),
        offset,
        kind,
    };
    if b.len() < 16 || b.get(..8) != Some(MANIFEST_MAGIC.as_slice()) {
        let format = "manifest";
        return Err(corrupt(0, CorruptionKind::BadMagic { format }));
    }
    let major = u16_at(&b, 8);
    if major != MANIFEST_MAJOR {
        return Err(corrupt(
            8,
            CorruptionKind::UnsupportedVersion {
                what: "manifest major",
                version: major,
                reads: None,
            },
        ));
    }
    let mut out = Vec::new();
    let mut pos = 16usize;
    let frame_len = FRAME_LEN as usize;
    while pos < b.len() {
        if b.len() - pos < frame_len {
            break;
        }
        let len_bytes = b.get(pos..pos + 4).unwrap_or(&[]);
        let (len, len_crc, crc) = (u32_at(&b, pos), u32_at(&b, pos + 4), u32_at(&b, pos + 8));
        if crc32fast::hash(len_bytes) != len_crc || len > MAX_PAYLOAD {
            return Err(corrupt(
                pos as u64,
                "manifest record length check failed".into(),
            ));
        }
        let end = pos + frame_len + len as usize;
        if end > b.len() {
            break;
        }
        let payload = b.get(pos + frame_len..end).unwrap_or(&[]);
        if crc32fast::hash(payload) != crc {
            if end == b.len() {
                break;
            }
            return Err(corrupt(
                pos as u64,
                CorruptionKind::ChecksumMismatch {
                    what: "manifest record".into(),
                },
            ));
        }
        let e = decode_entry(payload).map_err(|k| corrupt(pos as u64, k))?;
        out.push(e);
        pos = end;
    }
    Ok((out, pos as u64))
}

/// The manifest opened for appending publication records.
pub struct ManifestWriter {
    path: PathBuf,
    file: File,
    /// Skip fsync after writes (the store's `Options::no_sync`; never the default).
    pub no_sync: bool,
}

impl ManifestWriter {
    /// Opens (creating with its header when missing) and positions at `len`, cutting a
    /// torn tail away.
    pub fn open(path: &Path, len: Option<u64>, no_sync: bool) -> Result<ManifestWriter> {
        let io = |e| Error::io(path, e);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        match len {
            None => {
                file.set_len(0).map_err(io)?;
                file.write_all(&header()).map_err(io)?;
                if !no_sync {
                    crate::fault::sync_point(path)
                        .and_then(|_| file.sync_all())
                        .map_err(io)?;
                }
            }
            Some(l) => {
                if file.metadata().map_err(io)?.len() != l {
                    file.set_len(l).map_err(io)?;
                    if !no_sync {
                        crate::fault::sync_point(path)
                            .and_then(|_| file.sync_all())
                            .map_err(io)?;
                    }
                }
                file.seek(SeekFrom::Start(l)).map_err(io)?;
            }
        }
        Ok(ManifestWriter {
            path: path.to_path_buf(),
            file,
            no_sync,
        })
    }

    /// Appends one publication record and syncs it: the publication point of a flush.
    pub fn append(&mut self, e: &SegEntry) -> Result<()> {
        let mut buf = Vec::new();
        frame(&encode_entry(e), &mut buf);
        crate::fault::write_point(&self.path, crate::fault::FaultPoint::Write(&buf))
            .and_then(|_| self.file.write_all(&buf))
            .map_err(|er| Error::io(&self.path, er))?;
        if !self.no_sync {
            crate::fault::sync_point(&self.path)
                .and_then(|_| self.file.sync_data())
                .map_err(|er| Error::io(&self.path, er))?;
        }
        Ok(())
    }
}

/// Writes a new manifest holding `entries` to [`MANIFEST_TMP`], syncs it and renames it over
/// [`MANIFEST_FILE`] (the publication point of a compaction); the caller syncs the directory.
pub fn write_fresh(dir: &Path, entries: &[SegEntry], no_sync: bool) -> Result<()> {
    let tmp = dir.join(MANIFEST_TMP);
    let mut buf = header().to_vec();
    for e in entries {
        frame(&encode_entry(e), &mut buf);
    }
    let io = |e| Error::io(&tmp, e);
    let mut f = File::create(&tmp).map_err(io)?;
    crate::fault::write_point(&tmp, crate::fault::FaultPoint::Write(&buf))
        .and_then(|_| f.write_all(&buf))
        .map_err(io)?;
    if !no_sync {
        crate::fault::sync_point(&tmp)
            .and_then(|_| f.sync_all())
            .map_err(io)?;
    }
    drop(f);
    crate::fault::write_point(&tmp, crate::fault::FaultPoint::Rename)
        .and_then(|_| std::fs::rename(&tmp, dir.join(MANIFEST_FILE)))
        .map_err(io)?;
    Ok(())
}
