//! # tool-protocol
//!
//! The contract between Paddock's host and the tool-runner that serves an agent's shell and
//! file tools inside a sandbox. Both sides link this crate, so they cannot drift.
//!
//! * Framing: JSON Lines, one UTF-8 object per line, at most 8 MiB ([`framing`]).
//! * Frames: a `hello` handshake, then concurrent `call`s answered out of order by `output`
//!   chunks and exactly one `result` or `error` each; `cancel` and `shutdown` ([`frames`]).
//! * Tools and their arguments and results ([`tools`]); error codes ([`error`]).
//! * Bytes that are not UTF-8 travel base64-encoded with an explicit `encoding` ([`data`]).
//!
//! std only, no dependencies: the runner must stay a small static executable.
//! The full description of the wire is `docs/tool-protocol.md`.

pub mod base64;
#[cfg(target_arch = "x86_64")]
mod base64_simd;
pub mod checksum;
pub mod convert;
pub mod data;
pub mod error;
pub mod frames;
pub mod framing;
pub mod json;
pub mod tools;

pub use data::{Data, Encoding};
pub use error::ErrorCode;
pub use frames::{
    Call, FrameError, Hello, HostFrame, PROTOCOL_VERSION, Root, RootMode, RunnerFrame, Stream,
};
pub use framing::{Line, LineReader, MAX_LINE_BYTES};
pub use tools::*;
