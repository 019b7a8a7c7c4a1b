//! `tgms check` (`format-spec.md` §11): verifies a store without modifying it — the log's
//! records, the manifest's, every segment's bytes, structure and chaining, and that the
//! published segments plus the log tail equal a replay of the whole log.

use super::*;

/// One problem `tgms check` found: the file, the byte offset and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The damaged file.
    pub file: PathBuf,
    /// Byte offset of the damage (0 when the error names no place).
    pub offset: u64,
    /// What is wrong.
    pub kind: CorruptionKind,
}

impl Problem {
    fn from_error(e: &Error, fallback: &Path) -> Problem {
        match e {
            Error::Corruption { file, offset, kind } => Problem {
                file: file.clone(),
                offset: *offset,
                kind: kind.clone(),
            },
            Error::LogDamaged {
                file,
                record,
                offset,
                kind,
            } => Problem {
                file: file.clone(),
                offset: *offset,
                kind: format!("record {record}: {kind}").into(),
            },
            other => Problem {
                file: fallback.to_path_buf(),
                offset: 0,
                kind: other.message().into(),
            },
        }
    }
}

/// What `tgms check` saw.
#[derive(Clone, Debug, Default)]
pub struct CheckReport {
    /// Every damage found; an intact store has none.
    pub problems: Vec<Problem>,
    /// Segments the manifest publishes.
    pub segments: u64,
    /// Records read from the log.
    pub wal_records: u64,
    /// Findings that are not damage: a torn final record (cut by the next writable open),
    /// files no manifest references (collected by the next writable open).
    pub notes: Vec<String>,
}

/// Verifies a store without modifying it (`format-spec.md` §11): every WAL record's
/// checksums; the manifest's records; every segment's length, BLAKE3 digest, header,
/// footer and chunk checksums, column decoding and chaining (invariants S1–S6, and S8 for
/// indexed segments); and that the published segments plus the log tail equal a replay of
/// the whole log (digest and statistics, S7). Every problem found is reported, not only the first.
pub fn check(dir: &Path) -> Result<CheckReport> {
    check_with(dir, None, false)
}

/// [`check`] whose comparison opens (S7) read segments with `io` and decode them when
/// `eager`, as [`Options::io`] and [`Options::eager`] say.
pub fn check_with(dir: &Path, io: Option<IoMode>, eager: bool) -> Result<CheckReport> {
    // A live store may publish a generation (flush, compaction) while it is checked: the
    // check pins the manifest it read first, and when it finds problems while the manifest
    // has changed since, it starts over on the new generation (as an open does, §9.4).
    // Real damage is still there on the next attempt; a publication race is not.
    const ATTEMPTS: usize = 8;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let (rep, pinned) = check_once(dir, io, eager)?;
        if rep.problems.is_empty() || attempt == ATTEMPTS || read_entries(dir) == pinned {
            return Ok(rep);
        }
    }
}

/// The manifest's records as read now (`None`: no manifest, or unreadable).
fn read_entries(dir: &Path) -> Option<Vec<SegEntry>> {
    manifest::read(&dir.join(MANIFEST_FILE))
        .ok()
        .map(|(e, _)| e)
        .filter(|e| !e.is_empty())
}

