//! `write_file` and `edit_file`: both replace the file atomically (a temporary file in the same
//! folder, renamed over the old name), keeping the permission bits of the file they replace.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::sync::atomic::{AtomicU64, Ordering};

use tool_protocol::{EditFile, EditFileResult, ErrorCode, WriteFile, WriteFileResult};

use super::CallContext;
use super::entry::{WriteTarget, open_regular};
use crate::error::ToolError;
use crate::path_guard::{self, MAX_NAME_BYTES, Options};
use crate::sys;

/// Files larger than this are refused by `edit_file`.
pub const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

pub fn write_file(ctx: &CallContext<'_>, args: &WriteFile) -> Result<WriteFileResult, ToolError> {
    let options = if args.create_parents.unwrap_or(true) {
        Options::CREATE_PARENTS
    } else {
        Options::FOLLOW
    };
    let resolved = ctx.guard.resolve("path", &args.path, options)?;
    let target = WriteTarget::new(&resolved)?;
    let created = target.keep_mode.is_none();
    let content = args.content.as_bytes();
    replace_atomically(&target, content).map_err(|e| ToolError::io(resolved.display(), &e))?;
    Ok(WriteFileResult {
        path: resolved.display(),
        bytes_written: content.len() as u64,
        created,
    })
}

pub fn edit_file(ctx: &CallContext<'_>, args: &EditFile) -> Result<EditFileResult, ToolError> {
    if args.old_string.is_empty() {
        return Err(ToolError::bad_args("old_string", "must not be empty"));
    }
    if args.old_string == args.new_string {
        return Err(ToolError::bad_args(
            "new_string",
            "is the same as `old_string`; there is nothing to change",
        ));
    }
    let resolved = ctx.guard.resolve("path", &args.path, Options::FOLLOW)?;
    let target = WriteTarget::new(&resolved)?;
    let path = resolved.display();
    let (file, meta) = open_regular(&resolved)?;
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "{path}: {} bytes is over edit_file's limit of {MAX_EDIT_BYTES} bytes",
                meta.len()
            ),
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_EDIT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io(&path, &e))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        ToolError::new(
            ErrorCode::BinaryFile,
            format!("{path}: not UTF-8 text; edit_file changes text files only"),
        )
    })?;
    let count = text.matches(args.old_string.as_str()).count() as u64;
    let replace_all = args.replace_all.unwrap_or(false);
    if count == 0 {
        return Err(ToolError::new(
            ErrorCode::NoMatch,
            format!("{path}: `old_string` does not occur in the file"),
        ));
    }
    if count > 1 && !replace_all {
        return Err(ToolError::new(
            ErrorCode::NotUnique,
            format!(
                "{path}: `old_string` occurs {count} times; add surrounding text to pick one, \
                 or set `replace_all`"
            ),
        ));
    }
    let edited = text.replace(args.old_string.as_str(), &args.new_string);
    replace_atomically(&target, edited.as_bytes()).map_err(|e| ToolError::io(&path, &e))?;
    Ok(EditFileResult {
        path,
        replacements: count,
    })
}

/// Writes `content` to a temporary file beside the target and renames it over the target's
/// name, inside the open parent folder. Readers see the old file or the new one, never a mix.
/// (No fsync: atomic for readers, not a durability guarantee after a power cut.)
pub fn replace_atomically(target: &WriteTarget<'_>, content: &[u8]) -> std::io::Result<()> {
    let temp = TempFile::create(target.parent, target.name, target.keep_mode)?;
    let result = (|| {
        let mut file = &temp.file;
        file.write_all(content)?;
        temp.finish(target.parent, target.name, target.keep_mode)
    })();
    if result.is_err() {
        temp.discard(target.parent);
    }
    result
}

/// A temporary file in the target's folder, named after the target.
pub struct TempFile {
    pub name: OsString,
    pub file: File,
}

impl TempFile {
    pub fn create(parent: &File, target: &OsStr, keep_mode: Option<u32>) -> std::io::Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let unique = format!(
            ".paddock-{}-{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut name = OsString::from(".");
        if target.len() + unique.len() < MAX_NAME_BYTES {
            name.push(target);
        }
        name.push(&unique);
        let mut options = OpenOptions::new();
        options
            .write(true)
            .create_new(true)
            .custom_flags(sys::O_NOFOLLOW)
            .mode(keep_mode.unwrap_or(0o666));
        let file = options.open(path_guard::child_path(parent, &name))?;
        Ok(Self { name, file })
    }

    /// Sets the kept permission bits and renames the file over `target`.
    pub fn finish(
        &self,
        parent: &File,
        target: &OsStr,
        keep_mode: Option<u32>,
    ) -> std::io::Result<()> {
        if let Some(mode) = keep_mode {
            // The create mode passed through the umask; set the exact bits.
            self.file.set_permissions(Permissions::from_mode(mode))?;
        }
        fs::rename(
            path_guard::child_path(parent, &self.name),
            path_guard::child_path(parent, target),
        )
    }

    /// Removes the temporary file (after a failure).
    pub fn discard(&self, parent: &File) {
        // Best effort: the failure being reported matters more than a leftover temp file.
        let _ = fs::remove_file(path_guard::child_path(parent, &self.name));
    }
}
