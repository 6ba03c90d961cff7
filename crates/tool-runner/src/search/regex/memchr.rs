//! Fast byte and substring scans in portable, safe Rust.
//!
//! Each scan tests a 64-byte block with a branch-free loop that the compiler turns into
//! vector compares, and looks at single bytes only in a block that holds a candidate.

/// Bytes per block of the vectorised scans.
const BLOCK: usize = 64;

/// The offset of the first `needle` in `hay[from..]`.
pub(crate) fn find_byte(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
    let mut i = from;
    while let Some(block) = hay.get(i..).and_then(<[u8]>::first_chunk::<BLOCK>) {
        let mut any = false;
        for &byte in block {
            any |= byte == needle;
        }
        if any {
            return block.iter().position(|&b| b == needle).map(|p| i + p);
        }
        i += BLOCK;
    }
    hay.get(i..)?
        .iter()
        .position(|&b| b == needle)
        .map(|p| i + p)
}

/// The offset of the last `needle` in `hay[..end]`.
pub(crate) fn rfind_byte(hay: &[u8], end: usize, needle: u8) -> Option<usize> {
    let mut end = end.min(hay.len());
    while end >= BLOCK {
        let start = end - BLOCK;
        let block = hay.get(start..end)?;
        let mut any = false;
        for &byte in block {
            any |= byte == needle;
        }
        if any {
            return block.iter().rposition(|&b| b == needle).map(|p| start + p);
        }
        end = start;
    }
    hay.get(..end)?.iter().rposition(|&b| b == needle)
}

/// How many times `needle` occurs in `hay`.
pub(crate) fn count_byte(hay: &[u8], needle: u8) -> usize {
    // Count into a u8 per chunk of 255 bytes so that the loop vectorises without overflow.
    let mut chunks = hay.chunks_exact(255);
    let mut total = 0usize;
    for chunk in &mut chunks {
        let mut count: u8 = 0;
        for &byte in chunk {
            count += u8::from(byte == needle);
        }
        total += usize::from(count);
    }
    total
        + chunks
            .remainder()
            .iter()
            .filter(|&&byte| byte == needle)
            .count()
}

/// A substring to search for, optionally ASCII-case-insensitively.
///
/// The scan looks for the needle's two rarest bytes at their distance apart (a block at a
/// time), and compares the whole needle only where both are present.
#[derive(Clone, Debug)]
pub(crate) struct LiteralFinder {
    /// Lower-cased when the search ignores case.
    needle: Box<[u8]>,
    ignore_case: bool,
    /// Offsets in the needle of the two probe bytes (equal for a one-byte needle).
    first_offset: usize,
    second_offset: usize,
    /// Probe bytes and the masks OR-ed into haystack bytes before comparing them
    /// (`0x20` folds ASCII letters to lower case).
    first_byte: u8,
    first_mask: u8,
    second_byte: u8,
    second_mask: u8,
}

impl LiteralFinder {
    /// A finder for `needle` (not empty); `ignore_case` folds ASCII letters only.
    pub(crate) fn new(needle: &[u8], ignore_case: bool) -> Self {
        let needle: Box<[u8]> = if ignore_case {
            needle.to_ascii_lowercase().into_boxed_slice()
        } else {
            needle.into()
        };
        let mut by_rarity: Vec<usize> = (0..needle.len()).collect();
        by_rarity.sort_by_key(|&i| (commonness(needle[i]), i));
        let first_offset = by_rarity.first().copied().unwrap_or(0);
        let second_offset = by_rarity
            .iter()
            .copied()
            .find(|&i| needle.get(i) != needle.get(first_offset))
            .or_else(|| by_rarity.get(1).copied())
            .unwrap_or(first_offset);
        let probe = |offset: usize| {
            let byte = needle.get(offset).copied().unwrap_or(0);
            let mask = if ignore_case && byte.is_ascii_alphabetic() {
                0x20
            } else {
                0
            };
            (byte, mask)
        };
        let (first_byte, first_mask) = probe(first_offset);
        let (second_byte, second_mask) = probe(second_offset);
        Self {
            needle,
            ignore_case,
            first_offset,
            second_offset,
            first_byte,
            first_mask,
            second_byte,
            second_mask,
        }
    }

    /// The offset of the first occurrence of the needle in `hay` at or after `from`.
    pub(crate) fn find(&self, hay: &[u8], from: usize) -> Option<usize> {
        let len = self.needle.len();
        let last_start = hay.len().checked_sub(len)?;
        let span = self.first_offset.max(self.second_offset);
        let mut start = from;
        // Whole blocks of candidate starts, while both probe windows fit in `hay`.
        while start + span + BLOCK <= hay.len() && start <= last_start {
            let (Some(first), Some(second)) = (
                hay[start + self.first_offset..].first_chunk::<BLOCK>(),
                hay[start + self.second_offset..].first_chunk::<BLOCK>(),
            ) else {
                break;
            };
            let mut any = false;
            for j in 0..BLOCK {
                any |= ((first[j] | self.first_mask) == self.first_byte)
                    & ((second[j] | self.second_mask) == self.second_byte);
            }
            if any {
                for j in 0..BLOCK {
                    let candidate = start + j;
                    if candidate > last_start {
                        return None;
                    }
                    if (first[j] | self.first_mask) == self.first_byte
                        && (second[j] | self.second_mask) == self.second_byte
                        && self.is_at(hay, candidate)
                    {
                        return Some(candidate);
                    }
                }
            }
            start += BLOCK;
        }
        (start..=last_start).find(|&candidate| self.is_at(hay, candidate))
    }