/// One pass of [`check`] over the generation the manifest publishes when it is read; also
/// returns the records it read.
fn check_once(
    dir: &Path,
    io: Option<IoMode>,
    eager: bool,
) -> Result<(CheckReport, Option<Vec<SegEntry>>)> {
    let wal_path = dir.join(WAL_FILE);
    if !wal_path.exists() {
        return Err(Error::no_store(dir));
    }
    let mut rep = CheckReport::default();
    // The manifest first: the log only grows, so a log scanned after it reaches every
    // position the manifest covers.
    let mpath = dir.join(MANIFEST_FILE);
    let mut entries = Vec::new();
    if mpath.exists() {
        match manifest::read(&mpath) {
            Ok((e, good)) => {
                let len = fs::metadata(&mpath).map(|m| m.len()).unwrap_or(good);
                if good != len {
                    rep.notes.push(format!(
                        "{}: torn final record at offset {good} (an unfinished publication)",
                        mpath.display()
                    ));
                }
                entries = e;
            }
            Err(e) => rep.problems.push(Problem::from_error(&e, &mpath)),
        }
    }
    let pinned = read_pinned(&entries, &rep);
    let mut wal_len = 0;
    match wal::scan(&wal_path, |_, _, _| {
        rep.wal_records += 1;
        Ok(())
    }) {
        Ok((tail, len)) => {
            wal_len = len;
            if let Tail::Torn { offset, reason } = tail {
                rep.notes.push(format!(
                    "{}: torn final record at offset {offset} (a writable open truncates it): {reason}",
                    wal_path.display()
                ));
            }
        }
        Err(e) => rep.problems.push(Problem::from_error(&e, &wal_path)),
    }
    rep.segments = entries.len() as u64;
    let mut prev: Option<&SegEntry> = None;
    for e in &entries {
        let path = dir.join(manifest::seg_name(e.seq));
        let mut bad = |offset: u64, kind: CorruptionKind| {
            rep.problems.push(Problem {
                file: path.clone(),
                offset,
                kind,
            })
        };
        if let Some(p) = prev {
            if e.seq <= p.seq {
                bad(
                    0,
                    format!("S1: segment seq {} does not follow {}", e.seq, p.seq).into(),
                );
            }
            if e.base != p.end {
                bad(
                    0,
                    "S2: segment does not start where the previous one ends".into(),
                );
            }
            if e.wal_offset < p.wal_offset || e.wal_record < p.wal_record {
                bad(0, "S5: covered log position moves backwards".into());
            }
        } else if e.base != crate::model::Marks::default() {
            bad(0, "S2: first segment does not start at zero".into());
        }
        if e.wal_offset > wal_len.max(wal::HEADER_LEN) {
            bad(
                0,
                format!(
                    "S5: covers log offset {} beyond the log's good length {wal_len}",
                    e.wal_offset
                )
                .into(),
            );
        }
        prev = Some(e);
        let held = match SegBytes::read(&path) {
            Ok(b) => b,
            Err(err) => {
                bad(0, format!("segment file unreadable: {err}").into());
                continue;
            }
        };
        let bytes = held.bytes();
        if bytes.len() as u64 != e.file_len {
            bad(
                0,
                format!(
                    "S3: {} bytes, the manifest says {}",
                    bytes.len(),
                    e.file_len
                )
                .into(),
            );
        }
        if content_digest(bytes) != e.blake3 {
            bad(
                0,
                "S3: content digest (blake3) differs from the manifest".into(),
            );
        }
        // An indexed image is also opened the way a mapped open does (checksums and the
        // structural pass), so `check` names what a store's open would refuse.
        if seg::header_minor(bytes).is_some_and(seg::is_indexed) {
            if let Err((o, k)) = crate::format::open_image(bytes) {
                bad(o, k);
            }
        }
        match seg::decode_checked(bytes) {
            Err((o, k)) => bad(o, k),
            Ok((sq, d)) => {
                if sq != e.seq || d.base != e.base || d.end() != e.end {
                    bad(
                        0,
                        "S4: segment header or row counts differ from the manifest".into(),
                    );
                }
            }
        }
    }
    if let Ok(rd) = fs::read_dir(dir) {
        for ent in rd.flatten() {
            let name = ent.file_name().to_string_lossy().into_owned();
            let referenced =
                manifest::seg_seq(&name).is_some_and(|sq| entries.iter().any(|e| e.seq == sq));
            if (manifest::seg_seq(&name).is_some() && !referenced) || name == MANIFEST_TMP {
                rep.notes
                    .push(format!("{name}: referenced by no manifest (garbage)"));
            }
        }
    }
    if rep.problems.is_empty() {
        // S7: the published state plus the log tail equals a replay of the whole log.
        // Both opens stop at the same log position: a writer appending meanwhile adds
        // batches that the first open did not see.
        let ro = |whole: bool, replay_to: Option<u64>| {
            Store::open_with(
                dir,
                Options {
                    read_only: true,
                    replay_whole_log: whole,
                    replay_to,
                    io,
                    eager,
                    ..Options::default()
                },
            )
        };
        let published = ro(false, None);
        let whole = match &published {
            Ok(a) => ro(true, Some(a.opened_log_end())),
            Err(_) => ro(true, None),
        };
        match (published, whole) {
            (Ok(a), Ok(b)) => {
                if a.stats() != b.stats() {
                    rep.problems.push(Problem {
                        file: mpath.clone(),
                        offset: 0,
                        kind: "S7: statistics of segments + log tail differ from a replay of the whole log".into(),
                    });
                }
                if a.digest() != b.digest() {
                    rep.problems.push(Problem {
                        file: mpath.clone(),
                        offset: 0,
                        kind: "S7: digest of segments + log tail differs from a replay of the whole log".into(),
                    });
                }
            }
            (Err(e), _) | (_, Err(e)) => rep.problems.push(Problem::from_error(&e, dir)),
        }
    }
    Ok((rep, pinned))
}

/// The records a check pinned, as [`read_entries`] would give them (`None` when the
/// manifest is absent or was unreadable).
fn read_pinned(entries: &[SegEntry], rep: &CheckReport) -> Option<Vec<SegEntry>> {
    let unreadable = rep.problems.iter().any(|p| p.file.ends_with(MANIFEST_FILE));
    (!entries.is_empty() && !unreadable).then(|| entries.to_vec())
}
