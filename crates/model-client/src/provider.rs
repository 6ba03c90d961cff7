//! Known providers: which wire format, which base URL, whether a key is needed.

use std::sync::Arc;

use crate::anthropic::AnthropicClient;
use crate::client::ModelClient;
use crate::config::ClientConfig;
use crate::error::ModelError;
use crate::openai::OpenAiClient;
use crate::types::Vendor;

/// Whether a provider needs a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyNeed {
    Required,
    /// Only when the server was started with one (vLLM `--api-key`).
    Optional,
    /// A local server that takes none.
    None,
}

/// A provider's defaults. The name is also the key store account and the env store's
/// variable prefix (`openrouter` → `OPENROUTER_API_KEY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderPreset {
    pub name: &'static str,
    pub vendor: Vendor,
    pub base_url: &'static str,
    pub key: KeyNeed,
    /// The cheap authenticated GET that tests a key, appended to the base URL: the model
    /// list, or for OpenRouter (whose model list is public) the key's own record.
    pub key_check_path: &'static str,
}

/// The providers Paddock knows by name. Any other OpenAI-compatible server works through
/// an explicit base URL.
pub const PROVIDERS: &[ProviderPreset] = &[
    ProviderPreset {
        name: "anthropic",
        vendor: Vendor::Anthropic,
        base_url: crate::anthropic::DEFAULT_BASE_URL,
        key: KeyNeed::Required,
        key_check_path: "/v1/models",
    },
    ProviderPreset {
        name: "openai",
        vendor: Vendor::OpenAiCompatible,
        base_url: crate::openai::DEFAULT_BASE_URL,
        key: KeyNeed::Required,
        key_check_path: "/models",
    },
    ProviderPreset {
        name: "openrouter",
        vendor: Vendor::OpenAiCompatible,
        base_url: "https://openrouter.ai/api/v1",
        key: KeyNeed::Required,
        key_check_path: "/key",
    },
    ProviderPreset {
        name: "ollama",
        vendor: Vendor::OpenAiCompatible,
        base_url: "http://localhost:11434/v1",
        key: KeyNeed::None,
        key_check_path: "/models",
    },
    ProviderPreset {
        name: "lmstudio",
        vendor: Vendor::OpenAiCompatible,
        base_url: "http://localhost:1234/v1",
        key: KeyNeed::None,
        key_check_path: "/models",
    },
    ProviderPreset {
        name: "vllm",
        vendor: Vendor::OpenAiCompatible,
        base_url: "http://localhost:8000/v1",
        key: KeyNeed::Optional,
        key_check_path: "/models",
    },
];

/// The key-check path of a server of `vendor` that is not a preset (see
/// [`ProviderPreset::key_check_path`]).
pub fn default_key_check_path(vendor: Vendor) -> &'static str {
    match vendor {
        Vendor::Anthropic => "/v1/models",
        Vendor::OpenAiCompatible => "/models",
    }
}

/// Tests `config`'s key against the API at `config.base_url` with one authenticated GET of
/// `path` (see [`ProviderPreset::key_check_path`]): no tokens are spent. `Ok` when the API
/// answered 2xx; a refused key is [`ModelError::Auth`]; no retries. Errors never hold the key.
pub async fn check_key(
    vendor: Vendor,
    config: &ClientConfig,
    path: &str,
) -> Result<(), ModelError> {
    let headers = match vendor {
        Vendor::Anthropic => crate::anthropic::auth_headers(config)?,
        Vendor::OpenAiCompatible => crate::openai::auth_headers(config)?,
    };
    crate::transport::Transport::new(config, path, headers)?
        .get_succeeds()
        .await
}

/// The preset named `name`.
pub fn preset(name: &str) -> Option<&'static ProviderPreset> {
    PROVIDERS.iter().find(|preset| preset.name == name)
}

/// A client of `vendor`'s wire format with `config`.
pub fn connect(vendor: Vendor, config: &ClientConfig) -> Result<Arc<dyn ModelClient>, ModelError> {
    Ok(match vendor {
        Vendor::Anthropic => Arc::new(AnthropicClient::new(config)?),
        Vendor::OpenAiCompatible => Arc::new(OpenAiClient::new(config)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{ApiKey, env_variable};

    #[test]
    fn every_preset_builds_a_client_of_its_vendor() {
        for preset in PROVIDERS {
            let key = (preset.key != KeyNeed::None).then(|| ApiKey::new("sk-x").unwrap());
            let client = connect(preset.vendor, &ClientConfig::new(preset.base_url, key)).unwrap();
            assert_eq!(client.vendor(), preset.vendor, "{}", preset.name);
        }
    }

    #[test]
    fn presets_are_found_by_name_and_map_to_their_env_variables() {
        assert_eq!(
            preset("ollama").map(|p| p.base_url),
            Some("http://localhost:11434/v1")
        );
        assert_eq!(
            preset("anthropic").map(|p| p.vendor),
            Some(Vendor::Anthropic)
        );
        assert_eq!(preset("nope"), None);
        assert_eq!(env_variable("openrouter"), "OPENROUTER_API_KEY");
    }
}
