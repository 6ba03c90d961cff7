//! `list_directory` (entries sorted by path, depth-first) and `stat`.

use std::ffi::OsString;
use std::fs::{self, File};

use tool_protocol::{DirEntry, ListDirectory, ListDirectoryResult, RootMode, Stat, StatResult};

use super::CallContext;
use super::delete::MAX_TREE_DEPTH;
use super::entry::{kind, modified_ms};
use crate::error::ToolError;
use crate::path_guard::{Location, Options, child_path, open_entry, proc_path};

/// Entries `list_directory` returns when the call names no limit.
pub const DEFAULT_ENTRIES: u64 = 1000;
/// The largest `limit` a call may ask for (keeps the result frame well under 8 MiB).
pub const MAX_ENTRIES: u64 = 20_000;

/// A folder being listed: its handle, its path relative to the listed folder, the names
/// still to visit (last first) and its depth (1 for the listed folder's own entries).
struct Frame {
    handle: File,
    prefix: String,
    names: Vec<OsString>,
    depth: u64,
}

fn frame(handle: File, prefix: String, depth: u64, shown: &str) -> Result<Frame, ToolError> {
    let mut names: Vec<OsString> = fs::read_dir(proc_path(&handle))
        .and_then(|entries| entries.map(|e| e.map(|e| e.file_name())).collect())
        .map_err(|e| ToolError::io(shown, &e))?;
    names.sort_unstable_by(|a, b| b.cmp(a));
    Ok(Frame {
        handle,
        prefix,
        names,
        depth,
    })
}

pub fn list_directory(
    ctx: &CallContext<'_>,
    args: &ListDirectory,
) -> Result<ListDirectoryResult, ToolError> {
    let depth = args.depth.unwrap_or(1);
    if depth == 0 || depth > MAX_TREE_DEPTH as u64 {
        return Err(ToolError::bad_args(
            "depth",
            format!("must be between 1 and {MAX_TREE_DEPTH}"),
        ));
    }
    let limit = args.limit.unwrap_or(DEFAULT_ENTRIES);
    if limit == 0 || limit > MAX_ENTRIES {
        return Err(ToolError::bad_args(
            "limit",
            format!("must be between 1 and {MAX_ENTRIES}"),
        ));
    }
    let input = args.path.as_deref().unwrap_or(".");
    let resolved = ctx.guard.resolve("path", input, Options::FOLLOW)?;
    let path = resolved.display();
    let (handle, meta) = resolved.existing()?;
    if !meta.is_dir() {
        return Err(ToolError::not_a_directory(&path));
    }
    let handle = handle.try_clone().map_err(|e| ToolError::io(&path, &e))?;
    let mut entries = Vec::new();
    let mut truncated = false;
    let mut stack = vec![frame(handle, String::new(), 1, &path)?];
    'walk: while let Some(top) = stack.last_mut() {
        ctx.check_cancelled()?;
        let Some(name) = top.names.pop() else {
            stack.pop();
            continue;
        };
        let rel = format!("{}{}", top.prefix, name.to_string_lossy());
        let Ok(meta) = fs::symlink_metadata(child_path(&top.handle, &name)) else {
            // Gone since the folder was read: nothing to list.
            continue;
        };
        if entries.len() as u64 == limit {
            truncated = true;
            break 'walk;
        }
        entries.push(DirEntry {
            path: rel.clone(),
            kind: kind(&meta),
            size: meta.len(),
            modified_ms: modified_ms(&meta),
        });
        if meta.is_dir() && top.depth < depth {
            let depth = top.depth + 1;
            // A folder we may not open is still listed; its contents are not.
            let child = open_entry(&top.handle, &name).ok().and_then(|handle| {
                let is_dir = handle.metadata().is_ok_and(|m| m.is_dir());
                is_dir.then(|| frame(handle, format!("{rel}/"), depth, &rel).ok())?
            });
            if let Some(child) = child {
                stack.push(child);
            }
        }
    }
    Ok(ListDirectoryResult {
        path,
        entries,
        truncated,
    })
}

pub fn stat(ctx: &CallContext<'_>, args: &Stat) -> Result<StatResult, ToolError> {
    use std::os::unix::fs::MetadataExt;
    let resolved = ctx.guard.resolve("path", &args.path, Options::KEEP_LINK)?;
    let path = resolved.display();
    let (_, meta) = resolved.existing()?;
    let link_target = match &resolved.location {
        Location::Entry { parent, name, .. } if meta.file_type().is_symlink() => Some(
            fs::read_link(child_path(parent, name))
                .map_err(|e| ToolError::io(&path, &e))?
                .to_string_lossy()
                .into_owned(),
        ),
        _ => None,
    };
    Ok(StatResult {
        kind: kind(meta),
        size: meta.len(),
        modified_ms: modified_ms(meta),
        mode: u64::from(meta.mode() & 0o7777),
        read_only: resolved.mode == RootMode::ReadOnly,
        link_target,
        device: Some(meta.dev()),
        inode: Some(meta.ino()),
        path,
    })
}
