//! `glob` and `grep`: the path guard authorises the base folder, then the `search` engines
//! walk it through the open handle (`/proc/self/fd/<n>`), so a symlink swapped above the base
//! after the check cannot redirect the walk. Result paths are rewritten back to real paths.

use tool_protocol::{ErrorCode, Glob, GlobResult, Grep, GrepResult};

use super::CallContext;
use crate::error::ToolError;

pub fn glob(_ctx: &CallContext<'_>, _args: &Glob) -> Result<GlobResult, ToolError> {
    Err(ToolError::new(
        ErrorCode::Internal,
        "glob is not wired to the search engine yet",
    ))
}

pub fn grep(_ctx: &CallContext<'_>, _args: &Grep) -> Result<GrepResult, ToolError> {
    Err(ToolError::new(
        ErrorCode::Internal,
        "grep is not wired to the search engine yet",
    ))
}
