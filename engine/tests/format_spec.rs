//! `format-spec.md` is normative: its checksum check values and its worked example must be
//! what the code produces. The worked example's bytes are regenerated here from a real store.

use serde_json::json;
use tgms_engine::{Op, Store};

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

#[test]
fn worked_example_bytes_match_a_real_store() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s");
    let mut s = Store::create(&path).unwrap();
    s.write_at(
        1000,
        vec![Op::from_json(
            &json!({"op":"assert_node","uid":"a","label":"N","props":{"p":1},"vt_s":0,"vt_e":100}),
        )],
    )
    .unwrap();
    drop(s);
    let bytes = std::fs::read(path.join("wal.log")).unwrap();
    let dump: Vec<String> = bytes
        .chunks(16)
        .enumerate()
        .map(|(i, c)| {
            let hex: Vec<String> = c.iter().map(|b| format!("{b:02x}")).collect();
            format!("{:04x}  {}", i * 16, hex.join(" "))
        })
        .collect();
    let spec = spec_text();
    let begin = spec.find("<!-- worked-example:wal:begin -->").unwrap();
    let end = spec.find("<!-- worked-example:wal:end -->").unwrap();
    let block: Vec<String> = spec[begin..end]
        .lines()
        .filter(|l| {
            l.len() > 6 && l.as_bytes()[4] == b' ' && l[..4].chars().all(|c| c.is_ascii_hexdigit())
        })
        .map(str::to_string)
        .collect();
    assert_eq!(dump, block);
}
