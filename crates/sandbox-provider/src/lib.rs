//! # sandbox-provider
//!
//! One [`SandboxProvider`] trait for Paddock's three walls, so the agent never knows which one
//! runs its tools:
//!
//! * `openshell`: an NVIDIA OpenShell sandbox per session, driven over gRPC;
//! * `local`: Paddock's own Linux wall (bubblewrap + Landlock + seccomp + an allow-list proxy),
//!   the embedded default when OpenShell is not configured;
//! * `direct`: no wall at all, chosen explicitly; its enforcement level is `none`.
//!
//! Every provider starts the tool-runner and reaches it through a [`RunnerConnection`].

mod attestation;
mod canaries;
mod credentials;
pub mod direct;
mod error;
mod fd_stat;
mod grant_pins;
pub mod local;
pub mod openshell;
pub mod protected;
pub mod runner_client;
mod sandbox;
mod sandbox_folder;
mod set_id_sweep;
mod socket_address;
mod spawn;

pub use error::ProviderError;
pub use runner_client::{CallError, ConnectError, OutputChunk, RunnerConnection};
pub use sandbox::{
    ClosedSandbox, NoLiveSessions, Sandbox, SandboxProvider, SandboxRequest, SessionOwners,
    ToolCallOutcome,
};
