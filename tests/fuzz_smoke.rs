//! Fuzz targets for the decoders and parsers that read untrusted bytes (issue 19): the WAL
//! record decoder, the segment verifier and the manifest record decoder, the TGMS event-log
//! line parser, batch (op) JSON parsing, plan JSON with `$ref` parsing and the static
//! verifier, and the claim verifier with gating. Each runs a seeded, structure-aware mutation loop over the checked-in seed
//! corpus in `tests/fuzz-corpus/<target>/` and asserts that the target never panics, gives
//! the same answer twice, and (where the format has an encoder) that what it accepts
//! re-encodes to bytes it decodes to the same value.
//!
//! Why mutation loops run as tests instead of cargo-fuzz or cargo-afl: the machines here and
//! CI have only a stable toolchain (cargo-fuzz needs nightly, which cannot be fetched), and
//! cargo-afl would add an AFL++ build and an instrumented second build of the workspace to
//! every CI run on two shared cores. A seeded loop is reproducible (a failure names the
//! seed, the iteration and the saved input under `target/fuzz-failures/`), needs nothing
//! installed, and is structure-aware where it matters: WAL and manifest payloads are
//! mutated *inside* their checksums (the decoders are called on payloads, as the scanner
//! does after the crc holds), and JSON targets get token-level mutations (huge numbers,
//! `1e400`, deep nesting, `$ref` objects). What it lacks is coverage feedback; the segment
//! target is byte-level, and its mutants are also re-sealed (checksums recomputed) so the
//! mapped open's structural checks see forged values.
//!
//! Budget: `TGMS_FUZZ_SECS` seconds per target (`.ci/run` uses a few seconds each, under a
//! 4 GiB address-space limit, so a decoder that allocates from a forged length field fails
//! the run), else `TGMS_FUZZ_ITERS` iterations (default 1,500). `TGMS_FUZZ_SEED` changes
//! the seed. Regenerate the corpus with
//! `cargo test --release -p tgms --test fuzz_smoke -- --ignored write_seed_corpus`.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tgms_engine::format::{manifest, seg, wal};
use tgms_engine::Op;
use tgms_testkit::Rng;

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-corpus")
        .join(target)
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = corpus_dir(target);
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("seed corpus {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    let v: Vec<Vec<u8>> = names.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(!v.is_empty(), "empty seed corpus {}", dir.display());
    v
}

/// Byte-level mutations: bit flips, interesting bytes, inserts, deletes, duplications,
/// splices with another seed, and forged little-endian / varint lengths.
fn mutate_bytes(rng: &mut Rng, input: &mut Vec<u8>, other: &[u8]) {
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let n = input.len();
        match rng.below(8) {
            0 if n > 0 => {
                let i = rng.below(n);
                input[i] ^= 1 << rng.below(8);
            }
            1 if n > 0 => {
                let i = rng.below(n);
                input[i] = [0, 1, 0x7f, 0x80, 0xff, 0xfe][rng.below(6)];
            }
            2 => {
                let i = rng.below(n + 1);
                let k = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..k).map(|_| rng.next_u64() as u8).collect();
                input.splice(i..i, bytes);
            }
            3 if n > 0 => {
                let i = rng.below(n);
                let k = 1 + rng.below((n - i).min(32));
                input.drain(i..i + k);
            }
            4 if n > 0 => {
                let i = rng.below(n);
                let k = 1 + rng.below((n - i).min(64));
                let dup: Vec<u8> = input[i..i + k].to_vec();
                let at = rng.below(n + 1);
                input.splice(at..at, dup);
            }
            5 if !other.is_empty() => {
                let i = rng.below(n + 1);
                let j = rng.below(other.len());
                let k = 1 + rng.below((other.len() - j).min(64));
                input.truncate(i);
                input.extend_from_slice(&other[j..j + k]);
            }
            6 if n >= 4 => {
                let i = rng.below(n - 3);
                let v = [u32::MAX, 1 << 30, (1 << 30) + 1, 0x7fff_ffff, 0][rng.below(5)];
                input[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
            7 if n > 0 => {
                // A forged varint: ten bytes of continuation, or 2^63.
                let i = rng.below(n);
                let forged: &[u8] = if rng.below(2) == 0 {
                    &[0xff; 10]
                } else {
                    &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]
                };
                input.splice(i..i, forged.iter().copied());
            }
            _ => input.push(rng.next_u64() as u8),
        }
    }
}

