//! The functions the fuzz targets call (`fuzz/fuzz_targets/`), public so the checked-in corpus
//! also runs as ordinary tests (`tests/suite/corpus.rs`). Each one panics when an invariant
//! breaks; any other outcome is fine.

use std::fs;
use std::io::BufReader;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use tool_protocol::{ErrorCode, HostFrame, Line, LineReader, RootMode, RunnerFrame};

use crate::path_guard::{Location, Options, PathGuard, proc_path};
use crate::search::glob_pattern::GlobPattern;
use crate::search::regex::memchr::{count_byte, find_byte, rfind_byte};
use crate::search::regex::{Regex, RegexOptions};

/// Codec invariants over arbitrary bytes split into lines:
/// * a host or runner frame that decodes re-encodes canonically and decodes to itself;
/// * the fast `output` encoder writes the general encoder's bytes;
/// * the canonical fast decoder and the general decoder agree (a trailing space forces the
///   general path);
/// * an undecodable line yields an error frame that itself round-trips.
pub fn codec(data: &[u8]) {
    let mut lines = LineReader::with_limit(BufReader::new(data), 1 << 16);
    while let Ok(Some(line)) = lines.next_line() {
        host_line(&line);
        runner_line(&line);
    }
}

fn host_line(line: &Line) {
    match HostFrame::decode(line) {
        Ok(frame) => {
            let encoded = frame.encode();
            let again = HostFrame::decode(&Line::Text(encoded.trim_end().to_owned()));
            assert_eq!(again.as_ref(), Ok(&frame), "host frame did not round-trip");
        }
        Err(e) => {
            let answer = e.to_frame();
            let decoded = RunnerFrame::decode(&Line::Text(answer.encode().trim_end().to_owned()));
            assert_eq!(decoded, Ok(answer), "error frame did not round-trip");
        }
    }
}

fn runner_line(line: &Line) {
    let decoded = RunnerFrame::decode(line);
    if let Line::Text(text) = line {
        let mut bytes = Vec::new();
        if let Some((id, stream)) = RunnerFrame::append_output_bytes(text.as_bytes(), &mut bytes) {
            let expected = RunnerFrame::Output {
                id: id.to_owned(),
                stream,
                chunk: tool_protocol::Data::Bytes(bytes),
            };
            assert_eq!(
                decoded.as_ref(),
                Ok(&expected),
                "append_output_bytes differs"
            );
        }
    }
    let Ok(frame) = decoded else {
        return;
    };
    let encoded = frame.encode();
    let text = encoded.trim_end().to_owned();
    let again = RunnerFrame::decode(&Line::Text(text.clone()));
    assert_eq!(
        again.as_ref(),
        Ok(&frame),
        "runner frame did not round-trip"
    );
    let general = RunnerFrame::decode(&Line::Text(format!("{text} ")));
    assert_eq!(
        general.as_ref(),
        Ok(&frame),
        "fast and general decoders disagree"
    );
    if let RunnerFrame::Output { id, stream, chunk } = &frame {
        let mut fast = Vec::new();
        RunnerFrame::encode_output_into(id, *stream, chunk.as_bytes(), chunk.encoding(), &mut fast);
        assert_eq!(fast, encoded.as_bytes(), "fast output encoder differs");
    }
}

/// A tree to resolve fuzzed paths in: a read-write root, a read-only root and an outside
/// folder, with symlinks that stay inside, cross between the roots, leave them, loop, and
/// point at `/etc` and `/proc/self/root`.
pub struct PathFixture {
    pub base: PathBuf,
    pub guard: PathGuard,
}

impl PathFixture {
    /// Builds the tree under `base` (which must not exist yet).
    pub fn create(base: &Path) -> std::io::Result<Self> {
        fs::create_dir_all(base)?;
        let base = fs::canonicalize(base)?;
        let rw = base.join("rw");
        let ro = base.join("ro");
        let out = base.join("out");
        for dir in [rw.join("a/b/c"), ro.join("docs"), out.join("deep")] {
            fs::create_dir_all(dir)?;
        }
        fs::write(rw.join("a/file.txt"), "inside")?;
        fs::write(ro.join("docs/r.txt"), "read only")?;
        fs::write(out.join("secret"), "outside")?;
        let links: [(&str, PathBuf); 10] = [
            ("a/up", PathBuf::from("..")),
            ("a/b/c/top", PathBuf::from("../../..")),
            ("a/escape", PathBuf::from("../../out")),
            ("abs_out", out),
            ("to_ro", ro.clone()),
            ("etc", PathBuf::from("/etc")),
            ("proc_root", PathBuf::from("/proc/self/root")),
            ("loop", PathBuf::from("loop")),
            ("dangling", PathBuf::from("nowhere/at/all")),
            ("a/self", PathBuf::from(".")),
        ];
        for (name, target) in links {
            symlink(target, rw.join(name))?;
        }
        symlink(rw.join("a"), ro.join("back_to_rw"))?;
        let roots = [
            (rw.to_string_lossy().into_owned(), RootMode::ReadWrite),
            (ro.to_string_lossy().into_owned(), RootMode::ReadOnly),
        ];
        let guard =
            PathGuard::new(&roots, None).map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Self { base, guard })
    }
}