    fn is_at(&self, hay: &[u8], at: usize) -> bool {
        let Some(window) = hay.get(at..at + self.needle.len()) else {
            return false;
        };
        if self.ignore_case {
            window.eq_ignore_ascii_case(&self.needle)
        } else {
            *window == *self.needle
        }
    }
}

/// A rough rank of how common a byte is in source code and prose (higher is more common);
/// the finder probes for the rarest bytes of its needle.
fn commonness(byte: u8) -> u8 {
    match byte {
        b' ' => 255,
        b'e' | b't' | b'a' | b'o' | b'i' | b'n' | b's' | b'r' => 240,
        b'h' | b'l' | b'd' | b'c' | b'u' | b'm' | b'\t' | b'\n' => 220,
        b'f' | b'p' | b'g' | b'w' | b'y' | b'b' | b'_' | b'.' | b',' => 200,
        b'(' | b')' | b'=' | b';' | b'"' | b'/' | b'-' | b':' | b'v' | b'k' => 180,
        b'0'..=b'9' | b'{' | b'}' | b'\'' | b'*' | b'>' | b'<' | b'[' | b']' => 160,
        b'x' | b'j' | b'q' | b'z' | b'&' | b'!' | b'#' | b'+' => 140,
        b'A'..=b'Z' => 130,
        b'|' | b'\\' | b'$' | b'@' | b'%' | b'?' | b'\r' => 100,
        b'~' | b'^' | b'`' => 80,
        0x80..=0xFF => 60,
        _ => 40,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_find(hay: &[u8], needle: &[u8], ignore_case: bool) -> Option<usize> {
        (0..=hay.len().checked_sub(needle.len())?).find(|&i| {
            let window = &hay[i..i + needle.len()];
            if ignore_case {
                window.eq_ignore_ascii_case(needle)
            } else {
                window == needle
            }
        })
    }

    #[test]
    fn byte_scans_agree_with_iterators_at_every_offset() {
        let hay: Vec<u8> = (0..300u32)
            .map(|i| b"abcdefgh\n"[(i % 9) as usize])
            .collect();
        for from in 0..hay.len() {
            let expected = hay[from..]
                .iter()
                .position(|&b| b == b'\n')
                .map(|p| p + from);
            assert_eq!(find_byte(&hay, from, b'\n'), expected, "from {from}");
            let expected_back = hay[..from].iter().rposition(|&b| b == b'\n');
            assert_eq!(rfind_byte(&hay, from, b'\n'), expected_back, "end {from}");
        }
        assert_eq!(count_byte(&hay, b'\n'), 33);
        assert_eq!(find_byte(&hay, 0, b'z'), None);
        assert_eq!(find_byte(&hay, hay.len() + 5, b'a'), None);
    }

    #[test]
    fn literal_finder_agrees_with_naive_search() {
        let mut hay = Vec::new();
        for i in 0..2000u32 {
            hay.extend_from_slice(match i % 7 {
                0 => b"fooBar ".as_slice(),
                1 => b"qux_zz ",
                2 => b"FOOBAR\n",
                3 => b"a",
                4 => b"zzz",
                5 => "\u{e9}t\u{e9} ".as_bytes(),
                _ => b"needle",
            });
        }
        let needles: [&[u8]; 8] = [
            b"foobar",
            b"FOOBAR",
            b"needlea",
            b"zzzn",
            b"z",
            "\u{e9}t\u{e9}".as_bytes(),
            b"absent!",
            b"r\nqux",
        ];
        for needle in needles {
            for ignore_case in [false, true] {
                let finder = LiteralFinder::new(needle, ignore_case);
                for from in [0, 1, 63, 64, 65, 1000, hay.len() - 3, hay.len()] {
                    assert_eq!(
                        finder.find(&hay, from),
                        naive_find(&hay[from..], needle, ignore_case).map(|p| p + from),
                        "needle {needle:?} ignore_case {ignore_case} from {from}"
                    );
                }
            }
        }
    }

    #[test]
    fn literal_finder_handles_short_haystacks() {
        let finder = LiteralFinder::new(b"abc", false);
        assert_eq!(finder.find(b"", 0), None);
        assert_eq!(finder.find(b"ab", 0), None);
        assert_eq!(finder.find(b"abc", 0), Some(0));
        assert_eq!(finder.find(b"xabc", 2), None);
    }
}
