//! Files a shell command downloads, as far as they can be known before it runs.
//!
//! The safety check "running a downloaded file" needs them twice: inside one command
//! (`curl -o x URL && ./x`) and across calls, where the caller keeps the paths an earlier,
//! approved command downloaded ([`downloads_of`]) and passes them back in
//! [`crate::ToolCallView::recently_downloaded`].
//!
//! Counted as downloads: `curl` (`-o`/`--output`, `-O`/`--remote-name[-all]` with the URL's
//! file name, `--output-dir`), `wget` (`-O`/`--output-document`, otherwise the URL's file name
//! under `-P`/`--directory-prefix`), the file a `curl`/`wget` writes through a redirection or
//! `tee`, and `git clone` (the clone's folder: every file under it counts). Names known only
//! when the command runs (a server-chosen name, a variable, a path after `cd`) cannot be
//! listed; [`Downloads::unknown_names`] says when there are some.

use std::collections::BTreeSet;

use crate::analysis::{Analysis, Arg, Unit, analyze};
use crate::paths::{is_within, normalize, resolve};
use crate::shell;

/// Files a command downloads: known paths, and whether some go to names known only later.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Downloads {
    /// Normalised absolute paths (files, or a clone's folder).
    pub paths: BTreeSet<String>,
    pub unknown_names: bool,
}

/// True when `path` is `root` or lies under it (a file inside a cloned repository).
pub(crate) fn covers(root: &str, path: &str) -> bool {
    root != "/" && is_within(path, root)
}

