//! The MiniLM re-ranker of `vector-rag` (`--retrieval minilm`): BM25 picks
//! [`RERANK_CANDIDATES`] facts, all-MiniLM-L6-v2 embeds them and the question (the Python
//! of `embed.py`, run by the same interpreter as the DuckDB runner), and the facts are
//! ordered by cosine similarity to the question (ties by BM25 rank).

use std::io::Write;
use std::process::{Command, Stdio};

/// The embedder program (`python -c EMBEDDER`).
pub const EMBEDDER: &str = include_str!("embed.py");
/// The embedding width of all-MiniLM-L6-v2.
pub const DIM: usize = 384;
/// Facts BM25 hands to the re-ranker per question.
pub const RERANK_CANDIDATES: usize = 100;

/// The unit-length embeddings of `texts`, one per text, or the error text.
pub fn embed(python: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
    let mut child = Command::new(python)
        .arg("-c")
        .arg(EMBEDDER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!("cannot start {python}: {e}; install the embedding model with bench/eval/duckdb-venv.sh and pass --python VENV/bin/python")
        })?;
    let input = serde_json::to_string(texts).map_err(|e| e.to_string())?;
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(input.as_bytes())
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "the embedder failed: {}",
            err.lines().last().unwrap_or("no message")
        ));
    }
    if out.stdout.len() != texts.len() * DIM * 4 {
        return Err(format!(
            "the embedder wrote {} bytes for {} texts (expected {})",
            out.stdout.len(),
            texts.len(),
            texts.len() * DIM * 4
        ));
    }
    Ok(out
        .stdout
        .chunks_exact(DIM * 4)
        .map(|row| {
            row.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        })
        .collect())
}

/// Cosine similarity of unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum()
}

/// `cands` (best BM25 first) re-ordered by similarity to `query`, the best `k`.
pub fn rerank<'d>(
    python: &str,
    query: &str,
    cands: &[&'d str],
    k: usize,
) -> Result<Vec<&'d str>, String> {
    let mut texts = vec![query];
    texts.extend_from_slice(cands);
    let e = embed(python, &texts)?;
    let mut scored: Vec<(usize, f64)> = (0..cands.len())
        .map(|i| (i, cosine(&e[0], &e[i + 1])))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(scored.into_iter().take(k).map(|(i, _)| cands[i]).collect())
}
