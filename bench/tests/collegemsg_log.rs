//! The CollegeMsg replay log of the spec's `evaluation.md` §7.2: rebuilt byte-identical to TGMS's
//! frozen log, and imported with the store figures the spec quotes (TV20 digest).

use sha2::{Digest, Sha256};
use std::path::PathBuf;
use tgms_bench::collegemsg_log::write_collegemsg_log;
use tgms_engine::{eventlog, Options, Store, OPEN_END};

fn college_msg() -> Option<String> {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/CollegeMsg.txt"
    ));
    match std::fs::read_to_string(&p) {
        Ok(t) => Some(t),
        Err(e) => {
            eprintln!(
                "SKIPPED: CollegeMsg replay-log test needs {} ({e})",
                p.display()
            );
            None
        }
    }
}

#[test]
fn collegemsg_log_is_byte_identical_and_imports_to_the_quoted_store() {
    let Some(text) = college_msg() else { return };
    let mut log = Vec::new();
    write_collegemsg_log(&text, &mut log).unwrap();

    // evaluation.md §7.2: SHA-256 and length of TGMS's frozen file.
    let sha: String = Sha256::digest(&log)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(log.len(), 4_144_590);
    assert_eq!(
        sha,
        "e1d4f611ab5f60c552e0f22b0c36603eb060122a11deb465c656c20ab0ccc037"
    );
    // The ten batch ids quoted by the spec, in order.
    let ids: Vec<String> = String::from_utf8(log.clone())
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["batch_id"].to_string())
        .collect();
    let want = [
        "bd50f8362eeccf26",
        "63a7536bfbc812bf",
        "a7ac5bd7b7e52639",
        "4c5a9d1333601108",
        "13929a29ba1ab061",
        "9a16864406498e34",
        "a43d56bafc7147fb",
        "8252838afed8f7ee",
        "1b755dee0f77ae41",
        "b861650d087f2d06",
    ];
    let want: Vec<String> = want.iter().map(|i| format!("\"{i}\"")).collect();
    assert_eq!(ids, want);

    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("CollegeMsg.eventlog.jsonl");
    std::fs::write(&path, &log).unwrap();
    let mut s = Store::create_with(
        &d.path().join("store"),
        Options {
            no_sync: true,
            ..Options::default()
        },
    )
    .unwrap();
    let rep = eventlog::import(&mut s, &path, &mut |_| {}).unwrap();
    assert_eq!((rep.batches, rep.failed_batches), (10, 0));
    assert_eq!(rep.events, 59_835);
    assert!(!rep.torn_final_line);

    let st = s.stats();
    assert_eq!((st.n_batches, st.n_failed_batches), (10, 0));
    assert_eq!(st.n_entities, 1_899);
    assert_eq!(st.n_node_versions, 1_923);
    assert_eq!(st.n_edge_versions, 59_835);
    assert_eq!(
        (st.vt_min, st.vt_max),
        (Some(1_082_040_961_000_000), Some(1_098_777_142_000_001))
    );
    assert_eq!(st.max_out_degree, 1_091);
    let snap = s.snapshot();
    let nodes = snap.all_nodes();
    let believed = nodes.iter().filter(|n| n.tt_e() == OPEN_END).count();
    assert_eq!((believed, nodes.len() - believed), (1_915, 8));
    assert_eq!(
        s.digest(),
        "da717ee9940ec86ac48b6e83f3f0cd7473818faf0667dae69b7884a38f977285"
    );
}
