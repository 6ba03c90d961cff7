//! Standard base64 (RFC 4648, with padding), table driven and allocation-light: file bytes and
//! non-UTF-8 output cross the protocol this way, so it sits on the download hot path.

use std::fmt;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const INVALID: u8 = 0xff;

const DECODE: [u8; 256] = {
    let mut table = [INVALID; 256];
    let mut i = 0;
    while i < 64 {
        table[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Why a string is not valid base64.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub offset: usize,
    pub reason: &'static str,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid base64 at character {}: {}",
            self.offset, self.reason
        )
    }
}

impl std::error::Error for DecodeError {}

/// Length of the encoding of `len` bytes.
pub fn encoded_len(len: usize) -> usize {
    len.div_ceil(3) * 4
}

/// Appends the base64 encoding of `bytes` to `out`.
pub fn encode_into(bytes: &[u8], out: &mut String) {
    let mut buf = std::mem::take(out).into_bytes();
    encode_into_vec(bytes, &mut buf);
    // Every byte pushed comes from the ASCII alphabet, so this never takes the lossy path.
    *out = String::from_utf8(buf)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
}

/// Two alphabet characters per 12-bit value: half the table lookups of one per 6 bits.
const PAIRS: [[u8; 2]; 4096] = {
    let mut table = [[0u8; 2]; 4096];
    let mut i = 0;
    while i < 4096 {
        table[i] = [ALPHABET[i >> 6], ALPHABET[i & 63]];
        i += 1;
    }
    table
};

/// Appends the base64 encoding of `bytes` to a byte buffer (the download hot path: the
/// output is sized once and filled in place, 6 bytes in, 8 characters out).
pub fn encode_into_vec(bytes: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + encoded_len(bytes.len()), 0);
    let dst = &mut out[start..];
    #[cfg(target_arch = "x86_64")]
    let (bytes, dst) = {
        let done = crate::base64_simd::encode_bulk(bytes, dst);
        (&bytes[done..], &mut dst[done / 3 * 4..])
    };
    let sixes = bytes.len() / 6;
    let (body, rest_out) = dst.split_at_mut(sixes * 8);
    let chunks = bytes.chunks_exact(6);
    let rest = chunks.remainder();
    for (c, slot) in chunks.zip(body.chunks_exact_mut(8)) {
        let n = u64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], 0, 0]);
        let [a, b] = PAIRS[(n >> 52) as usize & 0xfff];
        let [c1, d] = PAIRS[(n >> 40) as usize & 0xfff];
        let [e, f] = PAIRS[(n >> 28) as usize & 0xfff];
        let [g, h] = PAIRS[(n >> 16) as usize & 0xfff];
        slot.copy_from_slice(&[a, b, c1, d, e, f, g, h]);
    }
    // At most five bytes remain: one whole group of three, then a padded one.
    let (three, tail_in) = rest.split_at(rest.len() / 3 * 3);
    let (three_out, tail) = rest_out.split_at_mut(three.len() / 3 * 4);
    if let [x, y, z] = *three {
        let n = (u32::from(x) << 16) | (u32::from(y) << 8) | u32::from(z);
        let [a, b] = PAIRS[(n >> 12) as usize & 0xfff];
        let [c, d] = PAIRS[n as usize & 0xfff];
        three_out.copy_from_slice(&[a, b, c, d]);
    }
    match *tail_in {
        [a] => {
            let n = u32::from(a) << 16;
            tail.copy_from_slice(&[
                ALPHABET[(n >> 18) as usize & 63],
                ALPHABET[(n >> 12) as usize & 63],
                b'=',
                b'=',
            ]);
        }
        [a, b] => {
            let n = (u32::from(a) << 16) | (u32::from(b) << 8);
            tail.copy_from_slice(&[
                ALPHABET[(n >> 18) as usize & 63],
                ALPHABET[(n >> 12) as usize & 63],
                ALPHABET[(n >> 6) as usize & 63],
                b'=',
            ]);
        }
        _ => {}
    }
}

/// The base64 encoding of `bytes`.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(encoded_len(bytes.len()));
    encode_into(bytes, &mut out);
    out
}

