//! From a parsed script to what it will run: every simple command (a [`Unit`]) with its
//! wrappers looked through, which units feed which, where the script writes, and every
//! reason no rule may approve it.

use crate::paths::{basename, normalize, resolve};
use crate::shell::{
    self, Command, Pipeline, Redirect, RedirectOp, RedirectTarget, Script, SimpleCommand, Word,
};
use crate::wrappers::{self, Resolved};

/// Deepest chain of re-parsed command strings (`sh -c`, `eval`) followed.
const MAX_REPARSE: usize = 8;

/// Environment variables a command may be given without losing rule approval: they change
/// formatting, never which program runs or what it loads.
const SAFE_ENV: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "FORCE_COLOR",
    "COLUMNS",
    "LINES",
    "CI",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "CARGO_TERM_COLOR",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "NODE_ENV",
    "GIT_TERMINAL_PROMPT",
];

/// True for environment variables that cannot change what a program runs.
pub fn is_safe_env(name: &str) -> bool {
    SAFE_ENV.contains(&name) || name.starts_with("LC_")
}

/// One argument of a unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// The text, when it is known before the shell runs.
    pub text: Option<String>,
    /// A readable form (`$HOME/x`, `*.rs`), quotes removed.
    pub display: String,
}

impl Arg {
    pub fn from_word(word: &Word) -> Self {
        Arg {
            text: word.static_text(),
            display: word.display(),
        }
    }

    pub fn literal(text: &str) -> Self {
        Arg {
            text: Some(text.to_string()),
            display: text.to_string(),
        }
    }
}

/// One program the script will run, seen through its wrappers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Unit {
    /// The program and its arguments after wrappers and `NAME=value` prefixes are removed.
    /// Empty for a bare assignment or a redirection alone.
    pub argv: Vec<Arg>,
    /// Wrappers looked through, outermost first (`sudo`, `env`, `timeout`, …).
    pub wrappers: Vec<String>,
    /// Environment variables set for this command (prefixes and `env NAME=…`).
    pub env: Vec<String>,
    /// Why no rule may approve this unit (empty when a rule may).
    pub never_allow: Vec<String>,
    /// Arguments are appended at run time (`xargs`).
    pub dynamic_tail: bool,
    /// The file this unit executes, when it runs one (`./x`, `sh x`, `. x`).
    pub runs_file: Option<Arg>,
}

impl Unit {
    /// The program as written (`git`, `/usr/bin/git`, `./x`), when known.
    pub fn program(&self) -> Option<&str> {
        self.argv.first().and_then(|a| a.text.as_deref())
    }

    /// The program's file name (`/usr/bin/git` → `git`).
    pub fn program_name(&self) -> Option<&str> {
        self.program().map(basename)
    }
}

/// A file a redirection writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteTarget {
    pub display: String,
    /// The normalised absolute path, when it is known before the shell runs.
    pub resolved: Option<String>,
    /// The units whose standard output lands in the file (`curl URL > f`); empty when the
    /// redirection takes another descriptor (`2> log`).
    pub output_of: Vec<usize>,
}

/// Everything an approval decision needs to know about a script.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Analysis {
    pub units: Vec<Unit>,
    /// `(a, b)`: unit `a`'s output reaches unit `b` (a later pipeline stage, or a substitution
    /// in `b`'s words or redirections).
    pub feeds: Vec<(usize, usize)>,
    pub writes: Vec<WriteTarget>,
    /// Reasons that concern the whole script (a command string that could not be parsed).
    pub issues: Vec<String>,
    /// The script changes folder (`cd`, `pushd`, `popd`), so relative paths are unknown.
    pub changes_folder: bool,
}

impl Analysis {
    /// Resolves a static path the script names, or `None` when it cannot be known.
    pub fn resolve_arg(&self, cwd: &str, arg: &Arg) -> Option<String> {
        let text = arg.text.as_deref()?;
        if text.starts_with('/') {
            Some(normalize(text))
        } else if self.changes_folder {
            None
        } else {
            Some(resolve(cwd, text))
        }
    }
}

