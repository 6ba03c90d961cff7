//! The wall's bridge token: a per-wall secret shared by the host's proxy and the bridge the
//! wall started (through the wall's configuration, which Landlock hides from every command
//! once the launcher has read it). A preamble names a program only when it carries the token.

use std::io::Read;

/// 32 random bytes from the kernel, as hex. Never logged, hashed or recorded.
#[derive(Clone, PartialEq, Eq)]
pub struct BridgeToken(String);

impl std::fmt::Debug for BridgeToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BridgeToken(…)")
    }
}

impl BridgeToken {
    /// A fresh token from `/dev/urandom`.
    pub fn generate() -> std::io::Result<Self> {
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        Ok(Self(hex::encode(bytes)))
    }

    /// A fixed token, for tests that write preambles by hand.
    #[cfg(test)]
    pub(crate) fn from_hex_for_tests(hex: &str) -> Self {
        Self(hex.to_owned())
    }

    /// The token as the wall's configuration carries it.
    pub fn as_hex(&self) -> &str {
        &self.0
    }

    /// Whether `presented` is this token, compared in constant time.
    pub fn matches(&self, presented: &str) -> bool {
        let (ours, theirs) = (self.0.as_bytes(), presented.as_bytes());
        if ours.len() != theirs.len() {
            return false;
        }
        ours.iter()
            .zip(theirs)
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_and_compared_whole() {
        let a = BridgeToken::generate().unwrap();
        let b = BridgeToken::generate().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.as_hex().len(), 64);
        assert!(a.matches(a.as_hex()));
        assert!(!a.matches(b.as_hex()));
        assert!(!a.matches(&a.as_hex()[..63]));
        assert!(!a.matches(""));
        assert_eq!(format!("{a:?}"), "BridgeToken(…)");
    }
}
