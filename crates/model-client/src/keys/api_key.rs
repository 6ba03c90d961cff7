//! A key that cannot be printed by accident.

use std::fmt;

/// An API key. `Debug` and `Display` print `[redacted]`; it has no `Serialize`; the value is
/// reachable only through [`ApiKey::expose_secret`].
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

/// Why a string cannot be a key (never says what the string was).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum InvalidApiKey {
    #[error("the key is empty")]
    Empty,
    #[error("the key contains whitespace, a control character or a non-ASCII character")]
    BadCharacter,
}

impl ApiKey {
    /// A key from text; surrounding whitespace (a pasted newline) is dropped. A key must be
    /// printable ASCII without spaces, so it can never break an HTTP header.
    pub fn new(value: impl Into<String>) -> Result<Self, InvalidApiKey> {
        let value = value.into();
        let trimmed = value.trim();
        if trimmed.is_empty() {
            return Err(InvalidApiKey::Empty);
        }
        if !trimmed.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(InvalidApiKey::BadCharacter);
        }
        Ok(Self(trimmed.to_owned()))
    }

    /// The key itself, for the one place that sends it (an HTTP header) or stores it.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}
