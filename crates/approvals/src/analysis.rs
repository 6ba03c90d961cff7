//! From a parsed script to what it will run: every simple command (a [`Unit`]) with its
//! wrappers looked through, which units feed which, where the script writes, and every
//! reason no rule may approve it.

use crate::expand::Vars;
use crate::paths::{basename, normalize, resolve};
use crate::protected::HOME_MARK;
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
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Arg {
    /// The text, when it is known before the shell runs (literally, or a variable the command
    /// set earlier to one value the shell will not split).
    pub text: Option<String>,
    /// A readable form (`$HOME/x`, `*.rs`), quotes removed.
    pub display: String,
    /// Every text the word may stand for when the command's own variables, `~`, `$HOME` or
    /// `{a,b}` make it one of several (a home path starts with `~`).
    pub candidates: Vec<String>,
    /// What in it is known only when the command runs (`$X`, `$(…)`); empty when nothing is.
    pub unknown: Vec<String>,
}

impl Arg {
    pub fn from_word(word: &Word) -> Self {
        Arg {
            text: word.static_text(),
            display: word.display(),
            ..Arg::default()
        }
    }

    pub fn literal(text: &str) -> Self {
        Arg {
            text: Some(text.to_string()),
            display: text.to_string(),
            ..Arg::default()
        }
    }

    /// The word with the command's known variables expanded.
    pub(crate) fn expanded(word: &Word, vars: &Vars) -> Self {
        let mut arg = Self::from_word(word);
        let expanded = vars.expand(word);
        arg.unknown = expanded.unknown;
        if arg.text.is_none()
            && expanded.expanded
            && !expanded.splits
            && !expanded.home
            && arg.unknown.is_empty()
            && let [only] = expanded.values.as_slice()
        {
            arg.text = Some(only.clone());
        }
        if arg.text.is_none() {
            arg.candidates = expanded.values;
        }
        arg
    }

    /// Whether the word's text is known in every form it may take.
    pub fn is_known(&self) -> bool {
        self.text.is_some() || !self.candidates.is_empty()
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
    /// Why what this unit does cannot be checked (code given inline, a command string known
    /// only at run time, a wrapper not looked through); `auto-in-sandbox` asks then.
    pub opaque: Vec<String>,
    /// Code an interpreter runs, given inline or as a here-document (`python3 -c …`).
    pub inline_code: Vec<String>,
    /// A shell or interpreter that reads its program from standard input (`… | sh`).
    pub stdin_program: bool,
    /// That program was seen (a here-document, or `echo`/`printf` piped in) and checked.
    pub input_seen: bool,
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
    /// Every path it may be (the command's variables, `~`), normalised; `~/x` as `/~/x`.
    pub candidates: Vec<String>,
    /// What in it is known only when the command runs.
    pub unknown: Vec<String>,
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
        self.resolve_text(cwd, text)
    }

    fn resolve_text(&self, cwd: &str, text: &str) -> Option<String> {
        if text.starts_with('/') {
            Some(normalize(text))
        } else if let Some(rest) = text
            .strip_prefix('~')
            .filter(|r| r.is_empty() || r.starts_with('/'))
        {
            Some(normalize(&format!("{HOME_MARK}{rest}")))
        } else if self.changes_folder {
            None
        } else {
            Some(resolve(cwd, text))
        }
    }

    /// Every path a word may name, resolved (`~/x` as `/~/x`); empty when unknown.
    pub fn resolve_all(&self, cwd: &str, arg: &Arg) -> Vec<String> {
        match &arg.text {
            Some(text) => self.resolve_text(cwd, text).into_iter().collect(),
            None => arg
                .candidates
                .iter()
                .filter_map(|c| self.resolve_text(cwd, c))
                .collect(),
        }
    }
}

