//! The gRPC channel to the gateway: rustls (ring) with the discovered credentials, HTTP/2
//! keepalive every 10 s, a 10 s connect timeout, and the bearer token on every call.

use std::time::Duration;

use openshell_proto::v1::open_shell_client::OpenShellClient;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic::{Code, Request, Status};

use super::discovery::{GatewayTarget, TlsMode};

/// The CLI's HTTP/2 keepalive interval.
pub const KEEPALIVE: Duration = Duration::from_secs(10);
/// How long connecting may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The gateway decodes at most 1 MiB per message; ours stay below.
pub const MAX_MESSAGE_BYTES: usize = 1024 * 1024;
/// Stdin is sent in chunks of at most this many bytes (well under the message limit).
pub const STDIN_CHUNK_BYTES: usize = 256 * 1024;
/// What we accept from the gateway in one message.
const MAX_DECODE_BYTES: usize = 16 * 1024 * 1024;

/// Adds `authorization: Bearer …` (marked sensitive, so never logged) when there is a token.
#[derive(Clone, Default)]
pub struct BearerAuth {
    header: Option<MetadataValue<Ascii>>,
}

impl std::fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuth")
            .field("token", &self.header.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

impl Interceptor for BearerAuth {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(header) = &self.header {
            request
                .metadata_mut()
                .insert("authorization", header.clone());
        }
        Ok(request)
    }
}

/// The generated client over our channel.
pub type GatewayClient = OpenShellClient<InterceptedService<Channel, BearerAuth>>;

/// Why a gateway call failed, sorted by what the caller does about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GatewayError {
    #[error("the OpenShell gateway at {endpoint} cannot be reached: {detail}")]
    Unreachable { endpoint: String, detail: String },
    #[error("the OpenShell gateway refused our credentials: {0}")]
    Unauthenticated(String),
    #[error("the OpenShell gateway denied the call: {0}")]
    PermissionDenied(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("already exists: {0}")]
    AlreadyExists(String),
    /// FAILED_PRECONDITION: e.g. the sandbox is not ready, or a review token is stale.
    #[error("not possible now: {0}")]
    Precondition(String),
    /// The stream or the relay broke before an answer (UNAVAILABLE and friends): a transport
    /// error, never a command's exit status.
    #[error("the connection to the gateway broke: {0}")]
    Transport(String),
    #[error("the gateway rejected the request ({code}): {message}")]
    Rejected { code: String, message: String },
    #[error("{0}")]
    Setup(String),
}

impl GatewayError {
    pub fn from_status(status: &Status) -> Self {
        let message = status.message().to_owned();
        match status.code() {
            Code::Unauthenticated => GatewayError::Unauthenticated(message),
            Code::PermissionDenied => GatewayError::PermissionDenied(message),
            Code::NotFound => GatewayError::NotFound(message),
            Code::AlreadyExists => GatewayError::AlreadyExists(message),
            Code::FailedPrecondition => GatewayError::Precondition(message),
            Code::Unavailable | Code::Aborted | Code::Cancelled | Code::DeadlineExceeded => {
                GatewayError::Transport(format!("{}: {message}", code_name(status.code())))
            }
            code => GatewayError::Rejected {
                code: code_name(code).to_owned(),
                message,
            },
        }
    }
}

impl From<Status> for GatewayError {
    fn from(status: Status) -> Self {
        GatewayError::from_status(&status)
    }
}

pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// Opens the channel (failing fast when the gateway is unreachable) and wraps it in a client.
pub async fn connect(target: &GatewayTarget) -> Result<GatewayClient, GatewayError> {
    let setup = |what: &str, e: &dyn std::fmt::Display| {
        GatewayError::Setup(format!("{what} for {}: {e}", target.endpoint))
    };
    let mut endpoint = Endpoint::from_shared(target.endpoint.clone())
        .map_err(|e| setup("the endpoint URL", &e))?
        .connect_timeout(CONNECT_TIMEOUT)
        .http2_keep_alive_interval(KEEPALIVE)
        .keep_alive_timeout(KEEPALIVE * 2)
        .keep_alive_while_idle(true)
        .tcp_nodelay(true);
    let tls = match &target.tls {
        TlsMode::Plaintext => None,
        TlsMode::Mtls { ca, cert, key } => Some(
            ClientTlsConfig::new()
                .ca_certificate(Certificate::from_pem(ca))
                .identity(Identity::from_pem(cert, key)),
        ),
        TlsMode::CaOnly { ca } => {
            Some(ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca)))
        }
        TlsMode::SystemRoots => Some(ClientTlsConfig::new().with_native_roots()),
    };
    if let Some(tls) = tls {
        endpoint = endpoint
            .tls_config(tls.domain_name(target.host.clone()))
            .map_err(|e| setup("the TLS configuration", &e))?;
    }
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| GatewayError::Unreachable {
            endpoint: target.endpoint.clone(),
            detail: error_chain(&e),
        })?;
    let header = match &target.bearer {
        None => None,
        Some(token) => {
            let mut value: MetadataValue<Ascii> =
                format!("Bearer {}", token.expose()).parse().map_err(|_| {
                    GatewayError::Setup(
                        "the OIDC access token has characters a header cannot carry".into(),
                    )
                })?;
            value.set_sensitive(true);
            Some(value)
        }
    };
    Ok(
        OpenShellClient::with_interceptor(channel, BearerAuth { header })
            .max_encoding_message_size(MAX_MESSAGE_BYTES)
            .max_decoding_message_size(MAX_DECODE_BYTES),
    )
}

/// An error and its sources on one line (tonic's transport errors hide the cause otherwise).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let next = inner.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = inner.source();
    }
    text
}
