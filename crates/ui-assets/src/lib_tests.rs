use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::collect::{CollectError, collect, content_type_for, etag_of};
use super::*;

fn embedded_dir() -> PathBuf {
    PathBuf::from(env!("PADDOCK_UI_DIST_EMBEDDED"))
}

#[test]
fn every_file_of_the_built_ui_is_embedded_byte_for_byte() {
    let on_disk = collect(&embedded_dir()).unwrap();
    let embedded: Vec<&str> = all().iter().map(|a| a.path).collect();
    let expected: Vec<&str> = on_disk.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(embedded, expected);
    for asset in all() {
        let bytes = std::fs::read(embedded_dir().join(asset.path)).unwrap();
        assert!(
            asset.body == bytes.as_slice(),
            "{} differs from disk",
            asset.path
        );
        assert_eq!(asset.etag, etag_of(&bytes), "{}", asset.path);
    }
}

#[test]
fn the_entry_page_links_a_script_and_a_stylesheet_that_are_embedded_and_immutable() {
    let index = index().unwrap();
    assert_eq!(index.content_type, "text/html; charset=utf-8");
    assert!(!index.immutable);
    assert_eq!(index.cache_control(), "no-cache");
    let html = std::str::from_utf8(index.body).unwrap();
    let linked: Vec<&str> = html
        .split('"')
        .filter(|part| part.starts_with("/assets/"))
        .collect();
    for kind in [".js", ".css"] {
        assert!(
            linked.iter().any(|path| path.ends_with(kind)),
            "index.html links no {kind} file: {linked:?}"
        );
    }
    for path in linked {
        let asset = get(path).unwrap_or_else(|| panic!("{path} is linked but not embedded"));
        assert!(asset.immutable, "{path}");
        assert_eq!(asset.cache_control(), "public, max-age=31536000, immutable");
    }
}

#[test]
fn etags_are_strong_quoted_and_distinct() {
    for asset in all() {
        assert!(asset.etag.starts_with('"') && asset.etag.ends_with('"'));
        assert_eq!(asset.etag.len(), 34);
    }
    let mut etags: Vec<&str> = all().iter().map(|a| a.etag).collect();
    etags.sort_unstable();
    etags.dedup();
    assert_eq!(etags.len(), all().len(), "two files with one ETag");
    assert_eq!(etag_of(b"abc"), "\"ba7816bf8f01cfea414140de5dae2223\"");
}

#[test]
fn if_none_match_compares_weakly_and_accepts_lists_and_star() {
    let index = index().unwrap();
    assert!(index.matches_if_none_match(index.etag));
    assert!(index.matches_if_none_match(&format!("W/{}", index.etag)));
    assert!(index.matches_if_none_match(&format!("\"other\", {}", index.etag)));
    assert!(index.matches_if_none_match("*"));
    assert!(!index.matches_if_none_match("\"other\""));
    assert!(!index.matches_if_none_match(""));
}

#[test]
fn app_addresses_fall_back_to_the_entry_page_and_missing_files_do_not() {
    let index = index().unwrap().path;
    for path in ["/", "", "/sessions", "/sessions/8b1f", "/settings/sandbox/"] {
        assert_eq!(resolve(path).map(|a| a.path), Some(index), "{path:?}");
    }
    for path in [
        "/assets/index-gone.js",
        "/assets/anything",
        "/favicon.ico",
        "/sessions/report.json",
    ] {
        assert_eq!(resolve(path).map(|a| a.path), None, "{path:?}");
    }
    let script = all().iter().find(|a| a.path.ends_with(".js")).unwrap();
    assert_eq!(
        resolve(&format!("/{}", script.path)).map(|a| a.path),
        Some(script.path)
    );
}

#[test]
fn traversal_finds_nothing_outside_the_embedded_table() {
    for path in [
        "/../Cargo.toml",
        "/assets/../../Cargo.toml",
        "/%2e%2e/Cargo.toml",
        "/etc/passwd.txt",
    ] {
        assert_eq!(get(path).map(|a| a.path), None, "{path:?}");
    }
}

#[test]
fn content_types_cover_what_the_bundler_emits_and_unknown_extensions_are_refused() {
    assert_eq!(
        content_type_for("a/b.js"),
        Some("text/javascript; charset=utf-8")
    );
    assert_eq!(content_type_for("x.woff2"), Some("font/woff2"));
    assert_eq!(content_type_for("x.svg"), Some("image/svg+xml"));
    assert_eq!(content_type_for("README"), None);
    assert_eq!(content_type_for("x.exe"), None);
}

fn write(dir: &Path, path: &str, body: &str) {
    let file = dir.join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, body).unwrap();
}

#[test]
fn a_missing_build_is_an_error_that_says_how_to_build_the_ui() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("dist");
    let error = collect(&missing).unwrap_err();
    assert_eq!(
        error,
        CollectError::NotBuilt {
            dir: missing.clone()
        }
    );
    let message = error.to_string();
    assert!(
        message.contains(&missing.display().to_string()),
        "{message}"
    );
    assert!(message.contains("cargo xtask ui build"), "{message}");
}

#[test]
fn a_folder_without_index_html_or_with_an_unknown_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "assets/app.js", "x");
    assert_eq!(
        collect(dir.path()).unwrap_err(),
        CollectError::NoIndex {
            dir: dir.path().to_path_buf()
        }
    );
    write(dir.path(), "index.html", "<!doctype html>");
    write(dir.path(), "notes.xyz", "?");
    let error = collect(dir.path()).unwrap_err();
    assert_eq!(
        error,
        CollectError::UnknownType {
            file: dir.path().join("notes.xyz")
        }
    );
    assert!(error.to_string().contains("content_type_for"));
}

#[test]
fn collected_paths_are_relative_sorted_and_marked_immutable_under_assets() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "index.html", "<!doctype html>");
    write(dir.path(), "assets/b-2.js", "b");
    write(dir.path(), "assets/a-1.css", "a");
    write(dir.path(), "icon.svg", "<svg/>");
    let collected = collect(dir.path()).unwrap();
    let summary: Vec<(&str, bool)> = collected
        .iter()
        .map(|a| (a.path.as_str(), a.immutable))
        .collect();
    assert_eq!(
        summary,
        [
            ("assets/a-1.css", true),
            ("assets/b-2.js", true),
            ("icon.svg", false),
            ("index.html", false),
        ]
    );
}

/// The policy as a sorted list of (directive, sources).
fn directives(policy: &str) -> Vec<(String, String)> {
    let mut list: Vec<(String, String)> = policy
        .split(';')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            let (name, sources) = d.split_once(' ').unwrap_or((d, ""));
            let sources: Vec<&str> = sources.split_whitespace().collect();
            (name.to_owned(), sources.join(" "))
        })
        .collect();
    list.sort();
    list
}

#[test]
fn the_served_content_security_policy_is_the_desktop_webviews() {
    let conf = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../src-tauri/tauri.conf.json"),
    )
    .unwrap();
    let conf: serde_json::Value = serde_json::from_str(&conf).unwrap();
    let csp = conf["app"]["security"]["csp"].as_object().unwrap();
    let mut desktop: Vec<(String, String)> = csp
        .iter()
        .map(|(name, sources)| (name.clone(), sources.as_str().unwrap().to_owned()))
        .collect();
    desktop.sort();
    assert_eq!(directives(CONTENT_SECURITY_POLICY), desktop);
    assert!(CONTENT_SECURITY_POLICY.contains("script-src 'self';"));
    assert!(!CONTENT_SECURITY_POLICY.contains("unsafe"));
}