/// Token-level mutations of JSON text, then possibly byte-level ones.
fn mutate_json(rng: &mut Rng, input: &mut Vec<u8>, other: &[u8]) {
    const TOKENS: &[&str] = &[
        "1e400",
        "-1e400",
        "18446744073709551616",
        "-9223372036854775809",
        "4611686018427387904",
        "0.5",
        "null",
        "\"\"",
        "[]",
        "{}",
        "{\"$ref\":\"s1.nodes[0]\"}",
        "{\"$ref\":\"\"}",
        "{\"$ref\":\"s9..x[*]\"}",
        "\"\\ud800\"",
        "true",
    ];
    let text = String::from_utf8_lossy(input).into_owned();
    // Positions of value starts: after ':' or '[' or ','.
    let starts: Vec<usize> = text
        .char_indices()
        .filter(|(_, c)| matches!(c, ':' | '[' | ','))
        .map(|(i, _)| i + 1)
        .collect();
    let out = match rng.below(4) {
        0 | 1 if !starts.is_empty() => {
            let at = starts[rng.below(starts.len())];
            // Replace the value token up to the next delimiter.
            let end = text[at..]
                .find([',', '}', ']'])
                .map_or(text.len(), |k| at + k);
            format!(
                "{}{}{}",
                &text[..at],
                TOKENS[rng.below(TOKENS.len())],
                &text[end..]
            )
        }
        2 => {
            let depth = 1 + rng.below(300);
            format!("{}{}{}", "[".repeat(depth), text, "]".repeat(depth))
        }
        _ => {
            let mut b = text.into_bytes();
            mutate_bytes(rng, &mut b, other);
            *input = b;
            return;
        }
    };
    *input = out.into_bytes();
}

