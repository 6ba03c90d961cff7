//! `Debug` for [`Provider`], which carries secret values: the keys are shown, never the values.

use std::fmt;

use crate::datamodel::Provider;

/// What a redacted credential value prints as.
const REDACTED: &str = "<redacted>";

impl fmt::Debug for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let credentials: std::collections::BTreeMap<&str, &str> = self
            .credentials
            .keys()
            .map(|key| (key.as_str(), REDACTED))
            .collect();
        f.debug_struct("Provider")
            .field("metadata", &self.metadata)
            .field("type", &self.r#type)
            .field("credentials", &credentials)
            .field("config", &self.config)
            .field("profile_workspace", &self.profile_workspace)
            .field(
                "credential_expiration_times",
                &self.credential_expiration_times,
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_credential_keys_but_never_values() {
        let provider = Provider {
            r#type: "generic".into(),
            credentials: [("API_TOKEN".to_owned(), "planted-secret-value-42".to_owned())]
                .into_iter()
                .collect(),
            ..Provider::default()
        };
        let shown = format!("{provider:?} {provider:#?}");
        assert!(shown.contains("API_TOKEN"), "{shown}");
        assert!(shown.contains(REDACTED), "{shown}");
        assert!(!shown.contains("planted-secret-value-42"), "{shown}");
    }
}
