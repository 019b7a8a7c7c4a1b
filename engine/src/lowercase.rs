//! Case-insensitive substring search over an interned name table (the uid dictionary, for
//! `resolve_entities`, operators.md §20): every name's `str::to_lowercase` form in one
//! contiguous buffer, built once per name set and cached by the interner, searched with
//! `memchr::memmem`.

use memchr::memmem;

/// A name's terminator in [`LowerHeap::buf`]: 0xFF never occurs in UTF-8 text, so a match of
/// a UTF-8 needle never spans two names.
const SEP: u8 = 0xFF;

/// Lowercase forms of names `0..n` in id order.
pub(crate) struct LowerHeap {
    /// Name `i`'s lowercase form at `buf[start[i] .. start[i + 1] - 1]`, then [`SEP`].
    buf: Vec<u8>,
    /// `n + 1` offsets; `start[n] = buf.len()`.
    start: Vec<usize>,
}

impl LowerHeap {
    /// The heap of `names` (ids = positions).
    pub(crate) fn build<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> LowerHeap {
        let mut buf = Vec::new();
        let mut start = Vec::with_capacity(names.len() + 1);
        for n in names {
            start.push(buf.len());
            if n.is_ascii() {
                // Equal to `to_lowercase` on ASCII text, without the allocation.
                buf.extend(n.bytes().map(|b| b.to_ascii_lowercase()));
            } else {
                // Whole-name mapping: `to_lowercase` is context-sensitive (final sigma).
                buf.extend_from_slice(n.to_lowercase().as_bytes());
            }
            buf.push(SEP);
        }
        start.push(buf.len());
        LowerHeap { buf, start }
    }

    /// Ids of the names whose lowercase form contains `needle` (already lowercase), ascending.
    pub(crate) fn containing(&self, needle: &str) -> Vec<u32> {
        let finder = memmem::Finder::new(needle.as_bytes());
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < self.buf.len() {
            let Some(p) = finder.find(&self.buf[pos..]) else {
                break;
            };
            // The name holding the match start; the match ends before its terminator.
            let id = self.start.partition_point(|&s| s <= pos + p) - 1;
            out.push(id as u32);
            pos = self.start[id + 1];
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<Box<str>> {
        v.iter().map(|s| Box::from(*s)).collect()
    }

    /// Every (name, needle) pair against `to_lowercase().contains`.
    #[test]
    fn matches_to_lowercase_contains() {
        let ns = names(&[
            "n1", "N10", "xn1", "", "ΣΑΣ", "straße", "İx", "n", "1n", "ab", "AB", "n1n1",
        ]);
        let heap = LowerHeap::build(ns.iter().map(|n| &**n));
        for q in [
            "n1", "N1", "σ", "ς", "ασ", "ß", "i\u{307}", "n", "1n", "b", "a", "n1n",
        ] {
            let lq = q.to_lowercase();
            let want: Vec<u32> = (0..ns.len() as u32)
                .filter(|&i| ns[i as usize].to_lowercase().contains(&lq))
                .collect();
            assert_eq!(heap.containing(&lq), want, "query {q:?}");
        }
    }

    /// A needle spanning the end of one name and the start of the next is no match.
    #[test]
    fn no_match_across_names() {
        let heap = LowerHeap::build(names(&["ab", "cd"]).iter().map(|n| &**n));
        assert_eq!(heap.containing("bc"), Vec::<u32>::new());
        assert_eq!(heap.containing("cd"), vec![1]);
        assert_eq!(heap.containing(""), vec![0, 1]);
    }
}
