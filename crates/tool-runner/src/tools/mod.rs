//! The tools: one function per tool, all going through the path guard. [`run`] dispatches a
//! call; `upload` keeps per-connection state and lives in [`transfer::Transfers`].

mod bash;
mod capture;
mod delete;
mod entry;
mod listing;
mod read;
mod search_bridge;
pub mod transfer;
mod write;

use std::sync::Arc;

use tool_protocol::{ErrorCode, ToolRequest, ToolResult};

use crate::call::{CallControl, Limits, OutputSink};
use crate::error::ToolError;
use crate::path_guard::PathGuard;

pub use capture::Capture;

/// What a tool may use while it runs.
pub struct CallContext<'a> {
    pub guard: &'a PathGuard,
    pub limits: &'a Limits,
    pub control: &'a Arc<CallControl>,
    pub output: &'a Arc<dyn OutputSink>,
}

impl CallContext<'_> {
    /// Fails with `cancelled` once the call has been cancelled.
    pub fn check_cancelled(&self) -> Result<(), ToolError> {
        if self.control.is_cancelled() {
            Err(ToolError::cancelled())
        } else {
            Ok(())
        }
    }
}

/// Runs one call (any tool but `upload`) to its result.
pub fn run(ctx: &CallContext<'_>, request: ToolRequest) -> Result<ToolResult, ToolError> {
    ctx.check_cancelled()?;
    let result: ToolResult = match request {
        ToolRequest::RunBash(args) => bash::run_bash(ctx, &args)?.into(),
        ToolRequest::ReadFile(args) => read::read_file(ctx, &args)?.into(),
        ToolRequest::ReadBytes(args) => read::read_bytes(ctx, &args)?.into(),
        ToolRequest::WriteFile(args) => write::write_file(ctx, &args)?.into(),
        ToolRequest::EditFile(args) => write::edit_file(ctx, &args)?.into(),
        ToolRequest::Delete(args) => delete::delete(ctx, &args)?.into(),
        ToolRequest::ListDirectory(args) => listing::list_directory(ctx, &args)?.into(),
        ToolRequest::Stat(args) => listing::stat(ctx, &args)?.into(),
        ToolRequest::Glob(args) => search_bridge::glob(ctx, &args)?.into(),
        ToolRequest::Grep(args) => search_bridge::grep(ctx, &args)?.into(),
        ToolRequest::Download(args) => transfer::download(ctx, &args)?.into(),
        ToolRequest::Upload(_) => {
            return Err(ToolError::new(
                ErrorCode::Internal,
                "upload is handled by the connection, not the call pool",
            ));
        }
    };
    // A tool that finished while a cancel arrived still reports the cancel: the host asked to
    // stop caring about the call.
    ctx.check_cancelled()?;
    Ok(result)
}
