//! CRC-32C (Castagnoli), slicing-by-8: the integrity check of `upload` and `download`.
//!
//! It guards against truncation and corruption in transit, not against an adversary (both ends
//! are ours and the channel is the exec stream). Written as `crc32c:<8 hex digits>`.

const POLY: u32 = 0x82F6_3B78; // reflected Castagnoli polynomial

const TABLES: [[u32; 256]; 8] = {
    let mut tables = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
            bit += 1;
        }
        tables[0][i] = crc;
        i += 1;
    }
    let mut t = 1;
    while t < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = tables[t - 1][i];
            tables[t][i] = (prev >> 8) ^ tables[0][(prev & 0xff) as usize];
            i += 1;
        }
        t += 1;
    }
    tables
};

/// A running CRC-32C.
#[derive(Debug, Clone, Copy)]
pub struct Crc32c {
    state: u32,
    len: u64,
}

impl Default for Crc32c {
    fn default() -> Self {
        Self::new()
    }
}

impl Crc32c {
    pub const fn new() -> Self {
        Self { state: !0, len: 0 }
    }

    pub fn update(&mut self, bytes: &[u8]) {
        self.state = update_state(self.state, bytes);
        self.len += bytes.len() as u64;
    }

    /// Bytes seen so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn value(&self) -> u32 {
        !self.state
    }

    /// The wire form: `crc32c:` and eight lower-case hex digits.
    pub fn to_wire(&self) -> String {
        format!("crc32c:{:08x}", self.value())
    }
}

/// Advances a CRC-32C state over `bytes`: with the CPU's `crc32` instruction when it has
/// one (x86-64 SSE4.2, several GB/s), else with the tables.
fn update_state(state: u32, bytes: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("sse4.2") {
            // SAFETY: the CPU was just checked to support SSE4.2, the only requirement of
            // `update_sse42`.
            return unsafe { update_sse42(state, bytes) };
        }
    }
    update_tables(state, bytes)
}

/// Slicing-by-8 over the tables.
fn update_tables(state: u32, bytes: &[u8]) -> u32 {
    let mut crc = state;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let lo = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) ^ crc;
        let hi = u32::from_le_bytes([c[4], c[5], c[6], c[7]]);
        crc = TABLES[7][(lo & 0xff) as usize]
            ^ TABLES[6][((lo >> 8) & 0xff) as usize]
            ^ TABLES[5][((lo >> 16) & 0xff) as usize]
            ^ TABLES[4][(lo >> 24) as usize]
            ^ TABLES[3][(hi & 0xff) as usize]
            ^ TABLES[2][((hi >> 8) & 0xff) as usize]
            ^ TABLES[1][((hi >> 16) & 0xff) as usize]
            ^ TABLES[0][(hi >> 24) as usize];
    }
    for &b in chunks.remainder() {
        crc = (crc >> 8) ^ TABLES[0][((crc ^ u32::from(b)) & 0xff) as usize];
    }
    crc
}

/// The SSE4.2 `crc32` instruction computes exactly this polynomial (Castagnoli, reflected),
/// eight bytes per step.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
fn update_sse42(state: u32, bytes: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u8, _mm_crc32_u64};
    let mut crc = u64::from(state);
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let mut le = [0u8; 8];
        le.copy_from_slice(word);
        crc = _mm_crc32_u64(crc, u64::from_le_bytes(le));
    }
    // The instruction leaves the upper half zero.
    let mut crc = crc as u32;
    for &b in words.remainder() {
        crc = _mm_crc32_u8(crc, b);
    }
    crc
}

/// The wire form of the checksum of `bytes`.
pub fn checksum(bytes: &[u8]) -> String {
    let mut crc = Crc32c::new();
    crc.update(bytes);
    crc.to_wire()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        // RFC 3720 B.4 and the usual check value.
        assert_eq!(checksum(b"123456789"), "crc32c:e3069283");
        assert_eq!(checksum(&[0u8; 32]), "crc32c:8a9136aa");
        assert_eq!(checksum(&[0xffu8; 32]), "crc32c:62a8ab43");
        assert_eq!(checksum(b""), "crc32c:00000000");
    }

    #[test]
    fn the_instruction_and_the_tables_agree() {
        let data: Vec<u8> = (0..100_003u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8)
            .collect();
        for len in [0, 1, 7, 8, 9, 63, 64, 65, 4096, data.len()] {
            for start in [0, 1, 3] {
                let slice = &data[start.min(len)..len];
                assert_eq!(
                    update_state(!0, slice),
                    update_tables(!0, slice),
                    "len {len}, start {start}"
                );
            }
        }
    }

    #[test]
    fn incremental_equals_whole() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 31 % 251) as u8).collect();
        let mut crc = Crc32c::new();
        for piece in data.chunks(333) {
            crc.update(piece);
        }
        assert_eq!(crc.to_wire(), checksum(&data));
        assert_eq!(crc.len(), 10_000);
    }
}
