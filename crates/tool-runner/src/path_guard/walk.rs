//! The walk: one component at a time from an open root, never through path text (see the
//! module documentation of [`super`]).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::{self, File, Metadata};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use tool_protocol::{ErrorCode, RootMode};

use super::lexical::{self, Part};
use super::{
    Existing, FinalLink, Location, Options, PathGuard, Resolved, child_path, missing_folder,
    open_entry,
};
use crate::error::ToolError;

/// Symlinks followed in one resolution before giving up (the kernel's own limit).
const MAX_LINKS: u32 = 40;
/// Folders `create_parents` may create in one resolution.
const MAX_CREATED: u32 = 512;

/// A folder below a root that the walk holds open.
struct Held {
    name: OsString,
    handle: File,
    meta: Metadata,
}

/// Where the walk stands: a root and the folders opened below it.
struct Position {
    root: usize,
    held: Vec<Held>,
}

pub(super) struct Walk<'g> {
    guard: &'g PathGuard,
    input: &'g str,
    options: Options,
    links: u32,
    created: u32,
}

impl<'g> Walk<'g> {
    pub(super) fn new(guard: &'g PathGuard, input: &'g str, options: Options) -> Self {
        Self {
            guard,
            input,
            options,
            links: 0,
            created: 0,
        }
    }

