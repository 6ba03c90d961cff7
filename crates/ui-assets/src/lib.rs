//! The built web UI, embedded in the binary at build time, so a server serves it with no node
//! and no files at run time.
//!
//! [`resolve`] maps a request path to an [`Asset`] (with the single-page app's fallback to
//! `index.html`); each asset carries its content type, a strong ETag and the `Cache-Control` it
//! should be served with. HTTP itself (methods, `If-None-Match`, compression) is the server's.

#[cfg(test)]
#[path = "collect.rs"]
mod collect;

/// One embedded file of the UI.
#[derive(Debug)]
pub struct Asset {
    /// Path under the UI root, without a leading slash (`index.html`, `assets/index-AbC1.js`).
    pub path: &'static str,
    pub body: &'static [u8],
    pub content_type: &'static str,
    /// Strong validator (quoted): changes whenever the bytes change.
    pub etag: &'static str,
    /// Content-hashed by the bundler: its URL changes with its bytes.
    pub immutable: bool,
}

impl Asset {
    /// `Cache-Control` for this asset: hashed files forever, everything else revalidated on
    /// every use (so a new build is picked up at once).
    pub fn cache_control(&self) -> &'static str {
        if self.immutable {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        }
    }

    /// Whether an `If-None-Match` header value names this asset's current bytes (weak
    /// comparison, as RFC 9110 requires for `If-None-Match`; `*` matches).
    pub fn matches_if_none_match(&self, header: &str) -> bool {
        header.split(',').map(str::trim).any(|candidate| {
            candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == self.etag
        })
    }
}

/// The content security policy the UI is served with, by `paddock up` and in the desktop
/// app's webview (`src-tauri/tauri.conf.json` holds the same directives; a test compares
/// them). Scripts, styles and fonts come from the app itself; connections go to the app and
/// to loopback (the desktop app's in-process server), and the desktop's IPC.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; font-src 'self'; \
     connect-src 'self' ipc: http://ipc.localhost http://127.0.0.1:* ws://127.0.0.1:*; \
     object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

static ASSETS: &[Asset] = include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// Every embedded asset, sorted by path.
pub fn all() -> &'static [Asset] {
    ASSETS
}

/// The asset at exactly `path` (a leading `/` is ignored; `/` is `index.html`).
pub fn get(path: &str) -> Option<&'static Asset> {
    let path = path.trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    ASSETS
        .binary_search_by(|asset| asset.path.cmp(path))
        .ok()
        .and_then(|index| ASSETS.get(index))
}

/// The UI's entry page.
pub fn index() -> Option<&'static Asset> {
    get("index.html")
}

/// What a request for `path` (already percent-decoded, without query) is answered with: the file
/// itself, or for an address of the app (no file extension, not under `assets/`) the entry page,
/// so deep links such as `/sessions/abc` load the app. A missing file is `None` (404), never the
/// entry page, so a stale script URL fails loudly instead of returning HTML.
pub fn resolve(path: &str) -> Option<&'static Asset> {
    if let Some(asset) = get(path) {
        return Some(asset);
    }
    let trimmed = path.trim_start_matches('/');
    let last_segment = trimmed.rsplit('/').next().unwrap_or(trimmed);
    if trimmed.starts_with("assets/") || last_segment.contains('.') {
        return None;
    }
    index()
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