/// Analyses a parsed script run in the absolute folder `cwd`.
pub fn analyze(script: &Script, cwd: &str) -> Analysis {
    let mut walker = Walker {
        analysis: Analysis::default(),
        reparse_depth: 0,
        pending_writes: Vec::new(),
    };
    walker.script(script);
    let mut analysis = walker.analysis;
    for (arg, output_of) in walker.pending_writes {
        let resolved = analysis.resolve_arg(cwd, &arg);
        analysis.writes.push(WriteTarget {
            display: arg.display,
            resolved,
            output_of,
        });
    }
    analysis
}

struct Walker {
    analysis: Analysis,
    reparse_depth: usize,
    /// Files redirections write, with the units whose standard output they take.
    pending_writes: Vec<(Arg, Vec<usize>)>,
}

impl Walker {
    fn feed(&mut self, from: &[usize], to: &[usize]) {
        for a in from {
            for b in to {
                self.analysis.feeds.push((*a, *b));
            }
        }
    }

    fn script(&mut self, script: &Script) -> Vec<usize> {
        let mut units = Vec::new();
        for item in &script.items {
            units.extend(self.pipeline(&item.and_or.first));
            for (_, pipeline) in &item.and_or.rest {
                units.extend(self.pipeline(pipeline));
            }
        }
        units
    }

    fn pipeline(&mut self, pipeline: &Pipeline) -> Vec<usize> {
        let stages: Vec<Vec<usize>> = pipeline.commands.iter().map(|c| self.command(c)).collect();
        for (i, earlier) in stages.iter().enumerate() {
            for later in &stages[i + 1..] {
                self.feed(earlier, later);
            }
        }
        stages.into_iter().flatten().collect()
    }

    fn command(&mut self, command: &Command) -> Vec<usize> {
        let units = match command {
            Command::Simple(simple) => return self.simple(simple),
            Command::Subshell { body, .. } | Command::Group { body, .. } => self.script(body),
            Command::If {
                branches,
                else_body,
                ..
            } => {
                let mut units = Vec::new();
                for (condition, body) in branches {
                    units.extend(self.script(condition));
                    units.extend(self.script(body));
                }
                if let Some(body) = else_body {
                    units.extend(self.script(body));
                }
                units
            }
            Command::Loop {
                condition, body, ..
            } => {
                let mut units = self.script(condition);
                units.extend(self.script(body));
                units
            }
            Command::For { words, body, .. } => {
                let mut feeders = Vec::new();
                for word in words.iter().flatten() {
                    feeders.extend(self.word(word).0);
                }
                let units = self.script(body);
                self.feed(&feeders, &units);
                feeders.extend(units);
                feeders
            }
            Command::Test { words, .. } => {
                let mut units = Vec::new();
                for word in words {
                    units.extend(self.word(word).0);
                }
                units
            }
        };
        let extra = self.redirects(command.redirects(), &units);
        units.into_iter().chain(extra).collect()
    }

    /// Units in a word's substitutions: `(read by the command, written by the command)`.
    fn word(&mut self, word: &Word) -> (Vec<usize>, Vec<usize>) {
        let mut read = Vec::new();
        let mut written = Vec::new();
        for (script, output) in word.substitutions() {
            let units = self.script(script);
            if output {
                written.extend(units);
            } else {
                read.extend(units);
            }
        }
        (read, written)
    }

