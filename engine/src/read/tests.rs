use super::starts::run_pieces;
use super::*;

/// Pieces cover the list in order and never split a run of equal `t`.
#[test]
fn run_pieces_keep_runs_whole() {
    let ts = [1, 1, 1, 2, 3, 3, 3, 3, 3, 4, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7];
    for chunk in 1..=ts.len() + 1 {
        let mut ev: Vec<StartEvent> = ts
            .iter()
            .map(|&t| StartEvent { t, src: 0, dst: 0 })
            .collect();
        let pieces = run_pieces(&mut ev, chunk);
        let flat: Vec<i64> = pieces.iter().flat_map(|p| p.iter().map(|e| e.t)).collect();
        assert_eq!(flat, ts, "chunk {chunk}");
        for w in pieces.windows(2) {
            assert!(!w[0].is_empty() && !w[1].is_empty());
            assert_ne!(w[0].last().unwrap().t, w[1][0].t, "chunk {chunk}");
        }
        if chunk == 1 {
            assert_eq!(pieces.len(), 7);
        }
    }
    assert!(run_pieces(&mut [], 4).is_empty());
}