/// Analyses a parsed script run in the absolute folder `cwd`.
pub fn analyze(script: &Script, cwd: &str) -> Analysis {
    let mut walker = Walker {
        analysis: Analysis::default(),
        reparse_depth: 0,
        pending_writes: Vec::new(),
        vars: Vars::default(),
    };
    walker.script(script);
    let mut analysis = walker.analysis;
    for (arg, output_of) in walker.pending_writes {
        let resolved = analysis.resolve_arg(cwd, &arg);
        let candidates = analysis.resolve_all(cwd, &arg);
        analysis.writes.push(WriteTarget {
            display: arg.display,
            resolved,
            candidates,
            unknown: arg.unknown,
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
    vars: Vars,
}

/// Programs whose arguments set shell variables (`export d=.git`).
const DECLARES: &[&str] = &["export", "local", "declare", "typeset", "readonly"];

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
        let mut stages: Vec<Vec<usize>> =
            pipeline.commands.iter().map(|c| self.command(c)).collect();
        for (i, earlier) in stages.iter().enumerate() {
            for later in &stages[i + 1..] {
                self.feed(earlier, later);
            }
        }
        // `echo 'commands' | sh`: the program a shell reads is the text piped in.
        for i in 1..stages.len() {
            let Some(&reader) = stages[i].first() else {
                continue;
            };
            let unit = &self.analysis.units[reader];
            if !unit.stdin_program || unit.input_seen {
                continue;
            }
            let [writer] = stages[i - 1].as_slice() else {
                continue;
            };
            if let Some(text) = printed_text(&self.analysis.units[*writer]) {
                let created = self.read_program(reader, &text);
                stages[i].extend(created);
            }
        }
        stages.into_iter().flatten().collect()
    }

    /// Checks the program a shell or interpreter (unit `reader`) reads from its input.
    fn read_program(&mut self, reader: usize, text: &str) -> Vec<usize> {
        let shell_reads = self.analysis.units[reader]
            .program_name()
            .is_some_and(|n| wrappers::SHELLS.contains(&n));
        self.analysis.units[reader].input_seen = true;
        if !shell_reads {
            self.analysis.units[reader]
                .inline_code
                .push(text.to_owned());
            return Vec::new();
        }
        if self.reparse_depth >= MAX_REPARSE {
            self.analysis
                .issues
                .push("command strings nested too deeply".to_string());
            return Vec::new();
        }
        match shell::parse(text) {
            Ok(script) => {
                self.reparse_depth += 1;
                let units = self.script(&script);
                self.reparse_depth -= 1;
                units
            }
            Err(err) => {
                self.analysis.issues.push(format!(
                    "the program piped into a shell cannot be read: {err}"
                ));
                Vec::new()
            }
        }
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
            Command::For {
                variable,
                words,
                body,
                ..
            } => {
                let mut feeders = Vec::new();
                for word in words.iter().flatten() {
                    feeders.extend(self.word(word).0);
                }
                let values: Option<Vec<String>> = words.as_ref().and_then(|words| {
                    let mut values = Vec::new();
                    for word in words {
                        let arg = Arg::expanded(word, &self.vars);
                        match arg.text {
                            Some(text) => values.push(text),
                            None if arg.unknown.is_empty() && !arg.candidates.is_empty() => {
                                values.extend(arg.candidates);
                            }
                            None => return None,
                        }
                    }
                    Some(values)
                });
                self.vars.assign(variable, values);
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
                        self.pending_writes
                            .push((Arg::expanded(word, &self.vars), output_of));
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
        let argv: Vec<Arg> = simple
            .words
            .iter()
            .map(|w| Arg::expanded(w, &self.vars))
            .collect();
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
            opaque: resolved.opaque.clone(),
            inline_code: resolved.inline_code.clone(),
            stdin_program: resolved.stdin_program,
            input_seen: false,
        };
        self.set_variables(simple, &unit);
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
        // `sh <<'EOF' … EOF`: the here-document is the program.
        if self.analysis.units[index].stdin_program {
            for redirect in &simple.redirects {
                // A body with substitutions is known only when the outer shell runs them.
                if let RedirectTarget::Heredoc(heredoc) = &redirect.target
                    && (heredoc.quoted || heredoc.substitutions().is_empty())
                {
                    let text = heredoc.body_text().to_owned();
                    created.extend(self.read_program(index, &text));
                }
            }
        }
        created
    }

    /// Records what a command sets its shell variables to (bare assignments, `export`,
    /// `read`): later words see these values.
    fn set_variables(&mut self, simple: &SimpleCommand, unit: &Unit) {
        for assignment in &simple.assignments {
            let value = Arg::expanded(&assignment.value, &self.vars);
            let values = match (value.text, value.unknown.is_empty()) {
                (Some(text), _) => Some(vec![text]),
                (None, true) if !value.candidates.is_empty() => Some(value.candidates),
                _ => None,
            };
            self.vars.assign(&assignment.name, values);
        }
        let Some(program) = unit.program_name() else {
            return;
        };
        if DECLARES.contains(&program) {
            for arg in &unit.argv[1..] {
                let forms: Vec<&String> = arg.text.iter().chain(&arg.candidates).collect();
                let Some((name, _)) = arg.display.split_once('=') else {
                    continue;
                };
                if forms.is_empty() || !arg.unknown.is_empty() {
                    self.vars.assign(name, None);
                    continue;
                }
                let values: Vec<String> = forms
                    .iter()
                    .filter_map(|f| f.split_once('=').map(|(_, v)| v.to_owned()))
                    .collect();
                self.vars.assign(name, Some(values));
            }
        } else if matches!(
            program,
            "read" | "mapfile" | "readarray" | "getopts" | "printf"
        ) {
            // `read X`, `printf -v X`: set from input or formats; unknown.
            for arg in &unit.argv[1..] {
                if let Some(text) = &arg.text
                    && !text.starts_with('-')
                    && text.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
                    && program != "printf"
                {
                    self.vars.assign(text, None);
                }
            }
            if program == "printf"
                && let Some(i) = unit
                    .argv
                    .iter()
                    .position(|a| a.text.as_deref() == Some("-v"))
                && let Some(name) = unit.argv.get(i + 1).and_then(|a| a.text.clone())
            {
                self.vars.assign(&name, None);
            }
        }
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
                opaque: inner.opaque,
                inline_code: inner.inline_code,
                stdin_program: inner.stdin_program,
                input_seen: false,
            });
            created.push(index);
        }
        created
    }
}

/// The text `echo` or `printf` prints, when it is known (`printf` with a format only).
fn printed_text(unit: &Unit) -> Option<String> {
    let name = unit.program_name()?;
    let args: Option<Vec<&str>> = unit.argv[1..].iter().map(|a| a.text.as_deref()).collect();
    let args = args?;
    match name {
        "echo" => {
            let mut escapes = false;
            let mut rest = args.as_slice();
            while let Some((first, tail)) = rest.split_first() {
                match *first {
                    "-n" | "-E" => rest = tail,
                    "-e" | "-ne" | "-en" => {
                        escapes = true;
                        rest = tail;
                    }
                    _ => break,
                }
            }
            let text = rest.join(" ");
            Some(if escapes { unescape(&text) } else { text })
        }
        "printf" => match args.as_slice() {
            [format] if !format.contains('%') => Some(unescape(format)),
            _ => None,
        },
        _ => None,
    }
}

/// `\n`, `\t` and `\\` as `printf` and `echo -e` read them.
fn unescape(text: &str) -> String {
    text.replace("\\n", "\n")
        .replace("\\t", "\t")
        .replace("\\\\", "\\")
}

#[cfg(test)]
#[path = "analysis_tests.rs"]
mod tests;