/// Path guard invariants: the first byte picks the options (bit 0: keep a final link), the
/// rest is the path. Whatever resolves must really lie inside a granted root (checked through
/// the kernel's view of the open handle), carry that root's mode, and never be outside; every
/// refusal must use one of the guard's codes.
pub fn path_resolver(fixture: &PathFixture, data: &[u8]) {
    let Some((&flags, path)) = data.split_first() else {
        return;
    };
    let Ok(path) = std::str::from_utf8(path) else {
        return;
    };
    let options = if flags & 1 == 0 {
        Options::FOLLOW
    } else {
        Options::KEEP_LINK
    };
    let resolved = match fixture.guard.resolve("path", path, options) {
        Ok(resolved) => resolved,
        Err(e) => {
            assert!(
                matches!(
                    e.code,
                    ErrorCode::OutsideRoots
                        | ErrorCode::BadArgs
                        | ErrorCode::NotFound
                        | ErrorCode::NotADirectory
                        | ErrorCode::Io
                ),
                "unexpected refusal for {path:?}: {e}"
            );
            return;
        }
    };
    // Where the kernel says the handle really is.
    let (handle, name) = match &resolved.location {
        Location::Root { dir, .. } => (dir, None),
        Location::Entry { parent, name, .. } => (parent, Some(name)),
    };
    let Ok(mut real) = fs::read_link(proc_path(handle)) else {
        panic!("the resolved handle of {path:?} has no path");
    };
    if let Some(name) = name {
        real.push(name);
    }
    assert_eq!(
        real, resolved.path,
        "{path:?} resolved to a path that is not where it is"
    );
    let inside = |root: &str| real.starts_with(fixture.base.join(root));
    let expected = if inside("rw") {
        RootMode::ReadWrite
    } else if inside("ro") {
        RootMode::ReadOnly
    } else {
        panic!("{path:?} resolved outside the roots: {}", real.display());
    };
    assert_eq!(resolved.mode, expected, "{path:?} got the wrong mode");
}

/// Search invariants. Input: one flag byte (bit 0: case-insensitive; bit 1: the glob path is a
/// folder), then the pattern, a NUL byte, and the text to search.
/// * any pattern compiles or is refused without panicking, as a regex and as a glob;
/// * the prefiltered line search, the plain lazy-DFA search and the Pike VM agree on which
///   lines match;
/// * the word-at-a-time byte scans agree with plain loops on the text.
pub fn regex(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let split = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let (pattern, input) = rest.split_at(split);
    let input = input.get(1..).unwrap_or_default();
    byte_scans(input, pattern.first().copied().unwrap_or(b'\n'));
    let Ok(pattern) = std::str::from_utf8(pattern) else {
        return;
    };
    if let Ok(glob) = GlobPattern::new(pattern) {
        let _ = glob.matches(&String::from_utf8_lossy(input), flags & 2 != 0);
    }
    let options = RegexOptions {
        case_insensitive: flags & 1 != 0,
    };
    let Ok(regex) = Regex::with_options(pattern, options) else {
        return;
    };
    let plain = regex.clone().without_prefilter();
    let mut prefiltered = regex.line_searcher();
    let mut automaton = plain.line_searcher();
    let with_prefilter: Vec<_> = prefiltered.matching_lines(input).collect();
    let without_prefilter: Vec<_> = automaton.matching_lines(input).collect();
    assert_eq!(
        with_prefilter, without_prefilter,
        "prefilter changed the answer"
    );
    if let Ok(text) = std::str::from_utf8(input) {
        for line in text.split('\n') {
            assert_eq!(
                regex.find(line).is_some(),
                automaton.is_match_line(line.as_bytes()),
                "Pike VM and DFA disagree on {line:?}"
            );
        }
    }
}

/// `count_byte`, `find_byte` and `rfind_byte` against plain loops, for `needle` and the
/// newline, from every offset of short texts and a few of long ones.
fn byte_scans(text: &[u8], needle: u8) {
    let offsets: Vec<usize> = if text.len() <= 64 {
        (0..=text.len() + 1).collect()
    } else {
        vec![
            0,
            1,
            7,
            8,
            15,
            16,
            17,
            text.len() / 2,
            text.len() - 1,
            text.len(),
        ]
    };
    for byte in [needle, b'\n'] {
        let count = text.iter().filter(|&&b| b == byte).count();
        assert_eq!(count_byte(text, byte), count, "count_byte({byte})");
        for &from in &offsets {
            let forward = text
                .get(from..)
                .and_then(|rest| rest.iter().position(|&b| b == byte))
                .map(|p| p + from);
            assert_eq!(
                find_byte(text, from, byte),
                forward,
                "find_byte({byte}, {from})"
            );
            let backward = text[..from.min(text.len())]
                .iter()
                .rposition(|&b| b == byte);
            assert_eq!(
                rfind_byte(text, from, byte),
                backward,
                "rfind_byte({byte}, {from})"
            );
        }
    }
}
