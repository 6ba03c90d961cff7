//! Reading a built UI folder into the list of assets to embed. Shared by `build.rs` (which
//! generates the table) and the unit tests (through `#[path]`), so what the build does is tested
//! directly.

use std::fmt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// One file of the built UI, ready to embed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collected {
    /// Path relative to the UI folder, `/`-separated, no leading slash (`assets/index-AbC1.js`).
    pub path: String,
    /// The file on disk (absolute).
    pub source: PathBuf,
    pub content_type: &'static str,
    /// A strong validator: the quoted hex of the first 16 bytes of the file's SHA-256.
    pub etag: String,
    /// Content-hashed by the bundler (under `assets/`): safe to cache forever.
    pub immutable: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub enum CollectError {
    /// The folder does not exist: the UI was not built.
    NotBuilt {
        dir: PathBuf,
    },
    /// The folder exists but has no `index.html`: not a UI build.
    NoIndex {
        dir: PathBuf,
    },
    /// A file whose extension has no known content type.
    UnknownType {
        file: PathBuf,
    },
    /// A file name that is not UTF-8 cannot be served by path.
    NonUtf8Name {
        file: PathBuf,
    },
    Io {
        path: PathBuf,
        message: String,
    },
}

/// How to build the UI, repeated by every error that a missing or broken build causes.
pub const BUILD_HINT: &str = "build the UI first: `cargo xtask ui build` (or `npm ci && npm run build` in ui/); \
     set PADDOCK_UI_DIST to embed a UI built elsewhere";

impl fmt::Display for CollectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotBuilt { dir } => write!(
                f,
                "the web UI is not built: {} does not exist; {BUILD_HINT}",
                dir.display()
            ),
            Self::NoIndex { dir } => write!(
                f,
                "{} has no index.html, so it is not a build of the web UI; {BUILD_HINT}",
                dir.display()
            ),
            Self::UnknownType { file } => write!(
                f,
                "{}: no content type is known for this file's extension; add it to \
                 crates/ui-assets/src/collect.rs (content_type_for)",
                file.display()
            ),
            Self::NonUtf8Name { file } => {
                write!(f, "{}: the file name is not UTF-8", file.display())
            }
            Self::Io { path, message } => write!(f, "{}: {message}", path.display()),
        }
    }
}

/// Every file under `dir`, sorted by path (the embedded table is searched by binary search).
pub fn collect(dir: &Path) -> Result<Vec<Collected>, CollectError> {
    if !dir.is_dir() {
        return Err(CollectError::NotBuilt {
            dir: dir.to_path_buf(),
        });
    }
    if !dir.join("index.html").is_file() {
        return Err(CollectError::NoIndex {
            dir: dir.to_path_buf(),
        });
    }
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    let mut assets = Vec::with_capacity(files.len());
    for file in files {
        let relative = file
            .strip_prefix(dir)
            .map_err(|e| io_error(&file, e.to_string()))?;
        let Some(relative) = relative.to_str() else {
            return Err(CollectError::NonUtf8Name { file });
        };
        let path = relative.replace(std::path::MAIN_SEPARATOR, "/");
        let content_type = content_type_for(&path)
            .ok_or_else(|| CollectError::UnknownType { file: file.clone() })?;
        let body = std::fs::read(&file).map_err(|e| io_error(&file, e.to_string()))?;
        assets.push(Collected {
            immutable: path.starts_with("assets/"),
            etag: etag_of(&body),
            path,
            source: file,
            content_type,
        });
    }
    assets.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(assets)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), CollectError> {
    let entries = std::fs::read_dir(dir).map_err(|e| io_error(dir, e.to_string()))?;
    for entry in entries {
        let entry = entry.map_err(|e| io_error(dir, e.to_string()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| io_error(&path, e.to_string()))?;
        if kind.is_dir() {
            walk(&path, files)?;
        } else {
            files.push(path);
        }
    }
    Ok(())
}

fn io_error(path: &Path, message: String) -> CollectError {
    CollectError::Io {
        path: path.to_path_buf(),
        message,
    }
}

/// The strong ETag of a body: the quoted hex of the first 16 bytes of its SHA-256.
pub fn etag_of(body: &[u8]) -> String {
    let digest = Sha256::digest(body);
    let mut etag = String::with_capacity(34);
    etag.push('"');
    for byte in digest.iter().take(16) {
        etag.push_str(&format!("{byte:02x}"));
    }
    etag.push('"');
    etag
}

/// The `Content-Type` served for a file, by extension; `None` for an unknown one.
pub fn content_type_for(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.').map(|(_, ext)| ext)?;
    Some(match extension {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "webmanifest" => "application/manifest+json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/vnd.microsoft.icon",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "txt" => "text/plain; charset=utf-8",
        "wasm" => "application/wasm",
        _ => return None,
    })
}
