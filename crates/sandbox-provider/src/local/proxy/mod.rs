//! The host-side allow-list proxy of the local wall.
//!
//! It listens on a unix socket that is bind-mounted into the sandbox, where the bridge of
//! `paddock-wall` forwards `127.0.0.1:<port>` to it. Per connection it serves one request:
//! `CONNECT host:port` (a tunnel) or an absolute-form plain-HTTP request. It asks the session's
//! [`EgressPolicy`] about the name, resolves the name itself, asks again about every address,
//! and connects only to an allowed address. A refusal is answered with `403` and a body naming
//! the host and the policy, and recorded as a [`NetworkDenial`] naming the program only when
//! the wall's own bridge said so (its preamble carries the wall's [`BridgeToken`]).
//!
//! It cannot be exhausted: each wall's proxy serves at most [`ProxyLimits::connections`] at
//! once and every proxy of the process draws on one [`DescriptorBudget`]; a connection past
//! either is answered `503` naming the limit (and recorded when its request could be read),
//! or closed at once when even the few kept for answering are busy. No accept error ends the
//! loop: it backs off and retries.

mod denials;
mod limits;
mod policy;
mod request;
mod resolver;
mod serve;
mod token;

use std::path::Path;
use std::sync::Arc;

use paddock_wall::bridge::accept_backoff;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

pub use denials::DenialLog;
pub use limits::{
    DEFAULT_CONNECTIONS, DescriptorBudget, DescriptorLimit, ProxyLimits, ProxyStats,
    REFUSAL_HEAD_TIMEOUT, REFUSAL_LANE, RESERVED_DESCRIPTORS, raise_descriptor_limit,
};
pub use policy::{Decision, EgressPolicy, ExplicitAddress, WithExplicitAddresses};
pub use request::{BadRequest, Preamble, Request, Target};
pub use resolver::{Resolver, StaticResolver, SystemResolver};
pub use serve::serve_connection;
pub use token::BridgeToken;

use crate::socket_address::SocketAddress;
use serve::Limit;

/// What one proxy serves.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    pub policy: Arc<dyn EgressPolicy>,
    pub resolver: Arc<dyn Resolver>,
    pub denials: DenialLog,
    /// The wall's bridge token: a preamble names the program only when it carries it. `None`
    /// believes no preamble (every program is recorded as unknown).
    pub bridge_token: Option<BridgeToken>,
    pub limits: ProxyLimits,
    /// The descriptors this proxy may draw on, shared with the other proxies of the process.
    pub budget: DescriptorBudget,
    pub stats: ProxyStats,
}

impl ProxyConfig {
    /// A proxy with the default limits on the process's descriptor budget, believing no
    /// preamble until [`ProxyConfig::bridge_token`] is set.
    pub fn new(
        policy: Arc<dyn EgressPolicy>,
        resolver: Arc<dyn Resolver>,
        denials: DenialLog,
    ) -> Self {
        Self {
            policy,
            resolver,
            denials,
            bridge_token: None,
            limits: ProxyLimits::default(),
            budget: DescriptorBudget::process(),
            stats: ProxyStats::default(),
        }
    }
}

/// Binds the proxy's socket at `path` (of any length) and serves it until `stop` fires.
pub fn start(
    path: &Path,
    config: ProxyConfig,
    stop: CancellationToken,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let listener = UnixListener::bind(SocketAddress::new(path)?.path())?;
    Ok(tokio::spawn(accept_loop(listener, config, stop)))
}

/// Accepts until `stop` fires; an error (`EMFILE`, `ENFILE`, `ENOMEM`, anything) pauses the
/// loop, never ends it.
async fn accept_loop(listener: UnixListener, config: ProxyConfig, stop: CancellationToken) {
    let wall = Arc::new(Semaphore::new(config.limits.connections));
    let lane = Arc::new(Semaphore::new(REFUSAL_LANE));
    let mut failures = 0u32;
    loop {
        let stream = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    failures = 0;
                    stream
                }
                Err(e) => {
                    let pause = accept_backoff(failures);
                    if failures == 0 {
                        tracing::warn!(error = %e, ?pause, "the wall's proxy could not accept a connection; it retries");
                    }
                    failures = failures.saturating_add(1);
                    tokio::select! {
                        () = stop.cancelled() => break,
                        () = tokio::time::sleep(pause) => continue,
                    }
                }
            },
        };
        admit(stream, &config, &wall, &lane, &stop);
    }
}

/// Serves `stream` if the wall and the host have room for it, else refuses it: answered
/// `503` from the refusal lane when a place is free there, closed at once otherwise.
fn admit(
    stream: UnixStream,
    config: &ProxyConfig,
    wall: &Arc<Semaphore>,
    lane: &Arc<Semaphore>,
    stop: &CancellationToken,
) {
    let limit = match wall.clone().try_acquire_owned() {
        Ok(permit) => match config.budget.try_take(2) {
            Some(descriptors) => {
                let held = (permit, descriptors, config.stats.opened());
                let (config, stop) = (config.clone(), stop.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        () = stop.cancelled() => {}
                        () = serve_connection(stream, &config) => {}
                    }
                    drop(held);
                });
                return;
            }
            None => Limit::Host,
        },
        Err(_) => Limit::Wall(config.limits.connections),
    };
    let refused = config.stats.refused_one();
    if refused == 1 || refused.is_multiple_of(1000) {
        tracing::warn!(refused, %limit, "the wall's proxy is refusing connections over its limit");
    }
    let Some(held) = lane
        .clone()
        .try_acquire_owned()
        .ok()
        .and_then(|place| Some((place, config.budget.try_take(1)?)))
    else {
        return;
    };
    let (config, stop) = (config.clone(), stop.clone());
    tokio::spawn(async move {
        tokio::select! {
            () = stop.cancelled() => {}
            () = serve::refuse_over_limit(stream, &config, limit) => {}
        }
        drop(held);
    });
}

#[cfg(test)]
#[path = "proxy_tests.rs"]
mod tests;
