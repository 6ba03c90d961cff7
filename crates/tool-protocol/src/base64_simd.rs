//! SSSE3 base64 for x86-64: 12 bytes become 16 characters (and back) per step, several times
//! faster than the table code it sits in front of. Only the bulk is done here; [`crate::base64`]
//! finishes the tail, handles padding, and names the exact error whenever this code stops at
//! a character outside the alphabet.
//!
//! The unsafe code is the 16-byte loads and stores (bounds checked just before each) and the
//! calls into `#[target_feature]` functions after the CPU was checked.

use std::arch::x86_64::{
    __m128i, _mm_add_epi8, _mm_and_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_loadu_si128,
    _mm_madd_epi16, _mm_maddubs_epi16, _mm_movemask_epi8, _mm_mulhi_epu16, _mm_mullo_epi16,
    _mm_or_si128, _mm_set1_epi8, _mm_set1_epi32, _mm_setr_epi8, _mm_shuffle_epi8, _mm_storeu_si128,
    _mm_subs_epu8,
};

/// True when the CPU can run this module (checked once by std, then cached).
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("ssse3")
}

/// Encodes whole 12-byte groups of `input` while 16 bytes are readable, into `out` (16
/// characters per group). Returns the input bytes consumed (a multiple of 12).
pub fn encode_bulk(input: &[u8], out: &mut [u8]) -> usize {
    if !available() {
        return 0;
    }
    // SAFETY: SSSE3 was just detected.
    unsafe { encode_ssse3(input, out) }
}

/// Decodes whole 16-character groups of `input` into `out` (12 bytes per group), stopping
/// before the first group holding a character outside the alphabet (padding included).
/// Returns the characters consumed (a multiple of 16).
pub fn decode_bulk(input: &[u8], out: &mut [u8]) -> usize {
    if !available() {
        return 0;
    }
    // SAFETY: SSSE3 was just detected.
    unsafe { decode_ssse3(input, out) }
}

#[target_feature(enable = "ssse3")]
fn encode_ssse3(input: &[u8], out: &mut [u8]) -> usize {
    // Each 32-bit lane gets the bytes [b, a, c, b] of one group [a, b, c].
    let spread = _mm_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    // Per 6-bit index range, what to add to reach its character (see `translate`).
    let shifts = _mm_setr_epi8(
        71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 65, 0, 0,
    );
    let (mut read, mut written) = (0, 0);
    while read + 16 <= input.len() && written + 16 <= out.len() {
        // SAFETY: `read + 16 <= input.len()`, and unaligned loads are allowed.
        let bytes = unsafe { _mm_loadu_si128(input.as_ptr().add(read).cast::<__m128i>()) };
        let lanes = _mm_shuffle_epi8(bytes, spread);
        // Move the four 6-bit fields of each lane into its four bytes.
        let high = _mm_mulhi_epu16(
            _mm_and_si128(lanes, _mm_set1_epi32(0x0fc0_fc00)),
            _mm_set1_epi32(0x0400_0040),
        );
        let low = _mm_mullo_epi16(
            _mm_and_si128(lanes, _mm_set1_epi32(0x003f_03f0)),
            _mm_set1_epi32(0x0100_0010),
        );
        let indices = _mm_or_si128(high, low);
        // Range of each index: 0..=25 → 13, 26..=51 → 0, 52..=61 → 1..=10, 62 → 11, 63 → 12.
        let mut range = _mm_subs_epu8(indices, _mm_set1_epi8(51));
        let below_26 = _mm_cmpgt_epi8(_mm_set1_epi8(26), indices);
        range = _mm_or_si128(range, _mm_and_si128(below_26, _mm_set1_epi8(13)));
        let chars = _mm_add_epi8(indices, _mm_shuffle_epi8(shifts, range));
        // SAFETY: `written + 16 <= out.len()`.
        unsafe { _mm_storeu_si128(out.as_mut_ptr().add(written).cast::<__m128i>(), chars) };
        read += 12;
        written += 16;
    }
    read
}

/// Lanes of `c` (signed bytes) within `lo..=hi`.
#[target_feature(enable = "ssse3")]
fn within(c: __m128i, lo: i8, hi: i8) -> __m128i {
    _mm_and_si128(
        _mm_cmpgt_epi8(c, _mm_set1_epi8(lo - 1)),
        _mm_cmpgt_epi8(_mm_set1_epi8(hi + 1), c),
    )
}

#[target_feature(enable = "ssse3")]
fn decode_ssse3(input: &[u8], out: &mut [u8]) -> usize {
    // Takes bytes 2, 1, 0 of each 32-bit lane (the 24 bits, most significant first).
    let gather = _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    let (mut read, mut written) = (0, 0);
    while read + 16 <= input.len() && written + 12 <= out.len() {
        // SAFETY: `read + 16 <= input.len()`.
        let c = unsafe { _mm_loadu_si128(input.as_ptr().add(read).cast::<__m128i>()) };
        // Bytes of 128 and up are negative here and fall in no range.
        let upper = within(c, b'A' as i8, b'Z' as i8);
        let lower = within(c, b'a' as i8, b'z' as i8);
        let digit = within(c, b'0' as i8, b'9' as i8);
        let plus = _mm_cmpeq_epi8(c, _mm_set1_epi8(b'+' as i8));
        let slash = _mm_cmpeq_epi8(c, _mm_set1_epi8(b'/' as i8));
        let valid = _mm_or_si128(
            _mm_or_si128(_mm_or_si128(upper, lower), _mm_or_si128(digit, plus)),
            slash,
        );
        if _mm_movemask_epi8(valid) != 0xffff {
            break;
        }
        let offset = _mm_or_si128(
            _mm_or_si128(
                _mm_and_si128(upper, _mm_set1_epi8(-65)),
                _mm_and_si128(lower, _mm_set1_epi8(-71)),
            ),
            _mm_or_si128(
                _mm_and_si128(digit, _mm_set1_epi8(4)),
                _mm_or_si128(
                    _mm_and_si128(plus, _mm_set1_epi8(19)),
                    _mm_and_si128(slash, _mm_set1_epi8(16)),
                ),
            ),
        );
        let values = _mm_add_epi8(c, offset);
        // [v0, v1] → v0 << 6 | v1, then [w0, w1] → w0 << 12 | w1: 24 bits per lane.
        let pairs = _mm_maddubs_epi16(values, _mm_set1_epi32(0x0140_0140));
        let lanes = _mm_madd_epi16(pairs, _mm_set1_epi32(0x0001_1000));
        let bytes = _mm_shuffle_epi8(lanes, gather);
        let mut block = [0u8; 16];
        // SAFETY: `block` holds 16 bytes.
        unsafe { _mm_storeu_si128(block.as_mut_ptr().cast::<__m128i>(), bytes) };
        out[written..written + 12].copy_from_slice(&block[..12]);
        read += 16;
        written += 12;
    }
    read
}
