//! The `file` key store: `secrets.toml` in an owner-only folder.
//!
//! The folder must be 0700 and the file 0600, both owned by this user and neither a symlink;
//! anything wider is refused (never silently tightened, never read). Writes go to a fresh
//! 0600 temporary file that replaces the old one atomically.

use std::collections::BTreeMap;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::{ApiKey, Environment, KeyStoreError};

const FOLDER_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;
/// A secrets file larger than this is not a secrets file.
const MAX_FILE_BYTES: u64 = 1024 * 1024;
const HEADER: &str = "# Paddock's API keys (key_store = \"file\"). Owner-only: keep this file 0600 \
                      and its folder 0700; never commit or share it.\n";

/// `$XDG_STATE_HOME/paddock/secrets.toml`, or `$HOME/.local/state/paddock/secrets.toml`.
pub(super) fn default_path(environment: &Environment) -> Result<PathBuf, KeyStoreError> {
    let state = match environment.get("XDG_STATE_HOME") {
        Some(dir) if Path::new(&dir).is_absolute() => PathBuf::from(dir),
        _ => match environment.get("HOME") {
            Some(home) => Path::new(&home).join(".local").join("state"),
            None => return Err(KeyStoreError::NoStateFolder),
        },
    };
    Ok(state.join("paddock").join("secrets.toml"))
}

#[derive(Debug)]
pub(super) struct FileStore {
    path: PathBuf,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretsFile {
    #[serde(default)]
    keys: BTreeMap<String, String>,
}

impl FileStore {
    pub(super) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn get(&self, provider: &str) -> Result<Option<String>, KeyStoreError> {
        Ok(self.read()?.keys.remove(provider))
    }

    pub(super) fn set(&self, provider: &str, key: &ApiKey) -> Result<(), KeyStoreError> {
        self.ensure_folder()?;
        let mut secrets = self.read()?;
        secrets
            .keys
            .insert(provider.to_owned(), key.expose_secret().to_owned());
        self.write(&secrets)
    }

    pub(super) fn delete(&self, provider: &str) -> Result<bool, KeyStoreError> {
        let mut secrets = self.read()?;
        if secrets.keys.remove(provider).is_none() {
            return Ok(false);
        }
        self.write(&secrets)?;
        Ok(true)
    }

    fn folder(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// The parsed file; an absent file or folder is an empty store.
    fn read(&self) -> Result<SecretsFile, KeyStoreError> {
        match fs::symlink_metadata(self.folder()) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(SecretsFile::default());
            }
            Err(source) => return Err(io_error("inspect", self.folder(), source)),
            Ok(meta) => check_owner_only(self.folder(), &meta, FOLDER_MODE, true)?,
        }
        let mut file = match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&self.path)
        {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(SecretsFile::default());
            }
            Err(error) if error.raw_os_error() == Some(libc::ELOOP) => {
                return Err(KeyStoreError::UnsafeFile {
                    path: self.path.clone(),
                    reason: "it is a symbolic link".to_owned(),
                });
            }
            Err(source) => return Err(io_error("open", &self.path, source)),
        };
        // Checked on the opened handle, so the file cannot be swapped after the check.
        let meta = file
            .metadata()
            .map_err(|source| io_error("inspect", &self.path, source))?;
        check_owner_only(&self.path, &meta, FILE_MODE, false)?;
        if meta.len() > MAX_FILE_BYTES {
            return Err(KeyStoreError::UnsafeFile {
                path: self.path.clone(),
                reason: format!("it is larger than {MAX_FILE_BYTES} bytes"),
            });
        }
        let mut text = String::new();
        file.read_to_string(&mut text)
            .map_err(|source| io_error("read", &self.path, source))?;
        // The parser's own message quotes the offending line, which may hold a key: only
        // the line number leaves this function.
        toml::from_str(&text).map_err(|error| KeyStoreError::Malformed {
            path: self.path.clone(),
            line: error
                .span()
                .map(|span| text[..span.start.min(text.len())].lines().count().max(1))
                .unwrap_or(1),
        })
    }

    /// Creates the folder as 0700 when missing; refuses an existing one that is wider.
    fn ensure_folder(&self) -> Result<(), KeyStoreError> {
        let folder = self.folder();
        if let Some(parent) = folder.parent() {
            fs::create_dir_all(parent).map_err(|source| io_error("create", parent, source))?;
        }
        match DirBuilder::new().mode(FOLDER_MODE).create(folder) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(source) => return Err(io_error("create", folder, source)),
        }
        let meta =
            fs::symlink_metadata(folder).map_err(|source| io_error("inspect", folder, source))?;
        check_owner_only(folder, &meta, FOLDER_MODE, true)
    }

    fn write(&self, secrets: &SecretsFile) -> Result<(), KeyStoreError> {
        let body = toml::to_string(secrets).map_err(|_| KeyStoreError::UnsafeFile {
            path: self.path.clone(),
            reason: "the keys could not be written as TOML".to_owned(),
        })?;
        let temporary = self.path.with_extension(format!(
            "toml.tmp-{}-{}",
            std::process::id(),
            uuid_like_suffix()
        ));
        let result = (|| {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(FILE_MODE)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&temporary)
                .map_err(|source| io_error("create", &temporary, source))?;
            // The mode given to open() is reduced by the umask, never widened; set it exactly.
            file.set_permissions(fs::Permissions::from_mode(FILE_MODE))
                .map_err(|source| io_error("set permissions of", &temporary, source))?;
            file.write_all(HEADER.as_bytes())
                .and_then(|()| file.write_all(body.as_bytes()))
                .and_then(|()| file.sync_all())
                .map_err(|source| io_error("write", &temporary, source))?;
            fs::rename(&temporary, &self.path)
                .map_err(|source| io_error("replace", &self.path, source))?;
            if let Ok(folder) = File::open(self.folder()) {
                // Makes the rename durable; failing to sync a folder is not worth an error.
                let _ = folder.sync_all();
            }
            Ok(())
        })();
        if result.is_err() {
            let _ = fs::remove_file(&temporary);
        }
        result
    }
}

fn check_owner_only(
    path: &Path,
    meta: &fs::Metadata,
    expected: u32,
    folder: bool,
) -> Result<(), KeyStoreError> {
    let unsafe_file = |reason: &str| KeyStoreError::UnsafeFile {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    if meta.file_type().is_symlink() {
        return Err(unsafe_file("it is a symbolic link"));
    }
    if folder && !meta.is_dir() {
        return Err(unsafe_file("it is not a folder"));
    }
    if !folder && !meta.is_file() {
        return Err(unsafe_file("it is not a regular file"));
    }
    if meta.uid() != effective_uid() {
        return Err(unsafe_file("it belongs to another user"));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(KeyStoreError::InsecurePermissions {
            path: path.to_owned(),
            mode,
            expected,
        });
    }
    Ok(())
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions, touches no memory of ours and cannot fail.
    unsafe { libc::geteuid() }
}

fn uuid_like_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::hash::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.finish()
}

fn io_error(action: &'static str, path: &Path, source: std::io::Error) -> KeyStoreError {
    KeyStoreError::Io {
        action,
        path: path.to_owned(),
        source,
    }
}
