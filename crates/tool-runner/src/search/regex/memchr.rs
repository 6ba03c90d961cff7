//! Fast byte and substring scans in portable, safe Rust.
//!
//! The scans test eight bytes at a time in a `u64` (SWAR: "SIMD within a register"), two words
//! per step, with plain integer arithmetic. They do not rely on the compiler vectorising a loop:
//! the runner is built for size (`opt-level = "s"`), where rustc vectorises nothing, and a
//! byte-at-a-time loop there scanned at a fifth of the speed (see `docs/performance.md`).
//!
//! The trick: XOR a word with the byte looked for repeated eight times, and the bytes that
//! matched become zero; [`zero_bytes`] and [`first_zero_hint`] find zero bytes with a few
//! additions and masks.

/// Bytes per step of the word scans (two words).
const STEP: usize = 16;
/// `0x01` in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;
/// `0x80` in every byte.
const HIGHS: u64 = 0x8080_8080_8080_8080;
/// `0x7F` in every byte.
const LOWS: u64 = 0x7F7F_7F7F_7F7F_7F7F;

/// `byte` in each of the eight bytes of a word.
fn splat(byte: u8) -> u64 {
    ONES * u64::from(byte)
}

/// The two little-endian words of a 16-byte block (byte 0 is the lowest byte of the first).
#[inline(always)]
fn words(block: &[u8; STEP]) -> (u64, u64) {
    let (low, high) = block.split_at(8);
    let word = |bytes: &[u8]| u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]));
    (word(low), word(high))
}

/// `0x80` in each byte of `v` that is zero, and nothing else.
#[inline(always)]
fn zero_bytes(v: u64) -> u64 {
    !(((v & LOWS) + LOWS) | v | LOWS)
}

/// Non-zero exactly when some byte of `v` is zero. Every zero byte has its `0x80` bit set,
/// and the lowest set bit is in the lowest zero byte; a byte above a zero byte may be flagged
/// too (the subtraction's borrow), so only the lowest flag is exact.
#[inline(always)]
fn first_zero_hint(v: u64) -> u64 {
    v.wrapping_sub(ONES) & !v & HIGHS
}

/// The index (0–7) of the lowest byte flagged in `flags`.
#[inline(always)]
fn lowest_byte(flags: u64) -> usize {
    (flags.trailing_zeros() / 8) as usize
}

/// The index (0–7) of the highest byte flagged in `flags` (not zero).
#[inline(always)]
fn highest_byte(flags: u64) -> usize {
    7 - (flags.leading_zeros() / 8) as usize
}

/// The offset of the first `needle` in `hay[from..]`.
pub(crate) fn find_byte(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
    let pattern = splat(needle);
    let mut i = from;
    while let Some(block) = hay.get(i..).and_then(<[u8]>::first_chunk::<STEP>) {
        let (low, high) = words(block);
        let in_low = first_zero_hint(low ^ pattern);
        let in_high = first_zero_hint(high ^ pattern);
        if in_low | in_high != 0 {
            return Some(if in_low != 0 {
                i + lowest_byte(in_low)
            } else {
                i + 8 + lowest_byte(in_high)
            });
        }
        i += STEP;
    }
    hay.get(i..)?
        .iter()
        .position(|&b| b == needle)
        .map(|p| i + p)
}

/// The offset of the last `needle` in `hay[..end]`.
pub(crate) fn rfind_byte(hay: &[u8], end: usize, needle: u8) -> Option<usize> {
    let pattern = splat(needle);
    let mut end = end.min(hay.len());
    while end >= STEP {
        let start = end - STEP;
        let block = hay.get(start..end)?.first_chunk::<STEP>()?;
        let (low, high) = words(block);
        let in_high = zero_bytes(high ^ pattern);
        if in_high != 0 {
            return Some(start + 8 + highest_byte(in_high));
        }
        let in_low = zero_bytes(low ^ pattern);
        if in_low != 0 {
            return Some(start + highest_byte(in_low));
        }
        end = start;
    }
    hay.get(..end)?.iter().rposition(|&b| b == needle)
}

/// How many times `needle` occurs in `hay`.
pub(crate) fn count_byte(hay: &[u8], needle: u8) -> usize {
    let pattern = splat(needle);
    let (words_of_hay, rest) = hay.as_chunks::<8>();
    let mut total = 0usize;
    // Each byte lane of `lanes` counts its matches; 255 words at most, so no lane overflows.
    for group in words_of_hay.chunks(255) {
        let mut lanes = 0u64;
        for bytes in group {
            lanes += zero_bytes(u64::from_le_bytes(*bytes) ^ pattern) >> 7;
        }
        total += sum_lanes(lanes);
    }
    total + rest.iter().filter(|&&byte| byte == needle).count()
}

