//! Identity derivations of `data-model.md` §3: `eid` and `vid` are first 24 lowercase hex
//! characters of SHA-256 digests; they are computed on output, never stored as text.

use crate::canon;
use sha2::{Digest, Sha256};

/// The 12 bytes behind a 24-hex `eid`/`vid`. Byte order equals hex-string order.
pub type Id12 = [u8; 12];

fn first12(d: &[u8]) -> Id12 {
    let mut out = [0u8; 12];
    out.copy_from_slice(&d[..12]);
    out
}

/// `eid(src, dst, rel_type, disc)` as raw bytes.
pub fn eid_bytes(src: &str, dst: &str, rel_type: &str, disc: &str) -> Id12 {
    let mut s = String::with_capacity(src.len() + dst.len() + rel_type.len() + disc.len() + 16);
    s.push('[');
    canon::write_str(&mut s, src);
    s.push(',');
    canon::write_str(&mut s, dst);
    s.push(',');
    canon::write_str(&mut s, rel_type);
    s.push(',');
    canon::write_str(&mut s, disc);
    s.push(']');
    first12(&Sha256::digest(s.as_bytes()))
}

/// `eid` as 24 lowercase hex characters.
pub fn eid(src: &str, dst: &str, rel_type: &str, disc: &str) -> String {
    canon::hex(&eid_bytes(src, dst, rel_type, disc))
}

/// `vid(identity, tt_s, vt_s)` as raw bytes; `identity` is a uid or a 24-hex eid.
pub fn vid_bytes(identity: &str, tt_s: i64, vt_s: i64) -> Id12 {
    vid_of(identity.as_bytes(), tt_s, vt_s)
}

/// [`vid_bytes`] of an edge version from its eid's bytes (the identity is the eid's hex),
/// without building the hex string.
pub fn edge_vid_bytes(eid: &Id12, tt_s: i64, vt_s: i64) -> Id12 {
    let mut text = [0u8; 24];
    for (pair, &b) in text.chunks_exact_mut(2).zip(eid) {
        pair.copy_from_slice(&canon::hex_pair(b));
    }
    vid_of(&text, tt_s, vt_s)
}

fn vid_of(identity: &[u8], tt_s: i64, vt_s: i64) -> Id12 {
    let mut h = Sha256::new();
    let mut n = itoa::Buffer::new();
    h.update(identity);
    h.update(b":");
    h.update(n.format(tt_s).as_bytes());
    h.update(b":");
    h.update(n.format(vt_s).as_bytes());
    first12(&h.finalize())
}

/// `vid` as 24 lowercase hex characters.
pub fn vid(identity: &str, tt_s: i64, vt_s: i64) -> String {
    canon::hex(&vid_bytes(identity, tt_s, vt_s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edge_vid_from_eid_bytes_is_the_vid_of_the_eid_hex() {
        for (s, d, t, v) in [("a", "b", 0, 0), ("x", "y", -5, 1_700_000_000_000_000)] {
            let e = eid_bytes(s, d, "R", "");
            assert_eq!(
                edge_vid_bytes(&e, t, v),
                vid_bytes(&eid(s, d, "R", ""), t, v)
            );
        }
    }

    #[test]
    fn spec_identity_vectors() {
        assert_eq!(eid("a", "b", "R", ""), "f39a58802118efa2055a9e26");
        assert_eq!(eid("a", "b", "M", "#0"), "525d5e8ec7d4615ae428838b");
        assert_eq!(eid("a", "b", "M", "#1"), "de2f5c2c50d5a7388da43b40");
        assert_eq!(eid("café", "b", "R", ""), "ad2e395e64c754ee19627466");
        assert_eq!(eid("a\"b", "c", "R", ""), "75618844c8091c836ca72fd6");
        assert_eq!(vid("a", 1, 0), "6a8bfaa2db98618ce6c976c4");
        assert_eq!(
            vid("f39a58802118efa2055a9e26", 1, 10),
            "22fded770c643fb11ab4ebde"
        );
    }
}
