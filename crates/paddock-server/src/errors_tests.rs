//! The error codes in three places kept together: what the server and the host can answer
//! (read from their sources), [`ERROR_CODES`] with each status, and `docs/api.md`'s table.

#![allow(clippy::unwrap_used, reason = "test code")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::status_of;
use crate::api::ERROR_CODES;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

fn is_code(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_ascii_lowercase() || c == '_')
}

/// The string literals in `text`.
fn literals(text: &str) -> Vec<&str> {
    text.split('"').skip(1).step_by(2).collect()
}

/// The codes `HostError::code` answers (the literals of its body).
fn host_codes() -> BTreeSet<String> {
    let source =
        std::fs::read_to_string(workspace().join("crates/paddock-host/src/error.rs")).unwrap();
    let start = source.find("pub fn code(&self)").unwrap();
    let body = &source[start..];
    let body = &body[..body.find("\n    }\n").unwrap()];
    literals(body)
        .into_iter()
        .filter(|l| is_code(l))
        .map(str::to_owned)
        .collect()
}

/// The codes the server's own refusals use: the code argument of every `ApiError::new(…)` and
/// `ApiError::bad_request(…)` in its sources.
fn server_codes() -> BTreeSet<String> {
    fn walk(dir: &Path, into: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, into);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !path.to_string_lossy().ends_with("_tests.rs")
            {
                into.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut codes = BTreeSet::new();
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        for call in ["ApiError::new(", "bad_request(", "Self::new("] {
            for (at, _) in source.match_indices(call) {
                let after = &source[at + call.len()..];
                let args = &after[..after.find(')').unwrap_or(after.len()).min(300)];
                if let Some(code) = literals(args).into_iter().find(|l| is_code(l)) {
                    codes.insert(code.to_owned());
                }
            }
        }
    }
    codes
}

/// `code → status` from the docs' error table (a row may name several codes, with one status
/// for all or one each: `404 / 405`).
fn documented() -> BTreeMap<String, u16> {
    let docs = std::fs::read_to_string(workspace().join("docs/api.md")).unwrap();
    let table = &docs[docs.find("## Errors").unwrap()..];
    let table = &table[..table.find("\n## ").unwrap()];
    let mut codes = BTreeMap::new();
    for row in table.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let names: Vec<&str> = cells[1]
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|n| is_code(n))
            .collect();
        let statuses: Vec<u16> = cells[2]
            .split(" / ")
            .map(|s| s.trim().parse().unwrap())
            .collect();
        for (i, name) in names.iter().enumerate() {
            let status = if statuses.len() == names.len() {
                statuses[i]
            } else {
                statuses[0]
            };
            codes.insert((*name).to_owned(), status);
        }
    }
    codes
}

fn listed() -> BTreeMap<String, u16> {
    ERROR_CODES
        .iter()
        .map(|(code, status, _)| ((*code).to_owned(), *status))
        .collect()
}

#[test]
fn every_code_the_server_or_the_host_answers_is_listed() {
    let listed = listed();
    let host = host_codes();
    let server = server_codes();
    assert!(host.len() > 15 && server.len() > 8, "{host:?} {server:?}");
    let missing: Vec<&String> = host
        .iter()
        .chain(&server)
        .filter(|code| !listed.contains_key(*code))
        .collect();
    assert!(missing.is_empty(), "not in ERROR_CODES: {missing:?}");
    // A host error answers with the status its code is listed with.
    for code in &host {
        assert_eq!(status_of(code).as_u16(), listed[code], "{code}");
    }
}

#[test]
fn the_docs_error_table_lists_every_code_with_its_status() {
    let documented = documented();
    let mut problems = Vec::new();
    for (code, status) in listed() {
        match documented.get(&code) {
            None => problems.push(format!("`{code}` ({status}) is not in docs/api.md's table")),
            Some(shown) if *shown != status => {
                problems.push(format!("`{code}` is {status}, docs/api.md says {shown}"))
            }
            Some(_) => {}
        }
    }
    for code in documented.keys() {
        if !listed().contains_key(code) {
            problems.push(format!("docs/api.md lists `{code}`, which nothing answers"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
