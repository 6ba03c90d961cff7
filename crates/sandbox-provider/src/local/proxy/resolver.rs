//! Name resolution for the proxy. The proxy resolves every name itself (a client's own
//! resolution is never trusted); the resolver is injectable so tests can map names to servers
//! of their own without any lookup leaving the machine.

use std::collections::HashMap;
use std::fmt::Debug;
use std::io;
use std::net::IpAddr;

use async_trait::async_trait;

#[async_trait]
pub trait Resolver: Send + Sync + Debug {
    /// The addresses of `host`, in the order to try them.
    async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<IpAddr>>;
}

/// The system's resolver (`getaddrinfo`, through tokio).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemResolver;

#[async_trait]
impl Resolver for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> io::Result<Vec<IpAddr>> {
        let addresses = tokio::net::lookup_host((host, port)).await?;
        Ok(addresses.map(|a| a.ip()).collect())
    }
}

/// A fixed map of names to addresses, like a hosts file; names not in it do not resolve
/// (there is no fall-back to the system, so nothing it is asked leaves the machine).
#[derive(Debug, Default, Clone)]
pub struct StaticResolver {
    names: HashMap<String, Vec<IpAddr>>,
}

impl StaticResolver {
    pub fn new() -> Self {
        Self::default()
    }

    /// Maps `host` (case-insensitively) to `addresses`.
    pub fn with(mut self, host: &str, addresses: &[IpAddr]) -> Self {
        self.names
            .insert(host.to_ascii_lowercase(), addresses.to_vec());
        self
    }
}

#[async_trait]
impl Resolver for StaticResolver {
    async fn resolve(&self, host: &str, _port: u16) -> io::Result<Vec<IpAddr>> {
        self.names
            .get(&host.to_ascii_lowercase())
            .cloned()
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{host} is not in the resolver's map"),
                )
            })
    }
}
