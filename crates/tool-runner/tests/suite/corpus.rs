//! The fuzz corpus as regression tests: every checked-in input goes through the same function
//! its fuzz target calls (`fuzz/corpus/<target>/`).

use std::fs;
use std::path::PathBuf;

use tool_runner::fuzzing::{PathFixture, codec, path_resolver, regex};

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "the {target} corpus is nearly empty");
    files
        .into_iter()
        .map(|path| {
            let bytes = fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect()
}

#[test]
fn the_codec_corpus_keeps_its_invariants() {
    for (path, bytes) in corpus("codec") {
        let outcome = std::panic::catch_unwind(|| codec(&bytes));
        assert!(outcome.is_ok(), "{} broke an invariant", path.display());
    }
}

#[test]
fn the_path_resolver_corpus_keeps_its_invariants() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = PathFixture::create(&dir.path().join("tree")).unwrap();
    for (path, bytes) in corpus("path_resolver") {
        let outcome = std::panic::catch_unwind(|| path_resolver(&fixture, &bytes));
        assert!(outcome.is_ok(), "{} broke an invariant", path.display());
    }
}

#[test]
fn the_regex_corpus_keeps_its_invariants() {
    for (path, bytes) in corpus("regex") {
        let outcome = std::panic::catch_unwind(|| regex(&bytes));
        assert!(outcome.is_ok(), "{} broke an invariant", path.display());
    }
}
