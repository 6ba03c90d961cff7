//! The runner's build id: FNV-1a (64-bit) over its own executable, read once at start.
//!
//! The host compares it with the runner it meant to start; it is an identity, not a security
//! check (the sandbox decides what runs). FNV-1a is cheap enough to hash a ~1 MiB executable
//! in about a millisecond, so start-up stays fast.

use std::io::Read;

const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over a byte stream.
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a64(u64);

impl Default for Fnv1a64 {
    fn default() -> Self {
        Self(OFFSET_BASIS)
    }
}

impl Fnv1a64 {
    pub fn update(&mut self, bytes: &[u8]) {
        let mut hash = self.0;
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(PRIME);
        }
        self.0 = hash;
    }

    pub fn value(self) -> u64 {
        self.0
    }
}

/// `fnv1a64:<16 hex digits>` of the file at `path`.
pub fn of_file(path: &std::path::Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hash = Fnv1a64::default();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
    }
    Ok(format!("fnv1a64:{:016x}", hash.value()))
}

/// The build id of the running executable, or a marker saying why there is none.
pub fn of_this_executable() -> String {
    of_file(std::path::Path::new("/proc/self/exe")).unwrap_or_else(|_| "unknown".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_fnv1a_vectors() {
        for (input, expected) in [
            (&b""[..], 0xcbf2_9ce4_8422_2325),
            (b"a", 0xaf63_dc4c_8601_ec8c),
            (b"foobar", 0x8594_4171_f739_67e8),
        ] {
            let mut hash = Fnv1a64::default();
            hash.update(input);
            assert_eq!(hash.value(), expected, "{input:?}");
        }
    }

    #[test]
    fn hashes_this_executable_with_the_wire_prefix() {
        let id = of_this_executable();
        assert!(id.starts_with("fnv1a64:") && id.len() == 24, "{id}");
        assert_eq!(id, of_this_executable());
    }
}
