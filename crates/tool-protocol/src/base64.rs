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
    buf.reserve(encoded_len(bytes.len()));
    let mut chunks = bytes.chunks_exact(3);
    for c in &mut chunks {
        let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
        buf.extend_from_slice(&[
            ALPHABET[(n >> 18) as usize & 63],
            ALPHABET[(n >> 12) as usize & 63],
            ALPHABET[(n >> 6) as usize & 63],
            ALPHABET[n as usize & 63],
        ]);
    }
    match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            buf.extend_from_slice(&[
                ALPHABET[(n >> 18) as usize & 63],
                ALPHABET[(n >> 12) as usize & 63],
                b'=',
                b'=',
            ]);
        }
        [a, b] => {
            let n = (u32::from(a) << 16) | (u32::from(b) << 8);
            buf.extend_from_slice(&[
                ALPHABET[(n >> 18) as usize & 63],
                ALPHABET[(n >> 12) as usize & 63],
                ALPHABET[(n >> 6) as usize & 63],
                b'=',
            ]);
        }
        _ => {}
    }
    // Every byte pushed comes from the ASCII alphabet, so this never takes the lossy path.
    *out = String::from_utf8(buf)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
}

/// The base64 encoding of `bytes`.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(encoded_len(bytes.len()));
    encode_into(bytes, &mut out);
    out
}

/// Decodes padded standard base64. Whitespace is not accepted: frames never contain it.
pub fn decode(text: &str) -> Result<Vec<u8>, DecodeError> {
    let input = text.as_bytes();
    if !input.len().is_multiple_of(4) {
        return Err(DecodeError {
            offset: input.len(),
            reason: "length is not a multiple of 4",
        });
    }
    let mut out = Vec::with_capacity(input.len() / 4 * 3);
    let quads = input.len() / 4;
    for (q, quad) in input.chunks_exact(4).enumerate() {
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
    Ok(out)
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
