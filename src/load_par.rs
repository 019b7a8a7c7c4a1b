//! Parallel parsing of the line formats (`snap`, `snap-csv-rated`, `jsonl-events`) for
//! `tgms ingest`: the input is read in blocks cut at line boundaries, each block is cut
//! again into pieces whose first line numbers are known (a count of the newlines before
//! them), the pieces are parsed on all cores (rayon) and their records handed on in file
//! order. A reader thread prepares the next block while the caller consumes this one, so
//! parsing overlaps with writing. The records, their line numbers and the point where the
//! caller stops are exactly those of reading the file line by line: a line ends at `\n` (one
//! `\r` before it is dropped), a last line without `\n` is a line, an empty tail is not.

use rayon::prelude::*;
use std::io::Read;
use std::path::Path;
use std::sync::mpsc;
use tgms_engine::{Error, Result};

/// Bytes read per block (a block is parsed while the previous one is consumed).
pub const BLOCK_BYTES: usize = 1 << 20;
/// Bytes per parallel work unit inside a block.
const PIECE_BYTES: usize = 64 << 10;

/// One parsed piece: its records in line order.
type Piece<T> = Vec<T>;

/// Reads `input` in line-aligned blocks, parses every line with `parse(line_no, bytes)`
/// (`bytes` without its line end) in parallel, and hands the results to `f` in file order;
/// `f` returns `false` to stop (the rest is not handed on). Errors: reading the input
/// (named by `path`), or `f`'s.
pub fn read_lines_par<T: Send>(
    path: &Path,
    input: impl Read + Send,
    parse: impl Fn(u64, &[u8]) -> T + Sync,
    f: impl FnMut(T) -> Result<bool>,
) -> Result<()> {
    let mut input = input;
    let mut carry: Vec<u8> = Vec::new();
    let mut next_no = 1u64;
    let parse = &parse;
    let next = move || {
        let block = match next_block(path, &mut input, &mut carry) {
            Ok(Some(b)) => b,
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        };
        let pieces = cut(&block, next_no);
        next_no = pieces.last().map_or(next_no, |p| p.1 + p.2);
        let parsed: Vec<Piece<T>> = pieces
            .par_iter()
            .map(|&(range_start, first_no, lines, range_end)| {
                parse_piece(&block[range_start..range_end], first_no, lines, parse)
            })
            .collect();
        Some(Ok(parsed))
    };
    in_order(&format!("the parser of {}", path.display()), next, f)
}

/// Runs `next` on a reader thread, one group ahead of `f`: each call gives the next group
/// of records (pieces, in order), `None` at the end, or an error, which ends the reading
/// and is returned after the records before it. `f` gets every record in order and returns
/// `false` to stop (the reader then ends at its next group). Memory stays about two
/// groups. `what` names the reader in the error of one that stopped unexpectedly. The
/// line formats' parser and the columnar readers (`load_columns.rs`) both run on it.
pub(crate) fn in_order<T: Send>(
    what: &str,
    mut next: impl FnMut() -> Option<Result<Vec<Vec<T>>>> + Send,
    mut f: impl FnMut(T) -> Result<bool>,
) -> Result<()> {
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<Result<Vec<Vec<T>>>>(1);
        let reader = scope.spawn(move || {
            while let Some(group) = next() {
                let failed = group.is_err();
                // A closed receiver means the caller stopped: nothing more to read.
                if tx.send(group).is_err() || failed {
                    return;
                }
            }
        });
        let outcome = hand_on(&rx, &mut f);
        drop(rx);
        if reader.join().is_err() {
            return Err(Error::state(format!("{what} stopped unexpectedly")));
        }
        outcome
    })
}

/// Hands the records of each group received on `rx` to `f`, until `f` returns `false` or
/// an error, or a group is an error (returned).
fn hand_on<T>(
    rx: &mpsc::Receiver<Result<Vec<Vec<T>>>>,
    f: &mut impl FnMut(T) -> Result<bool>,
) -> Result<()> {
    for group in rx.iter() {
        for r in group?.into_iter().flatten() {
            if !f(r)? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The next block of whole lines: `carry` (the unfinished line of the previous block) and
/// at least [`BLOCK_BYTES`] more, cut after its last `\n`; at the end of the input, the
/// rest (its last line may lack `\n`). `None` when nothing is left.
fn next_block(path: &Path, input: &mut impl Read, carry: &mut Vec<u8>) -> Result<Option<Vec<u8>>> {
    let mut block = std::mem::take(carry);
    loop {
        let have = block.len();
        block.resize(have + BLOCK_BYTES, 0);
        let mut filled = have;
        let mut eof = false;
        while filled < block.len() {
            match input.read(&mut block[filled..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(path, e)),
            }
        }
        block.truncate(filled);
        if eof {
            return Ok((!block.is_empty()).then_some(block));
        }
        // A line longer than the block: read on until its end.
        if let Some(last_nl) = memchr::memrchr(b'\n', &block[have..]).map(|i| have + i) {
            *carry = block.split_off(last_nl + 1);
            return Ok(Some(block));
        }
    }
}

/// Cuts a block of whole lines into work units at line boundaries: `(start, first line
/// number, line count, end)` each, numbered from `first_no`.
fn cut(block: &[u8], first_no: u64) -> Vec<(usize, u64, u64, usize)> {
    let mut out = Vec::with_capacity(block.len() / PIECE_BYTES + 1);
    let (mut start, mut no) = (0usize, first_no);
    while start < block.len() {
        let want = (start + PIECE_BYTES).min(block.len());
        // The piece ends after the first `\n` at or beyond `want` (or at the block's end).
        let end = match memchr::memchr(b'\n', &block[want.saturating_sub(1)..]) {
            Some(i) if want < block.len() => want.saturating_sub(1) + i + 1,
            _ => block.len(),
        };
        let piece = &block[start..end];
        let mut lines = memchr::memchr_iter(b'\n', piece).count() as u64;
        if piece.last() != Some(&b'\n') {
            lines += 1;
        }
        out.push((start, no, lines, end));
        no += lines;
        start = end;
    }
    out
}

/// Parses the `lines` lines of `piece`, numbered from `first_no`.
fn parse_piece<T>(
    piece: &[u8],
    first_no: u64,
    lines: u64,
    parse: &(impl Fn(u64, &[u8]) -> T + Sync),
) -> Vec<T> {
    let mut out = Vec::with_capacity(lines as usize);
    let mut rest = piece;
    let mut no = first_no;
    while !rest.is_empty() {
        // One `\r` is part of the line end only before a `\n`.
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(i) => {
                let l = &rest[..i];
                (l.strip_suffix(b"\r").unwrap_or(l), &rest[i + 1..])
            }
            None => (rest, &rest[rest.len()..]),
        };
        out.push(parse(no, line));
        no += 1;
        rest = next;
    }
    out
}