    pub(super) fn run(mut self, mut pending: VecDeque<Part>) -> Result<Resolved, ToolError> {
        'restart: loop {
            let mut pos = self.start(&mut pending)?;
            while let Some(part) = pending.pop_front() {
                let name = match part {
                    Part::Parent => {
                        if pos.held.pop().is_none() {
                            // `..` above a root leaves it: start again from the root's parent.
                            let root = &self.guard.roots[pos.root].path;
                            let mut above =
                                lexical::split(root.parent().unwrap_or(Path::new("/")).as_os_str());
                            above.append(&mut pending);
                            pending = above;
                            continue 'restart;
                        }
                        continue;
                    }
                    Part::Name(name) => name,
                };
                let last = pending.is_empty();
                let handle = match open_entry(self.dir(&pos), &name) {
                    Ok(handle) => handle,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        if last {
                            return self.entry(&pos, name, None);
                        }
                        if !self.options.create_parents {
                            return Err(missing_folder(&self.path(&pos).join(&name)));
                        }
                        self.make_folder(&pos, &name)?;
                        pending.push_front(Part::Name(name));
                        continue;
                    }
                    Err(e) => return Err(ToolError::io(self.path(&pos).join(&name).display(), &e)),
                };
                let meta = handle
                    .metadata()
                    .map_err(|e| ToolError::io(self.path(&pos).join(&name).display(), &e))?;
                if meta.file_type().is_symlink()
                    && (!last || self.options.final_link == FinalLink::Follow)
                {
                    let absolute = self.follow(&pos, &name, &mut pending)?;
                    if absolute {
                        continue 'restart;
                    }
                    continue;
                }
                if meta.is_dir() {
                    // Entering a folder that is itself a granted root switches to that root.
                    match self.guard.root_by_identity(meta.dev(), meta.ino()) {
                        Some(root) => {
                            pos = Position {
                                root,
                                held: Vec::new(),
                            }
                        }
                        None => pos.held.push(Held { name, handle, meta }),
                    }
                    continue;
                }
                if last {
                    return self.entry(&pos, name, Some(Existing { handle, meta }));
                }
                return Err(ToolError::not_a_directory(
                    self.path(&pos).join(&name).display(),
                ));
            }
            return self.at_folder(pos);
        }
    }

    /// Picks the root to start from: the longest one whose path prefixes the leading names.
    fn start(&self, pending: &mut VecDeque<Part>) -> Result<Position, ToolError> {
        let leading: Vec<&OsString> = pending
            .iter()
            .map_while(|part| match part {
                Part::Name(name) => Some(name),
                Part::Parent => None,
            })
            .collect();
        let mut best: Option<(usize, usize)> = None;
        for (index, root) in self.guard.roots.iter().enumerate() {
            for alias in &root.aliases {
                let matches = alias.len() <= leading.len()
                    && alias.iter().zip(&leading).all(|(a, b)| a == *b);
                if matches && best.is_none_or(|(_, len)| alias.len() >= len) {
                    best = Some((index, alias.len()));
                }
            }
        }
        let Some((root, len)) = best else {
            return Err(self.outside(pending));
        };
        pending.drain(..len);
        Ok(Position {
            root,
            held: Vec::new(),
        })
    }

    fn outside(&self, pending: &VecDeque<Part>) -> ToolError {
        if self.links == 0 {
            return ToolError::outside(self.input);
        }
        let mut target = Vec::new();
        for part in pending {
            target.push(b'/');
            match part {
                Part::Parent => target.extend_from_slice(b".."),
                Part::Name(name) => target.extend_from_slice(name.as_bytes()),
            }
        }
        ToolError::new(
            ErrorCode::OutsideRoots,
            format!(
                "{}: outside the session's folders (a symbolic link leads to {})",
                self.input,
                String::from_utf8_lossy(&target)
            ),
        )
    }

    /// Reads the symlink `name` and puts its target in front of what is left to walk.
    /// Returns true when the target is absolute (the walk must start again).
    fn follow(
        &mut self,
        pos: &Position,
        name: &OsString,
        pending: &mut VecDeque<Part>,
    ) -> Result<bool, ToolError> {
        self.links += 1;
        if self.links > MAX_LINKS {
            return Err(ToolError::new(
                ErrorCode::Io,
                format!("{}: too many levels of symbolic links", self.input),
            ));
        }
        let target = fs::read_link(child_path(self.dir(pos), name))
            .map_err(|e| ToolError::io(self.path(pos).join(name).display(), &e))?;
        let mut parts = lexical::split(target.as_os_str());
        parts.append(pending);
        *pending = parts;
        Ok(target.as_os_str().as_bytes().first() == Some(&b'/'))
    }

    fn make_folder(&mut self, pos: &Position, name: &OsString) -> Result<(), ToolError> {
        let path = self.path(pos).join(name);
        if self.guard.roots[pos.root].mode == RootMode::ReadOnly {
            return Err(ToolError::read_only(path.display()));
        }
        self.created += 1;
        if self.created > MAX_CREATED {
            return Err(ToolError::new(
                ErrorCode::Io,
                format!("{}: too many folders to create", path.display()),
            ));
        }
        match fs::create_dir(child_path(self.dir(pos), name)) {
            // Someone made it meanwhile: the walk opens whatever is there now, by the rules.
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
                Err(ToolError::io(path.display(), &e))
            }
            _ => Ok(()),
        }
    }

    fn dir<'a>(&'a self, pos: &'a Position) -> &'a File {
        pos.held
            .last()
            .map_or(&self.guard.roots[pos.root].dir, |held| &held.handle)
    }

    fn path(&self, pos: &Position) -> PathBuf {
        let mut path = self.guard.roots[pos.root].path.clone();
        path.extend(pos.held.iter().map(|held| &held.name));
        path
    }

    fn clone_handle(&self, file: &File, path: &Path) -> Result<File, ToolError> {
        file.try_clone()
            .map_err(|e| ToolError::io(path.display(), &e))
    }

    /// The walk ended on a name inside the current folder.
    fn entry(
        &self,
        pos: &Position,
        name: OsString,
        existing: Option<Existing>,
    ) -> Result<Resolved, ToolError> {
        let folder = self.path(pos);
        let parent = self.clone_handle(self.dir(pos), &folder)?;
        Ok(Resolved {
            path: folder.join(&name),
            mode: self.guard.roots[pos.root].mode,
            location: Location::Entry {
                parent,
                name,
                existing,
            },
        })
    }

    /// The walk ended on the current folder itself.
    fn at_folder(&self, mut pos: Position) -> Result<Resolved, ToolError> {
        let root = &self.guard.roots[pos.root];
        match pos.held.pop() {
            None => {
                let dir = self.clone_handle(&root.dir, &root.path)?;
                let meta = dir
                    .metadata()
                    .map_err(|e| ToolError::io(root.path.display(), &e))?;
                Ok(Resolved {
                    path: root.path.clone(),
                    mode: root.mode,
                    location: Location::Root { dir, meta },
                })
            }
            Some(Held { name, handle, meta }) => {
                self.entry(&pos, name, Some(Existing { handle, meta }))
            }
        }
    }
}
