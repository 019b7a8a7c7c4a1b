//! `format-spec.md` is normative: its checksum check values and its worked example must be
//! what the code produces. The worked example's bytes are regenerated here from a real store.

use serde_json::json;
use tgms_engine::{Op, Options, Store};

fn spec_text() -> String {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../format-spec.md");
    std::fs::read_to_string(p).expect("format-spec.md at the workspace root")
}

#[test]
fn checksum_check_values() {
    assert_eq!(crc32fast::hash(b"123456789"), 0xCBF43926);
    assert_eq!(
        blake3::hash(b"").to_hex().as_str(),
        "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
    );
    let spec = spec_text();
    for needle in [
        "0xCBF43926",
        "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ] {
        assert!(spec.contains(needle), "format-spec.md lacks {needle}");
    }
}

fn hex_dump(bytes: &[u8]) -> Vec<String> {
    bytes
        .chunks(16)
        .enumerate()
        .map(|(i, c)| {
            let hex: Vec<String> = c.iter().map(|b| format!("{b:02x}")).collect();
            format!("{:04x}  {}", i * 16, hex.join(" "))
        })
        .collect()
}

/// The hex lines of the spec block `<!-- worked-example:NAME:begin -->` … `end`.
fn spec_block(spec: &str, name: &str) -> Vec<String> {
    let begin = spec
        .find(&format!("<!-- worked-example:{name}:begin -->"))
        .unwrap_or_else(|| panic!("format-spec.md lacks worked example {name}"));
    let end = spec
        .find(&format!("<!-- worked-example:{name}:end -->"))
        .unwrap();
    spec[begin..end]
        .lines()
        .filter(|l| {
            l.len() > 6 && l.as_bytes()[4] == b' ' && l[..4].chars().all(|c| c.is_ascii_hexdigit())
        })
        .map(str::to_string)
        .collect()
}

/// The store of the worked example: one batch at tt 1000, then (for §12.2) a flush.
fn example_store(path: &std::path::Path, flush: bool) {
    let mut s = Store::create_with(
        path,
        Options {
            flush_rows: Some(0),
            ..Options::default()
        },
    )
    .unwrap();
    s.write_at(
        1000,
        vec![Op::from_json(
            &json!({"op":"assert_node","uid":"a","label":"N","props":{"p":1},"vt_s":0,"vt_e":100}),
        )],
    )
    .unwrap();
    if flush {
        s.flush().unwrap();
    }
}

#[test]
fn worked_example_bytes_match_a_real_store() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s");
    example_store(&path, false);
    let bytes = std::fs::read(path.join("wal.log")).unwrap();
    assert_eq!(hex_dump(&bytes), spec_block(&spec_text(), "wal"));
}

#[test]
fn worked_example_segment_and_manifest_match_a_real_store() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s");
    example_store(&path, true);
    let seg = std::fs::read(path.join("seg-00000001.tgs")).unwrap();
    let man = std::fs::read(path.join("MANIFEST")).unwrap();
    if std::env::var_os("TGMS_PRINT_EXAMPLE").is_some() {
        println!("SEGMENT\n{}", hex_dump(&seg).join("\n"));
        println!("MANIFEST\n{}", hex_dump(&man).join("\n"));
    }
    let spec = spec_text();
    assert_eq!(hex_dump(&seg), spec_block(&spec, "segment"));
    assert_eq!(hex_dump(&man), spec_block(&spec, "manifest"));
}
