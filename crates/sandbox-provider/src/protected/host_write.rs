//! An approved write of a protected path, made by the host outside the wall (inside, the path
//! is mounted read-only). The path is resolved from its read-write grant's root one name at a
//! time, each folder opened relative to the one before with `O_NOFOLLOW`: a symbolic link
//! anywhere on the way is refused, not followed. The file is changed in place (truncated and
//! rewritten), so a read-only mount of that very file inside shows the new content; a new
//! file or folder gets the owner of the folder it is made in. The rules of the tools are the
//! runner's: `edit_file` replaces an exact string that occurs once (or every time with
//! `replace_all`), text only, up to 16 MiB; writes refuse a file with other hard links.

use std::ffi::CString;
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use tool_protocol::{
    DeleteResult, EditFileResult, ErrorCode, FileKind, ToolRequest, ToolResult, WriteFileResult,
};

use super::scan::{Scanner, normalize};
use crate::fd_stat::{fstat, stat_entry};
use crate::runner_client::CallError;

/// `edit_file`'s size limit (the runner's).
const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// The path a write names.
pub(crate) fn target(request: &ToolRequest) -> Option<&str> {
    match request {
        ToolRequest::WriteFile(r) => Some(&r.path),
        ToolRequest::EditFile(r) => Some(&r.path),
        ToolRequest::Delete(r) => Some(&r.path),
        _ => None,
    }
}

fn refuse(code: ErrorCode, message: String) -> CallError {
    CallError::Tool { code, message }
}

fn io_error(path: &Path, error: &io::Error) -> CallError {
    let code = match error.raw_os_error() {
        Some(libc::ENOENT) => ErrorCode::NotFound,
        Some(libc::EEXIST) => ErrorCode::AlreadyExists,
        Some(libc::ENOTDIR) => ErrorCode::NotADirectory,
        Some(libc::EISDIR) => ErrorCode::IsADirectory,
        _ => ErrorCode::Io,
    };
    refuse(code, format!("{}: {error}", path.display()))
}