fn budget() -> (Option<Duration>, u64) {
    let secs = std::env::var("TGMS_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok());
    let iters = std::env::var("TGMS_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1500);
    (secs.map(Duration::from_secs_f64), iters)
}

/// Runs `check` on every seed and on mutants of them until the budget is spent. A panic or
/// a failed property saves the input and fails the test, naming seed and iteration.
fn fuzz(
    target: &str,
    json: bool,
    check: impl Fn(&[u8]) -> Result<(), String> + std::panic::RefUnwindSafe,
) {
    let corpus = seeds(target);
    let seed: u64 = std::env::var("TGMS_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x9E37_79B9_7F4A_7C15);
    let mut rng = Rng::new(seed ^ target.len() as u64 ^ 0x5555);
    let (secs, iters) = budget();
    let start = Instant::now();
    let run = |input: &[u8], it: u64| {
        let r = std::panic::catch_unwind(|| check(input));
        let why = match r {
            Ok(Ok(())) => return,
            Ok(Err(why)) => why,
            Err(p) => format!(
                "panicked: {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            ),
        };
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures");
        let _ = std::fs::create_dir_all(&dir);
        let file = dir.join(format!("{target}-{seed}-{it}"));
        let _ = std::fs::write(&file, input);
        panic!(
            "{target}: iteration {it} (seed {seed}): {why}; input saved to {}",
            file.display()
        );
    };
    for (i, s) in corpus.iter().enumerate() {
        run(s, i as u64);
    }
    let mut it = 0u64;
    loop {
        match secs {
            Some(d) if start.elapsed() >= d => break,
            None if it >= iters => break,
            _ => {}
        }
        let mut input = corpus[rng.below(corpus.len())].clone();
        let other = &corpus[rng.below(corpus.len())];
        if json {
            mutate_json(&mut rng, &mut input, other);
        } else {
            mutate_bytes(&mut rng, &mut input, other);
        }
        run(&input, it);
        it += 1;
    }
    eprintln!(
        "{target}: {} seeds and {it} mutants in {:.1} s",
        corpus.len(),
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn fuzz_wal_record_decoder() {
    fuzz("wal", false, |p| {
        let a = wal::decode(p);
        if a != wal::decode(p) {
            return Err("two decodes differ".into());
        }
        // What decodes re-encodes to a payload that decodes to the same record.
        if let Ok(rec) = a {
            let mut out = Vec::new();
            match &rec {
                wal::Record::Batch { tt, ops, key } => {
                    wal::encode_keyed_batch(*tt, key.as_deref(), ops, &mut out)
                }
                wal::Record::Outcome {
                    tt,
                    ok,
                    code,
                    message,
                } => wal::encode_outcome(*tt, *ok, code, message, &mut out),
            }
            if wal::decode(&out).as_ref() != Ok(&rec) {
                return Err("re-encoded record decodes differently".into());
            }
        }
        Ok(())
    });
}

#[test]
fn fuzz_manifest_record_decoder() {
    fuzz("manifest", false, |p| {
        let a = manifest::decode_entry(p);
        if a != manifest::decode_entry(p) {
            return Err("two decodes differ".into());
        }
        if let Ok(e) = a {
            if manifest::decode_entry(&manifest::encode_entry(&e)) != Ok(e) {
                return Err("re-encoded record decodes differently".into());
            }
        }
        Ok(())
    });
}

/// The segment verifier over byte mutants, and the mapped open of a full image over the
/// same mutants re-sealed ([`reseal`]: header, chunk and footer crcs recomputed), so that
/// forged values reach the structural checks behind the checksums. Properties: no panic;
/// what the mapped open accepts, the decoding path (`seg::decode_structure`: decode, ids
/// within the dictionaries, legal times) accepts too.
#[test]
fn fuzz_segment_verifier() {
    fuzz("segment", false, |b| {
        let a = seg::verify(b).is_ok();
        if a != seg::verify(b).is_ok() {
            return Err("two verifications differ".into());
        }
        let Some(sealed) = reseal(b) else {
            return Ok(());
        };
        let opened = tgms_engine::format::open_image(&sealed);
        if opened.is_ok() {
            if let Err(e) = seg::decode_structure(&sealed) {
                return Err(format!(
                    "the mapped open accepts what decoding refuses: {e:?}"
                ));
            }
        }
        // The converse is not asked: the mapped open is stricter in places (it requires a
        // closed-row set's roaring containers to be contiguous, which the deserializer of
        // `seg::verify` does not; found by this target).
        Ok(())
    });
}

/// `b` with its header, chunk and footer checksums recomputed from its own directory, so a
/// mutant whose layout still holds passes every checksum; `None` when the trailer or the
/// directory no longer locate the chunks.
fn reseal(b: &[u8]) -> Option<Vec<u8>> {
    let (head, tail, entry) = (
        seg::SEG_HEADER_LEN,
        seg::SEG_TRAILER_LEN,
        seg::DIR_ENTRY_LEN,
    );
    if b.len() < head + tail {
        return None;
    }
    let mut b = b.to_vec();
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let crc = crc32fast::hash(&b[..80]);
    b[80..84].copy_from_slice(&crc.to_le_bytes());
    let t = b.len() - tail;
    let f_off = usize::try_from(u64_at(&b, t))
        .ok()
        .filter(|&f| f >= head && f <= t - 4)?;
    let n = u32_at(&b, f_off) as usize;
    if n.checked_mul(entry)?.checked_add(f_off + 4)? != t {
        return None;
    }
    for k in 0..n {
        let e = f_off + 4 + entry * k;
        let off = usize::try_from(u64_at(&b, e + 4)).ok()?;
        let len = u32_at(&b, e + 12) as usize;
        if off.checked_add(len)? > f_off {
            return None;
        }
        let crc = crc32fast::hash(&b[off..off + len]);
        b[e + 16..e + 20].copy_from_slice(&crc.to_le_bytes());
    }
    b[t + 8..t + 16].copy_from_slice(&((t - f_off) as u64).to_le_bytes());
    let crc = crc32fast::hash(&b[f_off..t]);
    b[t + 16..t + 20].copy_from_slice(&crc.to_le_bytes());
    Some(b)
}

#[test]
fn fuzz_event_log_line_parser() {
    fuzz("eventlog", true, |line| {
        let a = tgms_engine::eventlog::parse_line(line);
        if a != tgms_engine::eventlog::parse_line(line) {
            return Err("two parses differ".into());
        }
        // Every op of an accepted line normalizes or becomes a raw op that fails with a
        // message; neither panics.
        if let Ok((_, ops)) = a {
            for o in &ops {
                let op = Op::from_json(o);
                let _ = op.validate();
            }
        }
        Ok(())
    });
}

#[test]
fn fuzz_batch_json() {
    fuzz("batch", true, |text| {
        let Ok(text) = std::str::from_utf8(text) else {
            return Ok(());
        };
        let Ok(Value::Array(items)) = tgms_engine::canon::parse(text) else {
            return Ok(());
        };
        for (i, v) in items.iter().enumerate() {
            // The strict input check (`tgms write`) answers every op without panicking, and
            // what it accepts normalizes.
            let strict = tgms_engine::op_input::check_input_op(v, i);
            let op = Op::from_json(v);
            if strict.is_ok() && v.get("op").and_then(Value::as_str).is_none() {
                return Err("an op without a kind passed the strict check".into());
            }
            let again = Op::from_json(v);
            if op != again {
                return Err("two normalizations differ".into());
            }
            match &op {
                // A raw op fails validation with a message, never silently.
                Op::Raw(_) => {
                    if op.validate().is_ok() {
                        return Err(format!("raw op validates: {op:?}"));
                    }
                }
                _ => {
                    op.validate()
                        .map_err(|e| format!("normalized op fails: {e}"))?;
                    // The log round trip keeps a normalized op.
                    let mut p = Vec::new();
                    wal::encode_batch(1, std::slice::from_ref(&op), &mut p);
                    match wal::decode(&p) {
                        Ok(wal::Record::Batch { ops, .. }) if ops == vec![op.clone()] => {}
                        other => return Err(format!("log round trip: {other:?}")),
                    }
                }
            }
        }
        Ok(())
    });
}

#[test]
fn fuzz_plan_json_and_refs() {
    use tgms_verifier::{plan, refpath, validate};
    fuzz("plan", true, |text| {
        let Ok(text) = std::str::from_utf8(text) else {
            return Ok(());
        };
        let Ok(p) = plan::parse_plan_text(text) else {
            return Ok(());
        };
        for r in refpath::find_refs(&p) {
            let _ = r;
        }
        if let Some(steps) = p.get("steps").and_then(Value::as_array) {
            for s in steps {
                if let Some(args) = s.get("args") {
                    for found in refpath::find_refs(args) {
                        let _ = found;
                    }
                    if let Some(r) = refpath::ref_of(args) {
                        let _ = refpath::parse_ref_value(r);
                    }
                }
            }
        }
        let opts = validate::Options::default();
        let a = validate::validate_static(&p, &opts).to_json();
        if a != validate::validate_static(&p, &opts).to_json() {
            return Err("two validations differ".into());
        }
        Ok(())
    });
}

/// The claim verifier and gating over mutated answer objects, against a real trace: never a
/// panic, the same verdicts twice, and gating leaves no unsupported claim.
/// Seeds (`tests/fuzz-corpus/claims/`) are hand-written answer objects citing the trace's
/// step `s1`: true and false counts, entities, orderings, patterns, a typed answer.
#[test]
fn fuzz_claim_verifier() {
    use tgms_engine::{canon, Store};
    use tgms_verifier::{claims, exec, validate};
    let d = tempfile::tempdir().unwrap();
    let mut st = Store::create(d.path()).unwrap();
    let ev = json!({"op": "ingest_events", "events": [
        {"src": "a", "dst": "b", "rel_type": "MSG", "vt_s": 10},
        {"src": "b", "dst": "c", "rel_type": "MSG", "vt_s": 20},
        {"src": "c", "dst": "a", "rel_type": "MSG", "vt_s": 30}]});
    st.write(vec![Op::from_json(&ev)]).unwrap();
    let plan = json!({"plan_id": "fz", "steps": [{"id": "s1", "op": "entity_history",
        "args": {"uid": "a", "include_edges": true}}],
        "answer_spec": {"kind": "count", "from": "s1.edges_total"}});
    let report = validate::validate_static(&plan, &validate::Options::default());
    let p = report.plan.clone().expect("the seed plan is valid");
    let results = exec::ResultStore::memory();
    let ex = exec::execute(&p, st.snapshot(), &results, &exec::ExecOptions::default()).unwrap();
    let trace = ex.trace;
    let st = std::panic::AssertUnwindSafe(&st);
    fuzz("claims", true, |text| {
        let Ok(text) = std::str::from_utf8(text) else {
            return Ok(());
        };
        let Ok(ans) = canon::parse(text) else {
            return Ok(());
        };
        let ctx = claims::Ctx {
            trace: &trace,
            results: &results,
            snap: Some(st.snapshot()),
            honor_truncation: true,
        };
        let v = claims::verify(&ctx, &ans);
        if v != claims::verify(&ctx, &ans) {
            return Err("two verifications differ".into());
        }
        // Claim ids are unique in every object the verifier accepts (D-V10).
        if v["schema_valid"] == true {
            let mut ids = std::collections::BTreeSet::new();
            for c in ans["claims"].as_array().into_iter().flatten() {
                if !ids.insert(c["id"].to_string()) {
                    return Err(format!("claim id {} accepted twice", c["id"]));
                }
            }
        }
        // Gating (plans-and-claims §9) drops exactly the `unsupported` claims, by position;
        // the re-verified gated object holds none.
        let (gated, second) = claims::gate(&ctx, &ans);
        if v["schema_valid"] == true {
            let kept: Vec<&Value> = ans["claims"]
                .as_array()
                .into_iter()
                .flatten()
                .zip(v["claims"].as_array().into_iter().flatten())
                .filter(|(_, verdict)| verdict["verdict"] != "unsupported")
                .map(|(c, _)| c)
                .collect();
            let got: Vec<&Value> = gated["claims"].as_array().into_iter().flatten().collect();
            if got != kept {
                return Err("gating did not keep exactly the claims not unsupported".into());
            }
        }
        if second["claims"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["verdict"] == "unsupported")
        {
            return Err("the gated answer still holds an unsupported claim".into());
        }
        Ok(())
    });
}

/// Regenerates `tests/fuzz-corpus/` from real encoders and a real store.
#[test]
#[ignore]
fn write_seed_corpus() {
    use tgms_engine::Store;
    let put = |target: &str, name: &str, bytes: &[u8]| {
        let d = corpus_dir(target);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(name), bytes).unwrap();
    };
    let batches: Vec<Vec<Value>> = vec![
        vec![
            json!({"op":"assert_node","uid":"a","label":"N","props":{"p":1,"f":0.5,"s":"x"},"vt_s":0,"vt_e":100}),
        ],
        vec![
            json!({"op":"assert_edge","src":"a","dst":"b","rel_type":"R","props":{"w":1},"vt_s":10,"vt_e":20,"reason":"seen","src_label":"N"}),
        ],
        vec![json!({"op":"ingest_events","events":[
            {"src":"a","dst":"c","rel_type":"MSG","vt_s":30},
            {"src":"c","dst":"a","rel_type":"MSG","vt_s":31,"vt_e":40,"props":{"k":"v"},"disc":"d1"},
            {"src":"c","dst":"b","rel_type":"MSG","vt_s":32,"vt_e":null}]})],
        vec![
            json!({"op":"correct","ref":{"kind":"node","uid":"a"},"props":{"p":2},"vt_s":40,"vt_e":60,"reason":"fix p","provenance_ref":{"doc":1}}),
            json!({"op":"retract","ref":{"kind":"edge","src":"a","dst":"b","rel_type":"R","disc":""},"t":15,"reason":"gone"}),
        ],
        vec![json!({"op":"retract","ref":{"kind":"node","uid":"zzz"},"t":5})],
    ];
    for (i, b) in batches.iter().enumerate() {
        put(
            "batch",
            &format!("{i}.json"),
            serde_json::to_string(b).unwrap().as_bytes(),
        );
        let ops: Vec<Op> = b.iter().map(Op::from_json).collect();
        let mut p = Vec::new();
        let key = (i % 2 == 1).then(|| format!("key-{i}"));
        wal::encode_keyed_batch(1000 + i as i64, key.as_deref(), &ops, &mut p);
        put("wal", &format!("batch-{i}.bin"), &p);
    }
    let mut p = Vec::new();
    wal::encode_outcome(
        1004,
        false,
        "E_NOT_FOUND",
        "no believed node version",
        &mut p,
    );
    put("wal", "outcome.bin", &p);
    // A real store: flush segments, a compacted image, manifest records, an export.
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("s");
    let mut s = Store::create(&dir).unwrap();
    for (i, b) in batches.iter().enumerate() {
        let _ = s.write_at(1000 + i as i64, b.iter().map(Op::from_json).collect());
        if i == 2 {
            s.flush().unwrap();
        }
    }
    s.flush().unwrap();
    let (entries, _) = manifest::read(&dir.join("MANIFEST")).unwrap();
    for (i, e) in entries.iter().enumerate() {
        put(
            "manifest",
            &format!("record-{i}.bin"),
            &manifest::encode_entry(e),
        );
        let seg = std::fs::read(dir.join(manifest::seg_name(e.seq))).unwrap();
        put("segment", &format!("flush-{i}.tgs"), &seg);
    }
    s.compact().unwrap();
    let (entries, _) = manifest::read(&dir.join("MANIFEST")).unwrap();
    let img = std::fs::read(dir.join(manifest::seg_name(entries[0].seq))).unwrap();
    put("segment", "image.tgs", &img);
    put(
        "manifest",
        "image-record.bin",
        &manifest::encode_entry(&entries[0]),
    );
    drop(s);
    let mut out = Vec::new();
    tgms_engine::eventlog::export(&dir, &mut out, false).unwrap();
    for (i, line) in String::from_utf8(out).unwrap().lines().skip(1).enumerate() {
        put("eventlog", &format!("line-{i}.json"), line.as_bytes());
    }
    let plans = [
        json!({"plan_id": "p1", "question": "Who is near a?", "steps": [
            {"id": "s1", "op": "snapshot_subgraph", "args": {"seeds": ["a"], "hops": 1, "t_valid": 1_700_000_004_000_000i64, "limit": 10000}}],
            "answer_spec": {"kind": "entity_set", "from": "s1.nodes"}}),
        json!({"plan_id": "p2", "steps": [
            {"id": "s1", "op": "snapshot_subgraph", "args": {"seeds": ["a"], "hops": 1, "t_valid": 5}},
            {"id": "s2", "op": "neighbors_at", "args": {"node": {"$ref": "s1.nodes[0]"}, "t": 5, "direction": "out"}}],
            "answer_spec": {"kind": "count", "from": "s2"}}),
        json!({"plan_id": "p3", "steps": [{"id": "t1", "op": "x", "args": {}}], "answer_spec": {"kind": "count", "from": "t9"}}),
    ];
    for (i, p) in plans.iter().enumerate() {
        put("plan", &format!("{i}.json"), p.to_string().as_bytes());
    }
}
