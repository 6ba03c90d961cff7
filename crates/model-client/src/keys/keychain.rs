//! The `keychain` key store: the OS keychain through the `keyring` crate (v3), service
//! [`KEYCHAIN_SERVICE`], account = the provider name.
//!
//! On Linux that is the freedesktop secret service on the D-Bus session bus (gnome-keyring,
//! KWallet). A headless server usually has no session bus; that is detected before any call
//! and reported with the fix, as is a secret service that does not answer.

use super::{ApiKey, Environment, KEYCHAIN_SERVICE, KeyStoreError};

const SESSION_BUS_VARIABLE: &str = "DBUS_SESSION_BUS_ADDRESS";

#[derive(Debug)]
pub(super) struct KeychainStore {
    environment: Environment,
}

impl KeychainStore {
    pub(super) fn new(environment: Environment) -> Self {
        Self { environment }
    }

    /// Why the keychain cannot work here, when that is known without asking it.
    fn known_unavailable(&self) -> Option<String> {
        if !cfg!(target_os = "linux") {
            return Some(
                "this build of Paddock reaches the keychain only on Linux (secret service)"
                    .to_owned(),
            );
        }
        if self.environment.get(SESSION_BUS_VARIABLE).is_none() {
            return Some(format!(
                "there is no D-Bus session bus ({SESSION_BUS_VARIABLE} is not set), which is \
                 usual on a headless server, so no secret service can be reached"
            ));
        }
        None
    }

    fn entry(&self, account: &str) -> Result<keyring::Entry, KeyStoreError> {
        if let Some(reason) = self.known_unavailable() {
            return Err(KeyStoreError::KeychainUnavailable { reason });
        }
        keyring::Entry::new(KEYCHAIN_SERVICE, account).map_err(|error| map_error(account, error))
    }

    pub(super) fn get(&self, account: &str) -> Result<Option<String>, KeyStoreError> {
        match self.entry(account)?.get_password() {
            Ok(value) => Ok(Some(value)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(error) => Err(map_error(account, error)),
        }
    }

    pub(super) fn set(&self, account: &str, key: &ApiKey) -> Result<(), KeyStoreError> {
        self.entry(account)?
            .set_password(key.expose_secret())
            .map_err(|error| map_error(account, error))
    }

    pub(super) fn delete(&self, account: &str) -> Result<bool, KeyStoreError> {
        match self.entry(account)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(error) => Err(map_error(account, error)),
        }
    }

    pub(super) fn describe(&self) -> String {
        match self.known_unavailable() {
            Some(reason) => format!(
                "keychain: UNAVAILABLE: {reason}; choose key_store = \"file\" or \"env\" in \
                 the settings"
            ),
            None => format!(
                "keychain: OS secret service over the D-Bus session bus (service \
                 `{KEYCHAIN_SERVICE}`, one item per provider)"
            ),
        }
    }
}

/// Every keyring error as ours. `BadEncoding` carries the stored bytes and `Ambiguous` the
/// matching items: neither is ever formatted.
fn map_error(account: &str, error: keyring::Error) -> KeyStoreError {
    let keychain = |message: String| KeyStoreError::Keychain {
        account: account.to_owned(),
        message,
    };
    match error {
        keyring::Error::PlatformFailure(source) => KeyStoreError::KeychainUnavailable {
            reason: format!("the secret service could not be reached ({source})"),
        },
        keyring::Error::NoStorageAccess(source) => KeyStoreError::KeychainUnavailable {
            reason: format!("the keychain is locked or refused access ({source})"),
        },
        keyring::Error::NoEntry => keychain("no key is stored".to_owned()),
        keyring::Error::BadEncoding(_) => keychain("the stored key is not UTF-8 text".to_owned()),
        keyring::Error::TooLong(attribute, limit) => keychain(format!(
            "the {attribute} is longer than the keychain's limit of {limit}"
        )),
        keyring::Error::Invalid(attribute, reason) => {
            keychain(format!("the {attribute} is invalid: {reason}"))
        }
        keyring::Error::Ambiguous(items) => keychain(format!(
            "{} keychain items match service `{KEYCHAIN_SERVICE}`; remove the extra ones \
             (e.g. with `secret-tool clear service {KEYCHAIN_SERVICE} username {account}`)",
            items.len()
        )),
        other => keychain(format!("unexpected keychain error ({other})")),
    }
}
