//! A connector's token: held in memory only while the host needs it, never printed.

/// A token from the key store. `Debug` shows nothing of it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// `None` for an empty value (an empty token is no token).
    pub fn new(value: impl Into<String>) -> Option<Self> {
        let value = value.into();
        (!value.trim().is_empty()).then_some(Self(value))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the token replaced by `[redacted]`.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.0, "[redacted]")
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_never_shows() {
        let secret = Secret::new("tok-123").unwrap_or_else(|| unreachable!());
        assert_eq!(format!("{secret:?}"), "Secret([redacted])");
        assert_eq!(secret.redact("a tok-123 b"), "a [redacted] b");
        assert!(Secret::new("  ").is_none());
    }
}
