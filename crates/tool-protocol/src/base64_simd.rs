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
    _mm_or_si128, _mm_set1_epi8, _mm_set1_epi32, _mm_setr_epi8, _mm_setzero_si128,
    _mm_shuffle_epi8, _mm_srli_epi32, _mm_storeu_si128, _mm_subs_epu8,
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

#[target_feature(enable = "ssse3")]
fn decode_ssse3(input: &[u8], out: &mut [u8]) -> usize {
    // Validation by nibbles: `ranks_hi[h]` is the class of a high nibble and `bad_lo[l]` the
    // classes in which low nibble `l` is not a base64 character; a byte is invalid when the
    // two share a bit. Classes: 0x01 never valid (high nibble 0, 1, 8..F), 0x02 `+` `/` (only
    // lows B and F), 0x04 digits (lows 0..9), 0x08 `A`..`O` and `a`..`o` (lows 1..F),
    // 0x10 `P`..`Z` and `p`..`z` (lows 0..A).
    let ranks_hi = _mm_setr_epi8(1, 1, 2, 4, 8, 16, 8, 16, 1, 1, 1, 1, 1, 1, 1, 1);
    let bad_lo = _mm_setr_epi8(
        0x0b, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x07, 0x15, 0x17, 0x17, 0x17,
        0x15,
    );
    // What to add per high nibble (index 1 is `/`: its high nibble 2 minus one).
    let shifts = _mm_setr_epi8(0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
    // Takes bytes 2, 1, 0 of each 32-bit lane (the 24 bits, most significant first).
    let gather = _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
    let nibble = _mm_set1_epi8(0x0f);
    let (mut read, mut written) = (0, 0);
    while read + 16 <= input.len() && written + 12 <= out.len() {
        // SAFETY: `read + 16 <= input.len()`.
        let c = unsafe { _mm_loadu_si128(input.as_ptr().add(read).cast::<__m128i>()) };
        let hi = _mm_and_si128(_mm_srli_epi32(c, 4), nibble);
        let lo = _mm_and_si128(c, nibble);
        let clash = _mm_and_si128(_mm_shuffle_epi8(bad_lo, lo), _mm_shuffle_epi8(ranks_hi, hi));
        if _mm_movemask_epi8(_mm_cmpeq_epi8(clash, _mm_setzero_si128())) != 0xffff {
            break;
        }
        let slash = _mm_cmpeq_epi8(c, _mm_set1_epi8(b'/' as i8));
        let offset = _mm_shuffle_epi8(shifts, _mm_add_epi8(hi, slash));
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