    /// Records writes and wires substitutions in redirections to `owners`; returns the units
    /// the substitutions created.
    fn redirects(&mut self, redirects: &[Redirect], owners: &[usize]) -> Vec<usize> {
        let mut created = Vec::new();
        for redirect in redirects {
            match &redirect.target {
                RedirectTarget::Word(word) => {
                    let (read, written) = self.word(word);
                    self.feed(&read, owners);
                    self.feed(owners, &written);
                    created.extend(read);
                    created.extend(written);
                    let writes = match redirect.op {
                        RedirectOp::Write
                        | RedirectOp::Append
                        | RedirectOp::Clobber
                        | RedirectOp::ReadWrite
                        | RedirectOp::WriteBoth
                        | RedirectOp::AppendBoth => true,
                        RedirectOp::DupOutput => !word
                            .static_text()
                            .is_some_and(|t| t == "-" || t.chars().all(|c| c.is_ascii_digit())),
                        _ => false,
                    };
                    if writes {
                        let takes_output =
                            matches!(redirect.op, RedirectOp::WriteBoth | RedirectOp::AppendBoth)
                                || (redirect.fd.is_none_or(|fd| fd == 1)
                                    && redirect.op != RedirectOp::ReadWrite);
                        let output_of = if takes_output {
                            owners.to_vec()
                        } else {
                            Vec::new()
                        };
                        self.pending_writes.push((Arg::from_word(word), output_of));
                    }
                }
                RedirectTarget::Heredoc(heredoc) => {
                    for script in heredoc.substitutions() {
                        let read = self.script(script);
                        self.feed(&read, owners);
                        created.extend(read);
                    }
                }
            }
        }
        created
    }

    fn simple(&mut self, simple: &SimpleCommand) -> Vec<usize> {
        let mut read = Vec::new();
        let mut written = Vec::new();
        for assignment in &simple.assignments {
            let (r, w) = self.word(&assignment.value);
            read.extend(r);
            written.extend(w);
        }
        for word in &simple.words {
            let (r, w) = self.word(word);
            read.extend(r);
            written.extend(w);
        }
        let argv: Vec<Arg> = simple.words.iter().map(Arg::from_word).collect();
        let resolved = wrappers::look_through(&argv);
        let mut unit = Unit {
            argv: resolved.argv.clone(),
            wrappers: resolved.wrappers.clone(),
            env: simple
                .assignments
                .iter()
                .map(|a| a.name.clone())
                .chain(resolved.env.iter().cloned())
                .collect(),
            never_allow: resolved.never_allow.clone(),
            dynamic_tail: resolved.dynamic_tail,
            runs_file: resolved.runs_file.clone(),
        };
        for name in &unit.env {
            if !is_safe_env(name) {
                let target = unit.program().unwrap_or("the rest of the command");
                unit.never_allow.push(format!(
                    "it sets `{name}` for `{target}`, which can change what runs"
                ));
            }
        }
        if matches!(unit.program_name(), Some("cd" | "pushd" | "popd")) {
            self.analysis.changes_folder = true;
        }
        let index = self.analysis.units.len();
        self.analysis.units.push(unit);
        let mut created = read.clone();
        created.extend(written.iter().copied());
        created.push(index);
        self.feed(&read, &[index]);
        self.feed(&[index], &written);
        created.extend(self.nested(&resolved));
        created.extend(self.redirects(&simple.redirects, &[index]));
        created
    }

    /// Units for what a wrapper runs itself: `sh -c STRING`, `eval …`, `find -exec …`.
    fn nested(&mut self, resolved: &Resolved) -> Vec<usize> {
        let mut created = Vec::new();
        for source in &resolved.command_strings {
            if self.reparse_depth >= MAX_REPARSE {
                self.analysis
                    .issues
                    .push("command strings nested too deeply".to_string());
                continue;
            }
            match shell::parse(source) {
                Ok(script) => {
                    self.reparse_depth += 1;
                    let units = self.script(&script);
                    self.reparse_depth -= 1;
                    created.extend(units);
                }
                Err(err) => self.analysis.issues.push(format!(
                    "the command string `{source}` cannot be read: {err}"
                )),
            }
        }
        for argv in &resolved.exec_argvs {
            let inner = wrappers::look_through(argv);
            let index = self.analysis.units.len();
            self.analysis.units.push(Unit {
                argv: inner.argv,
                wrappers: inner.wrappers,
                env: inner.env,
                never_allow: inner.never_allow,
                dynamic_tail: true,
                runs_file: inner.runs_file,
            });
            created.push(index);
        }
        created
    }
}

#[cfg(test)]
#[path = "analysis_tests.rs"]
mod tests;
