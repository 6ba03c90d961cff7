//! Pieces every provider's wall attestation shares.

use protocol::{Attestation, CanaryResult, EnforcementLevel};
use sha2::{Digest, Sha256};

use crate::error::ProviderError;

/// `attestation` with one more canary (a check the host made at start, such as the set-id
/// sweep); refused like [`conclude`] when that canary failed.
pub fn add_canary(
    mut attestation: Attestation,
    canary: CanaryResult,
) -> Result<Attestation, ProviderError> {
    let failed = (!canary.passed).then(|| format!("{}: {}", canary.name, canary.detail));
    attestation.canaries.push(canary);
    match failed {
        None => Ok(attestation),
        Some(failures) => Err(ProviderError::AttestationFailed { failures }),
    }
}

/// The attestation of a wall whose canaries ran now; refused (naming every failed canary) when
/// any failed, so a session never starts on a wall that did not pass.
pub fn conclude(
    enforcement: EnforcementLevel,
    config_hash: String,
    canaries: Vec<CanaryResult>,
) -> Result<Attestation, ProviderError> {
    let attestation = Attestation {
        enforcement,
        config_hash,
        canaries,
        time_ms: now_ms(),
        limits: None,
    };
    if attestation.passed() {
        Ok(attestation)
    } else {
        let failures = attestation
            .failures()
            .map(|c| format!("{}: {}", c.name, c.detail))
            .collect::<Vec<_>>()
            .join("; ");
        Err(ProviderError::AttestationFailed { failures })
    }
}

/// `sha256:<hex>` over the parts of a rendered wall configuration, each length-prefixed so that
/// no two different part lists hash alike.
pub fn config_hash(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_separates_parts() {
        assert_ne!(config_hash(&["ab", "c"]), config_hash(&["a", "bc"]));
        assert_eq!(config_hash(&["x"]), config_hash(&["x"]));
        assert!(config_hash(&[]).starts_with("sha256:"));
    }
}