/// The sum of the eight byte lanes of `lanes`.
fn sum_lanes(lanes: u64) -> usize {
    const PAIRS: u64 = 0x00FF_00FF_00FF_00FF;
    // Four 16-bit lanes of at most 510 each, then their sum in the top 16 bits.
    let pairs = (lanes & PAIRS) + ((lanes >> 8) & PAIRS);
    (pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize
}

/// A substring to search for, optionally ASCII-case-insensitively.
///
/// The scan looks for the needle's two rarest bytes at their distance apart (sixteen candidate
/// starts per step), and compares the whole needle only where both are present.
#[derive(Clone, Debug)]
pub(crate) struct LiteralFinder {
    /// Lower-cased when the search ignores case.
    needle: Box<[u8]>,
    ignore_case: bool,
    /// Offsets in the needle of the two probe bytes (equal for a one-byte needle).
    first_offset: usize,
    second_offset: usize,
    /// Each probe byte, and the mask OR-ed into haystack bytes before comparing them (`0x20`
    /// folds ASCII letters to lower case), repeated in every byte of a word.
    first_pattern: u64,
    first_mask: u64,
    second_pattern: u64,
    second_mask: u64,
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
            (splat(byte), splat(mask))
        };
        let (first_pattern, first_mask) = probe(first_offset);
        let (second_pattern, second_mask) = probe(second_offset);
        Self {
            needle,
            ignore_case,
            first_offset,
            second_offset,
            first_pattern,
            first_mask,
            second_pattern,
            second_mask,
        }
    }

    /// The offset of the first occurrence of the needle in `hay` at or after `from`.
    pub(crate) fn find(&self, hay: &[u8], from: usize) -> Option<usize> {
        let last_start = hay.len().checked_sub(self.needle.len())?;
        let mut start = from;
        // Steps of sixteen candidate starts, while both probe windows fit in `hay`.
        while start <= last_start {
            let (Some(first), Some(second)) = (
                hay.get(start + self.first_offset..)
                    .and_then(<[u8]>::first_chunk::<STEP>),
                hay.get(start + self.second_offset..)
                    .and_then(<[u8]>::first_chunk::<STEP>),
            ) else {
                break;
            };
            let (first_low, first_high) = words(first);
            let (second_low, second_high) = words(second);
            // Zero in each byte whose candidate start has both probe bytes in place.
            let low = ((first_low | self.first_mask) ^ self.first_pattern)
                | ((second_low | self.second_mask) ^ self.second_pattern);
            let high = ((first_high | self.first_mask) ^ self.first_pattern)
                | ((second_high | self.second_mask) ^ self.second_pattern);
            let (in_low, in_high) = (first_zero_hint(low), first_zero_hint(high));
            if in_low | in_high != 0 {
                // Flags above the lowest may be wrong; `is_at` checks each candidate anyway.
                for (base, mut flags) in [(start, in_low), (start + 8, in_high)] {
                    while flags != 0 {
                        let candidate = base + lowest_byte(flags);
                        if candidate > last_start {
                            return None;
                        }
                        if self.is_at(hay, candidate) {
                            return Some(candidate);
                        }
                        flags &= flags - 1;
                    }
                }
            }
            start += STEP;
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

    /// Bytes that stress the word arithmetic: zero, one (a borrow from a zero byte below it
    /// flags it falsely), the 0x7F/0x80 edge, 0xFF, letters in both cases, and the newline.
    const TRICKY: [u8; 10] = [0x00, 0x01, 0x02, 0x7F, 0x80, 0x81, 0xFF, b'\n', b'a', b'A'];

    /// `len` bytes drawn from [`TRICKY`] by a fixed xorshift sequence.
    fn tricky_hay(len: usize, seed: u64) -> Vec<u8> {
        let mut state = seed;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                TRICKY[(state % TRICKY.len() as u64) as usize]
            })
            .collect()
    }

    #[test]
    fn word_scans_agree_with_byte_loops_on_tricky_bytes() {
        for (seed, len) in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 257]
            .into_iter()
            .enumerate()
        {
            let hay = tricky_hay(len, 0x9E37_79B9_7F4A_7C15 + seed as u64);
            for needle in TRICKY {
                let count = hay.iter().filter(|&&b| b == needle).count();
                assert_eq!(count_byte(&hay, needle), count, "{hay:?} {needle}");
                for from in 0..=len + 1 {
                    let forward = hay
                        .get(from..)
                        .and_then(|rest| rest.iter().position(|&b| b == needle))
                        .map(|p| p + from);
                    assert_eq!(
                        find_byte(&hay, from, needle),
                        forward,
                        "{hay:?} {needle} {from}"
                    );
                    let backward = hay[..from.min(len)].iter().rposition(|&b| b == needle);
                    assert_eq!(
                        rfind_byte(&hay, from, needle),
                        backward,
                        "{hay:?} {needle} {from}"
                    );
                }
            }
        }
    }

    #[test]
    fn count_byte_carries_full_lanes_across_groups() {
        // Every byte matches: each lane of the word counter reaches its limit of 255.
        for len in [2039, 2040, 2041, 5000, 8 * 255 * 3 + 5] {
            assert_eq!(count_byte(&vec![b'\n'; len], b'\n'), len);
            assert_eq!(count_byte(&vec![0u8; len], 0), len);
            assert_eq!(count_byte(&vec![0xFFu8; len], 0xFE), 0);
        }
    }

    #[test]
    fn literal_finder_agrees_with_naive_search_on_tricky_bytes() {
        let hay = tricky_hay(3000, 0x2545_F491_4F6C_DD1D);
        let needles: [&[u8]; 8] = [
            &[0x01, 0x00],
            &[0x00, 0x01],
            &[0x80, 0x00, 0x01],
            &[b'\n', 0xFF],
            &[0x7F, 0x80],
            b"aA",
            b"Aa\na",
            &[0x00],
        ];
        for needle in needles {
            for ignore_case in [false, true] {
                let finder = LiteralFinder::new(needle, ignore_case);
                for from in (0..hay.len()).step_by(7).chain([hay.len() - 1, hay.len()]) {
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