/// The absolute paths `command` downloads to when run in the absolute folder `cwd`: files, and
/// the folder of a `git clone` (everything under it counts as downloaded). Paths known only
/// when the command runs are missing; a command that cannot be parsed, or a relative `cwd`,
/// gives none.
pub fn downloads_of(command: &str, cwd: &str) -> Vec<String> {
    if !cwd.starts_with('/') {
        return Vec::new();
    }
    let cwd = normalize(cwd);
    match shell::parse(command) {
        Ok(script) => downloads(&analyze(&script, &cwd), &cwd)
            .paths
            .into_iter()
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The absolute paths `command` writes by redirection or `tee` when run in `cwd` (known
/// before it runs; `/dev/*` left out). The caller keeps them with what the file tools wrote,
/// so running one later is known to run something written in the session.
pub fn writes_of(command: &str, cwd: &str) -> Vec<String> {
    if !cwd.starts_with('/') {
        return Vec::new();
    }
    let cwd = normalize(cwd);
    let Ok(script) = shell::parse(command) else {
        return Vec::new();
    };
    let analysis = analyze(&script, &cwd);
    let mut paths: BTreeSet<String> = analysis
        .writes
        .iter()
        .flat_map(|w| w.resolved.iter().chain(&w.candidates))
        .filter(|p| !p.starts_with("/dev/"))
        .cloned()
        .collect();
    for unit in analysis
        .units
        .iter()
        .filter(|u| u.program_name() == Some("tee"))
    {
        for arg in unit.argv[1..]
            .iter()
            .filter(|a| a.text.as_deref().is_none_or(|t| !t.starts_with('-')))
        {
            paths.extend(analysis.resolve_all(&cwd, arg));
        }
    }
    paths.into_iter().collect()
}

struct Collector<'a> {
    analysis: &'a Analysis,
    cwd: &'a str,
    found: Downloads,
}

impl Collector<'_> {
    /// Adds `arg` as a downloaded path, relative to `base` when given (an `--output-dir`).
    fn add(&mut self, arg: Option<&Arg>, base: Option<&str>) {
        let path = match (arg.and_then(|a| a.text.as_deref()), base) {
            (Some(text), Some(base)) if !text.starts_with('/') => Some(resolve(base, text)),
            _ => arg.and_then(|a| self.analysis.resolve_arg(self.cwd, a)),
        };
        match path {
            // `-o -` is standard output.
            Some(path) if path == "/-" || path.ends_with("/-") => {}
            Some(path) => {
                self.found.paths.insert(path);
            }
            None => self.found.unknown_names = true,
        }
    }

    /// The folder an option names (`--output-dir`, `-P`), resolved; `None` when unknown.
    fn folder(&mut self, arg: Option<&Arg>) -> Option<String> {
        let folder = arg.and_then(|a| self.analysis.resolve_arg(self.cwd, a));
        if folder.is_none() {
            self.found.unknown_names = true;
        }
        folder
    }

    /// Adds the file names of the URLs among `args` (what `curl -O` and `wget` name them).
    fn add_remote_names(&mut self, args: &[Arg], base: Option<&str>, default_name: Option<&str>) {
        let mut any = false;
        for text in args.iter().filter_map(|a| a.text.as_deref()) {
            let Some(names) = remote_names(text, default_name) else {
                continue;
            };
            any = true;
            for name in names {
                self.add(Some(&Arg::literal(&name)), base);
            }
        }
        if !any {
            self.found.unknown_names = true;
        }
    }

    fn curl(&mut self, args: &[Arg]) {
        let value = |i: usize| args.get(i + 1);
        let mut output_dir: Option<String> = None;
        for (i, arg) in args.iter().enumerate().skip(1) {
            match arg.text.as_deref() {
                Some("--output-dir") => output_dir = self.folder(value(i)),
                Some(text) if text.starts_with("--output-dir=") => {
                    let dir = Arg::literal(&text["--output-dir=".len()..]);
                    output_dir = self.folder(Some(&dir));
                }
                _ => {}
            }
        }
        let base = output_dir.as_deref();
        let mut remote = false;
        for (i, arg) in args.iter().enumerate().skip(1) {
            let Some(text) = arg.text.as_deref() else {
                continue;
            };
            if text == "-o" || text == "--output" {
                self.add(value(i), base);
            } else if let Some(v) = text.strip_prefix("--output=") {
                self.add(Some(&Arg::literal(v)), base);
            } else if text.starts_with('-') && !text.starts_with("--") {
                if text.ends_with('o') {
                    self.add(value(i), base);
                } else if let Some((_, v)) = text.split_once('o') {
                    self.add(Some(&Arg::literal(v)), base);
                }
                if text.contains('O') {
                    remote = true;
                }
            } else if text.starts_with("--remote-name") {
                remote = true;
            }
        }
        if remote {
            // The name may also come from the server (`-J`) or a redirect: some names stay
            // unknown, but the URL's own file name is a download too.
            self.found.unknown_names = true;
            self.add_remote_names(&args[1..], base, None);
        }
    }

    fn wget(&mut self, args: &[Arg]) {
        let value = |i: usize| args.get(i + 1);
        let mut named = false;
        let mut prefix: Option<String> = None;
        for (i, arg) in args.iter().enumerate().skip(1) {
            let Some(text) = arg.text.as_deref() else {
                continue;
            };
            if text == "-O" || text == "--output-document" {
                named = true;
                self.add(value(i), None);
            } else if let Some(v) = text.strip_prefix("--output-document=") {
                named = true;
                self.add(Some(&Arg::literal(v)), None);
            } else if text == "-P" || text == "--directory-prefix" {
                prefix = self.folder(value(i));
            } else if let Some(v) = text.strip_prefix("--directory-prefix=") {
                prefix = self.folder(Some(&Arg::literal(v)));
            } else if text.starts_with('-') && !text.starts_with("--") {
                if let Some((_, v)) = text.split_once('O') {
                    named = true;
                    if v.is_empty() {
                        self.add(value(i), None);
                    } else {
                        self.add(Some(&Arg::literal(v)), None);
                    }
                } else if let Some((_, v)) = text.split_once('P') {
                    prefix = if v.is_empty() {
                        self.folder(value(i))
                    } else {
                        self.folder(Some(&Arg::literal(v)))
                    };
                }
            }
        }
        if !named {
            // Recursion, `.1` suffixes and server-chosen names stay unknown; the URL's own
            // file name is listed.
            self.found.unknown_names = true;
            self.add_remote_names(&args[1..], prefix.as_deref(), Some("index.html"));
        }
    }

    fn git_clone(&mut self, args: &[Arg]) {
        // Global options before the subcommand; `-C` moves where the clone lands.
        let mut moved_to: Option<Option<&Arg>> = None;
        let mut i = 1;
        loop {
            match args.get(i).and_then(|a| a.text.as_deref()) {
                Some("-C") => {
                    moved_to = Some(args.get(i + 1));
                    i += 2;
                }
                Some("-c") => i += 2,
                Some("clone") => break,
                Some(text) if text.starts_with('-') => i += 1,
                _ => return,
            }
        }
        const WITH_VALUE: &[&str] = &[
            "-b",
            "--branch",
            "-o",
            "--origin",
            "-c",
            "--config",
            "--depth",
            "--reference",
            "--reference-if-able",
            "--separate-git-dir",
            "-u",
            "--upload-pack",
            "--template",
            "-j",
            "--jobs",
            "--filter",
            "--shallow-since",
            "--shallow-exclude",
            "--bundle-uri",
            "--server-option",
            "--revision",
        ];
        let base = moved_to.and_then(|arg| self.folder(arg));
        let mut operands: Vec<&Arg> = Vec::new();
        let mut bare = false;
        let mut j = i + 1;
        let mut options_done = false;
        while let Some(arg) = args.get(j) {
            j += 1;
            match arg.text.as_deref() {
                Some("--") if !options_done => options_done = true,
                Some("--bare" | "--mirror") if !options_done => bare = true,
                Some(text) if !options_done && WITH_VALUE.contains(&text) => j += 1,
                Some(text) if !options_done && text.starts_with('-') => {}
                _ => operands.push(arg),
            }
        }
        let base = base.as_deref();
        match operands.as_slice() {
            [_, folder, ..] => self.add(Some(folder), base),
            [repository] => match repository.text.as_deref().and_then(clone_folder_name) {
                Some(name) => {
                    let name = if bare { format!("{name}.git") } else { name };
                    self.add(Some(&Arg::literal(&name)), base);
                }
                None => self.found.unknown_names = true,
            },
            [] => {}
        }
    }

    /// `tee FILE…` fed by a download writes the download to its files.
    fn tee(&mut self, unit: &Unit) {
        for arg in unit.argv.iter().skip(1) {
            if !arg.text.as_deref().is_some_and(|t| t.starts_with('-')) {
                self.add(Some(arg), None);
            }
        }
    }
}

fn is_fetcher(unit: &Unit) -> bool {
    matches!(unit.program_name(), Some("curl" | "wget"))
}

/// The names a URL's file is saved under: its last path segment, with and without the query
/// (tools differ). `None` when `text` is not a URL; `default_name` stands in for an empty
/// segment (`wget https://host/` saves `index.html`; `curl -O` refuses).
fn remote_names(text: &str, default_name: Option<&str>) -> Option<Vec<String>> {
    let (_, rest) = text.split_once("://")?;
    let rest = rest.split('#').next().unwrap_or("");
    let path = rest.split_once('/').map_or("", |(_, path)| path);
    let with_query = path.rsplit('/').next().unwrap_or("");
    let without_query = with_query.split('?').next().unwrap_or("");
    let mut names = Vec::new();
    for name in [without_query, with_query] {
        let name = if name.is_empty() {
            match default_name {
                Some(default) => default,
                None => continue,
            }
        } else {
            name
        };
        if name != "." && name != ".." && !names.iter().any(|n: &String| n == name) {
            names.push(name.to_owned());
        }
    }
    Some(names)
}

/// The folder `git clone REPOSITORY` creates: the repository's last path segment without
/// `.git` (`https://host/team/tool.git` → `tool`, `host:team/tool` → `tool`).
fn clone_folder_name(repository: &str) -> Option<String> {
    let trimmed = repository.trim_end_matches('/');
    let trimmed = trimmed.strip_suffix("/.git").unwrap_or(trimmed);
    let last = trimmed.rsplit(['/', ':']).next()?;
    let name = last.strip_suffix(".git").unwrap_or(last);
    (!name.is_empty() && name != "." && name != "..").then(|| name.to_owned())
}

/// Everything `analysis` downloads when run in `cwd`.
pub(crate) fn downloads(analysis: &Analysis, cwd: &str) -> Downloads {
    let mut collector = Collector {
        analysis,
        cwd,
        found: Downloads::default(),
    };
    for unit in &analysis.units {
        let args = &unit.argv;
        match unit.program_name() {
            Some("curl") => collector.curl(args),
            Some("wget") => collector.wget(args),
            Some("git") => collector.git_clone(args),
            _ => {}
        }
    }
    for write in &analysis.writes {
        let from_fetcher = write
            .output_of
            .iter()
            .any(|i| analysis.units.get(*i).is_some_and(is_fetcher));
        if from_fetcher {
            match &write.resolved {
                Some(path) => {
                    collector.found.paths.insert(path.clone());
                }
                None => collector.found.unknown_names = true,
            }
        }
    }
    for (from, to) in &analysis.feeds {
        let fed_by_fetcher = analysis.units.get(*from).is_some_and(is_fetcher);
        if let Some(unit) = analysis.units.get(*to)
            && fed_by_fetcher
            && unit.program_name() == Some("tee")
        {
            collector.tee(unit);
        }
    }
    collector.found
}

#[cfg(test)]
#[path = "downloads_tests.rs"]
mod tests;