/// Decodes padded standard base64. Whitespace is not accepted: frames never contain it.
pub fn decode(text: &str) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    decode_into(text, &mut out)?;
    Ok(out)
}

/// Decodes like [`decode`], appending to `out` (which keeps its earlier bytes; on error it is
/// truncated back to them).
pub fn decode_into(text: &str, out: &mut Vec<u8>) -> Result<(), DecodeError> {
    decode_slice_into(text.as_bytes(), out)
}

/// [`decode_into`] for text that was never checked to be UTF-8 (any byte outside the
/// alphabet is refused, so the check would be wasted work).
pub fn decode_slice_into(input: &[u8], out: &mut Vec<u8>) -> Result<(), DecodeError> {
    let start = out.len();
    let result = decode_appending(input, out);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

fn decode_appending(input: &[u8], out: &mut Vec<u8>) -> Result<(), DecodeError> {
    if !input.len().is_multiple_of(4) {
        return Err(DecodeError {
            offset: input.len(),
            reason: "length is not a multiple of 4",
        });
    }
    let start = out.len();
    out.reserve(input.len() / 4 * 3);
    let quads = input.len() / 4;
    // Every quad but the last holds no padding: decode those in bulk. Only when the bulk pass
    // meets a character outside the alphabet does the quad-by-quad pass run from the start,
    // to name the exact offset and reason.
    let bulk = quads.saturating_sub(1);
    let first_checked = if decode_plain_quads(&input[..bulk * 4], out) {
        bulk
    } else {
        out.truncate(start);
        0
    };
    for (q, quad) in input.chunks_exact(4).enumerate().skip(first_checked) {
        let last = q + 1 == quads;
        let pad = if last {
            quad.iter().rev().take_while(|&&b| b == b'=').count()
        } else {
            0
        };
        if pad > 2 {
            return Err(DecodeError {
                offset: q * 4,
                reason: "too much padding",
            });
        }
        let mut n = 0u32;
        for (i, &b) in quad[..4 - pad].iter().enumerate() {
            let v = DECODE[usize::from(b)];
            if v == INVALID {
                return Err(DecodeError {
                    offset: q * 4 + i,
                    reason: if b == b'=' {
                        "padding before the end"
                    } else {
                        "character outside the base64 alphabet"
                    },
                });
            }
            n |= u32::from(v) << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - pad]);
        // Reject non-canonical encodings: the bits under the padding must be zero.
        let unused = match pad {
            1 => n & 0xff,
            2 => n & 0xffff,
            _ => 0,
        };
        if unused != 0 {
            return Err(DecodeError {
                offset: q * 4 + 3 - pad,
                reason: "non-zero bits before the padding",
            });
        }
    }
    Ok(())
}

