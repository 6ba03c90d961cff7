//! The one error type of this crate: every variant names the field and says why.
//!
//! Secret values never appear here: errors about secrets and environment values name the
//! variable, never its value.

/// Why a session could not be rendered into a sandbox, or an input was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    #[error("{field}: path `{path}` {reason}")]
    InvalidPath {
        field: String,
        path: String,
        reason: String,
    },

    #[error("filesystem policy: {count} paths, at most {max} are allowed")]
    TooManyPaths { count: usize, max: usize },

    #[error("{field}: host `{host}` {reason}")]
    InvalidHost {
        field: String,
        host: String,
        reason: String,
    },

    #[error("{field}: `{value}` is not a valid port: {reason}")]
    InvalidPort {
        field: String,
        value: String,
        reason: String,
    },

    #[error("{field}: `{value}` is not a valid IP address or CIDR: {reason}")]
    InvalidAllowedIp {
        field: String,
        value: String,
        reason: String,
    },

    #[error("{field}: `{value}` {reason}")]
    InvalidName {
        field: String,
        value: String,
        reason: String,
    },

    /// The value is never shown: environment values may be sensitive.
    #[error("environment `{key}`: {reason}")]
    InvalidEnvironment { key: String, reason: String },

    #[error("environment: {count} entries, at most {max} are allowed")]
    TooManyEnvironmentEntries { count: usize, max: usize },

    #[error("label `{key}`: {reason}")]
    InvalidLabel { key: String, reason: String },

    #[error("the session has no folders: grant at least one folder (the tools work inside it)")]
    NoFolders,

    #[error("cwd `{cwd}` is not inside a granted folder")]
    CwdOutsideFolders { cwd: String },

    #[error(
        "{folder}: owned by {which} 0 (root). OpenShell never runs sandboxed programs as root; \
         give the session's folders to a regular user (chown) or use the local wall"
    )]
    RootOwner { folder: String, which: String },

    #[error(
        "the read-write folders have different owners ({owners}); the sandbox runs as one \
         user and could not write to all of them. Grant folders of one owner, or make the \
         others read-only"
    )]
    MixedOwners { owners: String },

    #[error(
        "image `{image}` is not pinned by digest. Paddock runs only images pinned as \
         `name@sha256:<64 hex>`; get the digest with `docker buildx imagetools inspect {image}` \
         (or `skopeo inspect docker://{image}`) and configure `{image}@sha256:<digest>`"
    )]
    ImageNotPinned { image: String },

    #[error(
        "secret `{name}` is not set on this machine: set the environment variable `{name}` \
         before starting the session, or remove it from the session's secrets"
    )]
    SecretMissing { name: String },

    #[error("secret `{name}`: {reason}")]
    InvalidSecret { name: String, reason: String },

    #[error("unknown credential entry `{name}` (known: {known})")]
    UnknownCredential { name: String, known: String },

    #[error("unknown network profile `{name}` (known: {known})")]
    UnknownProfile { name: String, known: String },

    #[error(
        "credential entries are enabled but no private home was given: the provider must \
         prepare the private home folder before rendering"
    )]
    MissingPrivateHome,

    #[error("kubeconfig: {reason}")]
    Kubeconfig { reason: String },

    #[error("sandbox data ({what}): {reason}")]
    Data { what: String, reason: String },
}

impl PolicyError {
    pub(crate) fn path(field: impl Into<String>, path: &str, reason: impl Into<String>) -> Self {
        Self::InvalidPath {
            field: field.into(),
            path: path.to_owned(),
            reason: reason.into(),
        }
    }

    pub(crate) fn host(field: impl Into<String>, host: &str, reason: impl Into<String>) -> Self {
        Self::InvalidHost {
            field: field.into(),
            host: host.to_owned(),
            reason: reason.into(),
        }
    }

    pub(crate) fn name(field: impl Into<String>, value: &str, reason: impl Into<String>) -> Self {
        Self::InvalidName {
            field: field.into(),
            value: value.to_owned(),
            reason: reason.into(),
        }
    }

    pub(crate) fn data(what: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Data {
            what: what.into(),
            reason: reason.into(),
        }
    }
}
