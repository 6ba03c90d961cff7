//! Decoding one character from bytes that may not be valid UTF-8.

/// What an invalid or truncated byte sequence decodes to (one byte at a time).
pub(crate) const REPLACEMENT: char = '\u{FFFD}';

/// Decodes the character starting at `bytes[i]` (`i` must be in bounds) and its length in
/// bytes. A byte that does not start a valid sequence decodes as [`REPLACEMENT`], length 1.
pub(crate) fn decode(bytes: &[u8], i: usize) -> (char, usize) {
    let Some(&first) = bytes.get(i) else {
        return (REPLACEMENT, 1);
    };
    if first < 0x80 {
        return (char::from(first), 1);
    }
    let (len, initial, min) = match first {
        0xC2..=0xDF => (2, u32::from(first & 0x1F), 0x80),
        0xE0..=0xEF => (3, u32::from(first & 0x0F), 0x800),
        0xF0..=0xF4 => (4, u32::from(first & 0x07), 0x1_0000),
        _ => return (REPLACEMENT, 1),
    };
    let Some(tail) = bytes.get(i + 1..i + len) else {
        return (REPLACEMENT, 1);
    };
    let mut value = initial;
    for &byte in tail {
        if byte & 0xC0 != 0x80 {
            return (REPLACEMENT, 1);
        }
        value = (value << 6) | u32::from(byte & 0x3F);
    }
    match char::from_u32(value) {
        Some(c) if value >= min => (c, len),
        _ => (REPLACEMENT, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_valid_sequences_like_std() {
        let text = "aé中😀z";
        let bytes = text.as_bytes();
        let mut i = 0;
        let mut decoded = String::new();
        while i < bytes.len() {
            let (c, len) = decode(bytes, i);
            decoded.push(c);
            i += len;
        }
        assert_eq!(decoded, text);
    }

    #[test]
    fn invalid_bytes_decode_one_at_a_time() {
        // A lone continuation byte, a truncated sequence, an overlong form, a surrogate.
        for bytes in [
            &[0x80u8][..],
            &[0xE4, 0xB8],
            &[0xC0, 0x80],
            &[0xED, 0xA0, 0x80],
        ] {
            assert_eq!(decode(bytes, 0), (REPLACEMENT, 1), "{bytes:x?}");
        }
    }
}