/// Decodes quads that hold no padding into `out`; false when a character is outside the
/// alphabet (`out` then holds garbage and must be discarded).
fn decode_plain_quads(input: &[u8], out: &mut Vec<u8>) -> bool {
    let start = out.len();
    out.resize(start + input.len() / 4 * 3, 0);
    let dst = &mut out[start..];
    #[cfg(target_arch = "x86_64")]
    let (input, dst) = {
        let done = crate::base64_simd::decode_bulk(input, dst);
        (&input[done..], &mut dst[done / 4 * 3..])
    };
    let mut bad = 0u8;
    for (quad, slot) in input.chunks_exact(4).zip(dst.chunks_exact_mut(3)) {
        let (a, b, c, d) = (
            DECODE[usize::from(quad[0])],
            DECODE[usize::from(quad[1])],
            DECODE[usize::from(quad[2])],
            DECODE[usize::from(quad[3])],
        );
        // Valid values are below 64; INVALID has the high bit set.
        bad |= a | b | c | d;
        let n = (u32::from(a) << 18) | (u32::from(b) << 12) | (u32::from(c) << 6) | u32::from(d);
        slot.copy_from_slice(&n.to_be_bytes()[1..]);
    }
    bad & 0x80 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(plain.as_bytes()), encoded);
            assert_eq!(decode(encoded).unwrap(), plain.as_bytes());
        }
    }

    #[test]
    fn the_byte_buffer_encoder_matches_the_string_encoder() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(300).collect();
        for len in 0..bytes.len() {
            let mut vec = b"prefix".to_vec();
            encode_into_vec(&bytes[..len], &mut vec);
            assert_eq!(&vec[..6], b"prefix");
            assert_eq!(vec[6..], *encode(&bytes[..len]).as_bytes());
        }
    }

    #[test]
    fn a_bad_character_deep_in_the_body_is_reported_exactly() {
        let good = "Zm9v".repeat(10);
        for (at, bad, reason) in [
            (17, '*', "character outside the base64 alphabet"),
            (9, '=', "padding before the end"),
            (0, '"', "character outside the base64 alphabet"),
        ] {
            let mut text = good.clone();
            text.replace_range(at..at + 1, &bad.to_string());
            let err = decode(&text).unwrap_err();
            assert_eq!((err.offset, err.reason), (at, reason), "{text}");
        }
    }

    #[test]
    fn the_bulk_code_agrees_with_the_tables_at_every_length_and_byte() {
        // Every byte value at every position of a 16-byte window, at lengths around the
        // bulk's 12/16 steps; the reference is a per-quad table encoder written inline.
        let reference = |bytes: &[u8]| -> String {
            let mut s = String::new();
            for c in bytes.chunks(3) {
                let n = (u32::from(c[0]) << 16)
                    | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
                    | u32::from(*c.get(2).unwrap_or(&0));
                for i in 0..4 {
                    if i <= c.len() {
                        s.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
                    } else {
                        s.push('=');
                    }
                }
            }
            s
        };
        for len in [
            0, 1, 2, 3, 11, 12, 13, 15, 16, 17, 23, 24, 25, 47, 48, 49, 100,
        ] {
            for value in 0..=255u8 {
                let bytes: Vec<u8> = (0..len)
                    .map(|i| value.wrapping_add((i * 37) as u8))
                    .collect();
                let encoded = encode(&bytes);
                assert_eq!(encoded, reference(&bytes), "len {len}, value {value}");
                assert_eq!(decode(&encoded).unwrap(), bytes, "len {len}, value {value}");
            }
        }
        // Every character outside the alphabet is caught inside a bulk block too.
        let good = "QUJD".repeat(12);
        for bad in (0..=255u8).filter(|&b| DECODE[usize::from(b)] == INVALID) {
            for at in [0, 5, 15, 16, 31, 40] {
                let mut text = good.clone().into_bytes();
                text[at] = bad;
                let Ok(text) = String::from_utf8(text) else {
                    continue;
                };
                let err = decode(&text).unwrap_err();
                assert_eq!(err.offset, at, "byte {bad:#x} at {at}");
            }
        }
    }

    #[test]
    fn decode_into_appends_and_restores_on_error() {
        let mut out = b"kept".to_vec();
        decode_into("Zm9vYmFy", &mut out).unwrap();
        assert_eq!(out, b"keptfoobar");
        let err = decode_into(
            &"Zm9v".repeat(8).replace("Zm9vZm9vZm9v", "Zm9vZm*vZm9v"),
            &mut out,
        );
        assert_eq!(err.unwrap_err().offset, 6);
        assert_eq!(out, b"keptfoobar");
    }

    #[test]
    fn round_trips_every_byte() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        for len in 0..bytes.len() {
            assert_eq!(decode(&encode(&bytes[..len])).unwrap(), &bytes[..len]);
        }
    }

    #[test]
    fn rejects_malformed_input() {
        for (text, reason) in [
            ("Zg=", "length is not a multiple of 4"),
            ("Z===", "too much padding"),
            ("Zm=v", "padding before the end"),
            ("Zm9*", "character outside the base64 alphabet"),
            ("Zh==", "non-zero bits before the padding"),
            ("Zg==Zm9v", "padding before the end"),
        ] {
            assert_eq!(decode(text).unwrap_err().reason, reason, "input {text:?}");
        }
    }
}
