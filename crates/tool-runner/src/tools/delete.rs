//! `delete`: a file, a symlink (never what it points to), or a folder with its contents.
//!
//! A recursive delete walks the tree through open folder handles (never following symlinks),
//! first to check it (no granted folder, no other file system inside), then to remove it
//! bottom-up. Depth is capped so a hostile tree cannot exhaust file descriptors.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use tool_protocol::{Delete, DeleteResult, ErrorCode, FileKind};

use super::CallContext;
use super::entry::kind;
use crate::error::ToolError;
use crate::path_guard::{Location, Options, child_path, open_entry};

/// Deepest folder nesting `delete` and `list_directory` walk.
pub const MAX_TREE_DEPTH: usize = 256;

pub fn delete(ctx: &CallContext<'_>, args: &Delete) -> Result<DeleteResult, ToolError> {
    let resolved = ctx.guard.resolve("path", &args.path, Options::KEEP_LINK)?;
    let path = resolved.display();
    let Location::Entry {
        parent,
        name,
        existing,
    } = &resolved.location
    else {
        return Err(ToolError::new(
            ErrorCode::PermissionDenied,
            format!("{path}: is one of the session's folders and cannot be deleted"),
        ));
    };
    resolved.require_writable()?;
    let existing = existing
        .as_ref()
        .ok_or_else(|| ToolError::not_found(&path))?;
    let entry_kind = kind(&existing.meta);
    let removed = if entry_kind != FileKind::Directory {
        fs::remove_file(child_path(parent, name)).map_err(|e| ToolError::io(&path, &e))?;
        1
    } else if !args.recursive.unwrap_or(false) {
        fs::remove_dir(child_path(parent, name)).map_err(|e| {
            if e.kind() == io::ErrorKind::DirectoryNotEmpty {
                ToolError::new(
                    ErrorCode::Io,
                    format!(
                        "{path}: the folder is not empty; set `recursive` to delete it with \
                         everything in it"
                    ),
                )
            } else {
                ToolError::io(&path, &e)
            }
        })?;
        1
    } else {
        let tree = Tree {
            ctx,
            dev: existing.meta.dev(),
        };
        tree.check(&existing.handle, &resolved.path)?;
        let inside = tree.remove_contents(&existing.handle, &resolved.path)?;
        fs::remove_dir(child_path(parent, name)).map_err(|e| ToolError::io(&path, &e))?;
        inside + 1
    };
    Ok(DeleteResult {
        path,
        kind: entry_kind,
        removed,
    })
}

/// One folder on the walk: its handle, path, and the names still to visit.
struct Frame {
    handle: File,
    path: PathBuf,
    names: Vec<OsString>,
}

struct Tree<'a> {
    ctx: &'a CallContext<'a>,
    /// The device of the folder being deleted; the walk never crosses into another one.
    dev: u64,
}

impl Tree<'_> {
    fn frame(&self, handle: File, path: PathBuf) -> Result<Frame, ToolError> {
        let mut names: Vec<OsString> = fs::read_dir(crate::path_guard::proc_path(&handle))
            .and_then(|entries| entries.map(|e| e.map(|e| e.file_name())).collect())
            .map_err(|e| ToolError::io(path.display(), &e))?;
        names.sort_unstable_by(|a, b| b.cmp(a));
        Ok(Frame {
            handle,
            path,
            names,
        })
    }

    /// Opens the sub-folder `name` of `frame`, refusing granted folders, mount points and
    /// over-deep trees.
    fn enter(&self, frame: &Frame, name: &OsString, depth: usize) -> Result<Frame, ToolError> {
        let path = frame.path.join(name);
        let handle =
            open_entry(&frame.handle, name).map_err(|e| ToolError::io(path.display(), &e))?;
        let meta = handle
            .metadata()
            .map_err(|e| ToolError::io(path.display(), &e))?;
        if !meta.is_dir() {
            return Err(ToolError::new(
                ErrorCode::Io,
                format!("{}: changed while being deleted", path.display()),
            ));
        }
        if self.guard_has_root(meta.dev(), meta.ino()) {
            return Err(refuse(&path, "is one of the session's folders"));
        }
        if meta.dev() != self.dev {
            return Err(refuse(&path, "is another file system mounted here"));
        }
        if depth > MAX_TREE_DEPTH {
            return Err(refuse(
                &path,
                &format!("is nested more than {MAX_TREE_DEPTH} folders deep"),
            ));
        }
        self.frame(handle, path)
    }

    fn guard_has_root(&self, dev: u64, ino: u64) -> bool {
        self.ctx.guard.root_by_identity(dev, ino).is_some()
    }

    /// Walks the whole tree without changing it, refusing what must not be deleted.
    fn check(&self, top: &File, top_path: &Path) -> Result<(), ToolError> {
        let mut stack = vec![self.frame(clone(top, top_path)?, top_path.to_path_buf())?];
        while let Some(frame) = stack.last_mut() {
            self.ctx.check_cancelled()?;
            let Some(name) = frame.names.pop() else {
                stack.pop();
                continue;
            };
            let frame = &stack[stack.len() - 1];
            if is_folder(frame, &name)? {
                let child = self.enter(frame, &name, stack.len())?;
                stack.push(child);
            }
        }
        Ok(())
    }

    /// Removes everything inside `top`, bottom-up; returns the number of entries removed.
    fn remove_contents(&self, top: &File, top_path: &Path) -> Result<u64, ToolError> {
        let mut removed = 0;
        let mut stack = vec![self.frame(clone(top, top_path)?, top_path.to_path_buf())?];
        loop {
            self.ctx.check_cancelled()?;
            let Some(frame) = stack.last_mut() else {
                return Ok(removed);
            };
            let Some(name) = frame.names.pop() else {
                let done = stack.pop();
                if let (Some(done), Some(parent)) = (done, stack.last()) {
                    let name = done.path.file_name().unwrap_or_default();
                    fs::remove_dir(child_path(&parent.handle, name))
                        .map_err(|e| ToolError::io(done.path.display(), &e))?;
                    removed += 1;
                }
                continue;
            };
            let frame = &stack[stack.len() - 1];
            if is_folder(frame, &name)? {
                let child = self.enter(frame, &name, stack.len())?;
                stack.push(child);
            } else {
                fs::remove_file(child_path(&frame.handle, &name))
                    .map_err(|e| ToolError::io(frame.path.join(&name).display(), &e))?;
                removed += 1;
            }
        }
    }
}

fn is_folder(frame: &Frame, name: &OsString) -> Result<bool, ToolError> {
    fs::symlink_metadata(child_path(&frame.handle, name))
        .map(|meta| meta.is_dir())
        .map_err(|e| ToolError::io(frame.path.join(name).display(), &e))
}

fn clone(file: &File, path: &Path) -> Result<File, ToolError> {
    file.try_clone()
        .map_err(|e| ToolError::io(path.display(), &e))
}

fn refuse(path: &Path, why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::PermissionDenied,
        format!("{}: {why}; refusing to delete it", path.display()),
    )
}