fn c_name(name: &std::ffi::OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn open_at(dir: &OwnedFd, name: &std::ffi::OsStr, flags: i32, mode: u32) -> io::Result<OwnedFd> {
    let name = c_name(name)?;
    // SAFETY: `name` is NUL-terminated and outlives the call; `dir` is an open descriptor.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            flags | libc::O_CLOEXEC | libc::O_NOFOLLOW,
            mode as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Gives a new file or folder the owner of the folder it was made in (when Paddock runs as
/// root for another user's folder); a no-op otherwise.
fn same_owner(new: &OwnedFd, parent: &OwnedFd) -> io::Result<()> {
    let parent = fstat(parent)?;
    let mine = fstat(new)?;
    if mine.st_uid == parent.st_uid && mine.st_gid == parent.st_gid {
        return Ok(());
    }
    // SAFETY: plain integer arguments on an open descriptor.
    if unsafe { libc::fchown(new.as_raw_fd(), parent.st_uid, parent.st_gid) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The folder holding `path`, opened from the grant's root without following links
/// (missing folders made when `create` is set), and the last name.
fn open_parent(
    root: &Path,
    path: &Path,
    create: bool,
) -> Result<(OwnedFd, std::ffi::OsString), CallError> {
    let relative = path.strip_prefix(root).map_err(|_| {
        refuse(
            ErrorCode::OutsideRoots,
            format!("{}: outside its grant", path.display()),
        )
    })?;
    let mut names: Vec<&std::ffi::OsStr> = relative
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let last = names.pop().ok_or_else(|| {
        refuse(
            ErrorCode::BadArgs,
            format!("{}: is a granted folder itself", path.display()),
        )
    })?;
    let root_name = c_name(root.as_os_str()).map_err(|e| io_error(root, &e))?;
    // SAFETY: `root_name` is NUL-terminated and outlives the call.
    let fd = unsafe {
        libc::open(
            root_name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io_error(root, &io::Error::last_os_error()));
    }
    // SAFETY: a fresh descriptor nothing else owns.
    let mut dir = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut walked = root.to_path_buf();
    for name in names {
        walked.push(name);
        let flags = libc::O_RDONLY | libc::O_DIRECTORY;
        let next = match open_at(&dir, name, flags, 0) {
            Ok(next) => next,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) && create => {
                let c = c_name(name).map_err(|e| io_error(&walked, &e))?;
                // SAFETY: `c` is NUL-terminated; `dir` is open.
                if unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), 0o755) } != 0 {
                    return Err(io_error(&walked, &io::Error::last_os_error()));
                }
                let made = open_at(&dir, name, flags, 0).map_err(|e| io_error(&walked, &e))?;
                same_owner(&made, &dir).map_err(|e| io_error(&walked, &e))?;
                made
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                return Err(refuse(
                    ErrorCode::NotADirectory,
                    format!(
                        "{}: is a symbolic link or not a folder; protected files are written only through real folders",
                        walked.display()
                    ),
                ));
            }
            Err(e) => return Err(io_error(&walked, &e)),
        };
        dir = next;
    }
    Ok((dir, last.to_os_string()))
}

fn is_regular(stat: &libc::stat) -> bool {
    stat.st_mode & libc::S_IFMT == libc::S_IFREG
}

/// Refuses a final name that is a link, not a regular file, or a file with other names.
fn check_regular(path: &Path, stat: &libc::stat) -> Result<(), CallError> {
    if stat.st_mode & libc::S_IFMT == libc::S_IFLNK {
        return Err(refuse(
            ErrorCode::BadArgs,
            format!(
                "{}: is a symbolic link; protected files are written only as themselves",
                path.display()
            ),
        ));
    }
    if !is_regular(stat) {
        return Err(refuse(
            ErrorCode::IsADirectory,
            format!("{}: not a regular file", path.display()),
        ));
    }
    if stat.st_nlink > 1 {
        return Err(refuse(
            ErrorCode::BadArgs,
            format!(
                "{}: has {} hard links; it is not changed through one of them",
                path.display(),
                stat.st_nlink
            ),
        ));
    }
    Ok(())
}

fn rewrite(file: &mut File, bytes: &[u8]) -> io::Result<()> {
    file.set_len(0)?;
    file.rewind()?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Carries out one approved write.
pub(crate) fn write(scanner: &Scanner, request: &ToolRequest) -> Result<ToolResult, CallError> {
    let text = target(request).ok_or_else(|| {
        refuse(
            ErrorCode::BadArgs,
            "only write_file, edit_file and delete are made by the host".into(),
        )
    })?;
    let path: PathBuf = normalize(Path::new(text));
    let grant = scanner.grant_of(&path).ok_or_else(|| {
        refuse(
            ErrorCode::OutsideRoots,
            format!(
                "{}: not in one of the session's read-write folders",
                path.display()
            ),
        )
    })?;
    let root = scanner.rw[grant].clone();
    let shown = path.display().to_string();
    match request {
        ToolRequest::WriteFile(args) => {
            let (dir, name) = open_parent(&root, &path, args.create_parents.unwrap_or(true))?;
            let content = args.content.as_bytes();
            let (mut file, created) = match stat_entry(&dir, name.as_bytes()) {
                Ok(stat) => {
                    check_regular(&path, &stat)?;
                    let fd =
                        open_at(&dir, &name, libc::O_WRONLY, 0).map_err(|e| io_error(&path, &e))?;
                    (File::from(fd), false)
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    let fd = open_at(
                        &dir,
                        &name,
                        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
                        0o644,
                    )
                    .map_err(|e| io_error(&path, &e))?;
                    same_owner(&fd, &dir).map_err(|e| io_error(&path, &e))?;
                    (File::from(fd), true)
                }
                Err(e) => return Err(io_error(&path, &e)),
            };
            rewrite(&mut file, content).map_err(|e| io_error(&path, &e))?;
            Ok(ToolResult::WriteFile(WriteFileResult {
                path: shown,
                bytes_written: content.len() as u64,
                created,
            }))
        }
        ToolRequest::EditFile(args) => {
            if args.old_string.is_empty() {
                return Err(refuse(
                    ErrorCode::BadArgs,
                    "old_string: must not be empty".into(),
                ));
            }
            if args.old_string == args.new_string {
                return Err(refuse(
                    ErrorCode::BadArgs,
                    "new_string: is the same as `old_string`; there is nothing to change".into(),
                ));
            }
            let (dir, name) = open_parent(&root, &path, false)?;
            let stat = stat_entry(&dir, name.as_bytes()).map_err(|e| io_error(&path, &e))?;
            check_regular(&path, &stat)?;
            if stat.st_size as u64 > MAX_EDIT_BYTES {
                return Err(refuse(
                    ErrorCode::TooLarge,
                    format!(
                        "{shown}: {} bytes is over edit_file's limit of {MAX_EDIT_BYTES} bytes",
                        stat.st_size
                    ),
                ));
            }
            let fd = open_at(&dir, &name, libc::O_RDWR, 0).map_err(|e| io_error(&path, &e))?;
            let mut file = File::from(fd);
            let mut bytes = Vec::new();
            (&mut file)
                .take(MAX_EDIT_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| io_error(&path, &e))?;
            let text = String::from_utf8(bytes).map_err(|_| {
                refuse(
                    ErrorCode::BinaryFile,
                    format!("{shown}: not UTF-8 text; edit_file changes text files only"),
                )
            })?;
            let count = text.matches(args.old_string.as_str()).count() as u64;
            if count == 0 {
                return Err(refuse(
                    ErrorCode::NoMatch,
                    format!("{shown}: `old_string` does not occur in the file"),
                ));
            }
            if count > 1 && !args.replace_all.unwrap_or(false) {
                return Err(refuse(
                    ErrorCode::NotUnique,
                    format!(
                        "{shown}: `old_string` occurs {count} times; make it unique or set replace_all"
                    ),
                ));
            }
            let edited = if args.replace_all.unwrap_or(false) {
                text.replace(&args.old_string, &args.new_string)
            } else {
                text.replacen(&args.old_string, &args.new_string, 1)
            };
            rewrite(&mut file, edited.as_bytes()).map_err(|e| io_error(&path, &e))?;
            Ok(ToolResult::EditFile(EditFileResult {
                path: shown,
                replacements: if args.replace_all.unwrap_or(false) {
                    count
                } else {
                    1
                },
            }))
        }
        ToolRequest::Delete(args) => {
            let (dir, name) = open_parent(&root, &path, false)?;
            let stat = stat_entry(&dir, name.as_bytes()).map_err(|e| io_error(&path, &e))?;
            let kind = match stat.st_mode & libc::S_IFMT {
                libc::S_IFDIR => FileKind::Directory,
                libc::S_IFLNK => FileKind::Symlink,
                libc::S_IFREG => FileKind::File,
                _ => FileKind::Other,
            };
            let c = c_name(&name).map_err(|e| io_error(&path, &e))?;
            let mut removed = 1;
            if kind == FileKind::Directory {
                // Through the folder we hold, not the path text.
                let inside =
                    PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd())).join(&name);
                if args.recursive.unwrap_or(false) {
                    removed = count_tree(&inside);
                    std::fs::remove_dir_all(&inside).map_err(|e| io_error(&path, &e))?;
                } else {
                    // SAFETY: `c` is NUL-terminated; `dir` is open.
                    if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) }
                        != 0
                    {
                        return Err(io_error(&path, &io::Error::last_os_error()));
                    }
                }
            } else {
                // SAFETY: as above; unlinkat never follows the last name.
                if unsafe { libc::unlinkat(dir.as_raw_fd(), c.as_ptr(), 0) } != 0 {
                    return Err(io_error(&path, &io::Error::last_os_error()));
                }
            }
            Ok(ToolResult::Delete(DeleteResult {
                path: shown,
                kind,
                removed,
            }))
        }
        _ => Err(refuse(ErrorCode::BadArgs, "not a write".into())),
    }
}

fn count_tree(path: &Path) -> u64 {
    let mut count = 1;
    if let Ok(read) = std::fs::read_dir(path) {
        for entry in read.filter_map(Result::ok) {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                count += count_tree(&entry.path());
            } else {
                count += 1;
            }
        }
    }
    count
}
