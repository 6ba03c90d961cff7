//! `glob` and `grep`: the path guard authorises the base, then the `search` engines walk it
//! through the open handle (`/proc/self/fd/<n>`), so a symlink swapped above the base after
//! the check cannot redirect the walk. Result paths and messages are rewritten back to the
//! real path.

use std::path::Path;

use tool_protocol::{Glob, GlobResult, Grep, GrepResult};

use super::CallContext;
use crate::error::ToolError;
use crate::path_guard::{Options, Resolved, proc_path};
use crate::search::{self, SearchError};

pub fn glob(ctx: &CallContext<'_>, args: &Glob) -> Result<GlobResult, ToolError> {
    let resolved =
        ctx.guard
            .resolve("path", args.path.as_deref().unwrap_or("."), Options::FOLLOW)?;
    let (handle, meta) = resolved.existing()?;
    if !meta.is_dir() {
        return Err(ToolError::not_a_directory(resolved.display()));
    }
    let base = proc_path(handle);
    let mut result = search::glob(&base, args, ctx.control.flag())
        .map_err(|e| search_error(&e, &base, &resolved))?;
    for path in &mut result.matches {
        *path = rewrite(path, &base, &resolved);
    }
    Ok(result)
}

pub fn grep(ctx: &CallContext<'_>, args: &Grep) -> Result<GrepResult, ToolError> {
    let resolved =
        ctx.guard
            .resolve("path", args.path.as_deref().unwrap_or("."), Options::FOLLOW)?;
    let (handle, _) = resolved.existing()?;
    let base = proc_path(handle);
    let mut result = search::grep(&base, args, ctx.control.flag())
        .map_err(|e| search_error(&e, &base, &resolved))?;
    for found in &mut result.matches {
        found.path = rewrite(&found.path, &base, &resolved);
    }
    Ok(result)
}

/// `path` with the handle prefix `base` replaced by the real path.
fn rewrite(path: &str, base: &Path, resolved: &Resolved) -> String {
    let prefix = base.to_string_lossy();
    match path.strip_prefix(prefix.as_ref()) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            format!("{}{rest}", resolved.display())
        }
        _ => path.to_owned(),
    }
}

fn search_error(e: &SearchError, base: &Path, resolved: &Resolved) -> ToolError {
    if matches!(e, SearchError::Cancelled) {
        return ToolError::cancelled();
    }
    let message = e
        .to_string()
        .replace(base.to_string_lossy().as_ref(), &resolved.display());
    ToolError::new(e.code(), message)
}
