//! Programs that run other programs. Wrappers (`env`, `timeout`, `sudo`, …) are looked
//! through so that rules see the program that really runs; shells, interpreters, `eval` and
//! `find -exec` are read for the commands they run themselves.

use crate::analysis::Arg;
use crate::paths::basename;

/// What a command line runs once its wrappers are looked through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub argv: Vec<Arg>,
    pub wrappers: Vec<String>,
    pub env: Vec<String>,
    pub never_allow: Vec<String>,
    pub dynamic_tail: bool,
    pub runs_file: Option<Arg>,
    /// Command strings run by a shell (`sh -c`) or `eval`, to be parsed in turn.
    pub command_strings: Vec<String>,
    /// Commands run by `find -exec`/`-ok`.
    pub exec_argvs: Vec<Vec<Arg>>,
    /// Why what runs cannot be checked (inline code, a string known only at run time, a
    /// wrapper not looked through).
    pub opaque: Vec<String>,
    /// Code an interpreter runs, given inline (`python3 -c CODE`).
    pub inline_code: Vec<String>,
    /// The shell or interpreter reads its program from standard input.
    pub stdin_program: bool,
}

/// Programs that run a command given to them but are not looked through.
const UNFOLLOWED: &[&str] = &[
    "su",
    "watch",
    "strace",
    "ltrace",
    "chroot",
    "unshare",
    "nsenter",
    "parallel",
    "script",
    "unbuffer",
    "firejail",
    "bwrap",
    "systemd-run",
    "runuser",
    "chrt",
    "taskset",
];

/// Shells: `-c STRING` runs a string; no script argument runs what arrives on stdin.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "fish", "csh", "tcsh",
];

/// Programs whose first argument is what to run, so a rule may never allow them by name alone.
pub const RUNNERS: &[&str] = &[
    "env", "nice", "timeout", "nohup", "command", "builtin", "time", "stdbuf", "ionice", "sudo",
    "doas", "exec", "xargs", "eval", "source", ".", "su", "watch", "strace", "ltrace", "chroot",
    "unshare", "nsenter", "setsid", "flock", "parallel",
];

/// The name of an interpreter and the flags with which it runs code given inline.
fn interpreter(name: &str) -> Option<Interpreter> {
    let interp = |inline: &'static [&'static str], cluster: Option<char>, with_value| Interpreter {
        inline,
        cluster,
        with_value,
    };
    Some(match name {
        n if n.starts_with("python") || n == "pypy" || n == "pypy3" => {
            interp(&["-c"], Some('c'), &["-W", "-X", "-Q"])
        }
        "perl" => interp(&["-e", "-E"], Some('e'), &["-I", "-M", "-m"]),
        "ruby" => interp(&["-e"], Some('e'), &["-I", "-r"]),
        "node" | "nodejs" => interp(
            &["-e", "--eval", "-p", "--print"],
            None,
            &["-r", "--require"],
        ),
        "php" => interp(&["-r"], None, &["-c", "-d"]),
        "lua" | "luajit" => interp(&["-e"], None, &["-l"]),
        "deno" | "bun" => interp(&["eval", "-e"], None, &[]),
        _ => return None,
    })
}

/// True for shells and interpreters (programs that run code they are given).
pub fn runs_code(name: &str) -> bool {
    SHELLS.contains(&name) || interpreter(name).is_some()
}

struct Interpreter {
    inline: &'static [&'static str],
    /// A short flag that runs inline code even inside a cluster (`perl -ne`).
    cluster: Option<char>,
    with_value: &'static [&'static str],
}

/// Options of a wrapper.
struct Options<'o> {
    flags: &'o [&'o str],
    with_value: &'o [&'o str],
    /// `-10` style numeric flags (`nice -10`).
    numeric: bool,
}

impl Options<'_> {
    /// Skips options from `i`; `None` when an option is not understood.
    fn skip(&self, argv: &[Arg], mut i: usize) -> Option<usize> {
        loop {
            let Some(text) = argv.get(i).and_then(|a| a.text.as_deref()) else {
                return Some(i);
            };
            if text == "--" {
                return Some(i + 1);
            }
            if !text.starts_with('-') || text == "-" {
                return Some(i);
            }
            let (name, has_value) = match text.split_once('=') {
                Some((name, _)) if text.starts_with("--") => (name, true),
                _ => (text, false),
            };
            let short_head = (!text.starts_with("--") && text.len() > 2).then(|| &text[..2]);
            if self.flags.contains(&name) {
                i += 1;
            } else if self.with_value.contains(&name) {
                i += if has_value { 1 } else { 2 };
            } else if short_head
                .is_some_and(|h| self.with_value.contains(&h) || self.flags.contains(&h))
            {
                // `-n10`, `-I{}`, `-0r`: a value or more flags attached to a known short option.
                i += 1;
            } else if self.numeric && text[1..].chars().all(|c| c.is_ascii_digit()) {
                i += 1;
            } else {
                return None;
            }
        }
    }
}

enum Step {
    /// The wrapped command starts at this index.
    Next(usize),
    /// The program at the current index is what runs.
    Stop,
}

/// Looks through wrappers at the start of `argv` and classifies the program that runs.
pub(crate) fn look_through(argv: &[Arg]) -> Resolved {
    let mut resolved = Resolved::default();
    let mut start = 0;
    while let Some(first) = argv.get(start) {
        let Some(program) = first.text.as_deref() else {
            let reason = "the program's name is only known when the command runs".to_string();
            resolved.never_allow.push(reason.clone());
            resolved.opaque.push(reason);
            break;
        };
        let name = basename(program);
        match wrapper_step(name, argv, start, &mut resolved) {
            Step::Next(next) if next < argv.len() => {
                resolved.wrappers.push(name.to_string());
                start = next;
            }
            Step::Next(_) | Step::Stop => break,
        }
    }
    resolved.argv = argv[start..].to_vec();
    classify(&mut resolved);
    resolved
}

fn not_understood(resolved: &mut Resolved, name: &str, argv: &[Arg]) -> Step {
    let shown: Vec<&str> = argv.iter().take(4).map(|a| a.display.as_str()).collect();
    let reason = format!(
        "the options of `{name}` in `{}` are not understood",
        shown.join(" ")
    );
    resolved.never_allow.push(reason.clone());
    resolved.opaque.push(reason);
    Step::Stop
}

/// `NAME=value` arguments (after `env` or `sudo` options) are environment settings.
fn skip_assignments(argv: &[Arg], mut i: usize, resolved: &mut Resolved) -> usize {
    while let Some(arg) = argv.get(i) {
        let Some((name, _)) = arg.display.split_once('=') else {
            break;
        };
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
            && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
        if !valid {
            break;
        }
        resolved.env.push(name.to_string());
        i += 1;
    }
    i
}

fn wrapper_step(name: &str, argv: &[Arg], at: usize, resolved: &mut Resolved) -> Step {
    let opts = |flags, with_value| Options {
        flags,
        with_value,
        numeric: false,
    };
    let skipped = match name {
        "env" => {
            if argv[at + 1..]
                .iter()
                .any(|a| matches!(a.text.as_deref(), Some("-S" | "--split-string")))
            {
                return not_understood(resolved, name, &argv[at..]);
            }
            opts(
                &[
                    "-i",
                    "--ignore-environment",
                    "-0",
                    "--null",
                    "-v",
                    "--debug",
                ],
                &["-u", "--unset", "-C", "--chdir"],
            )
            .skip(argv, at + 1)
            .map(|i| skip_assignments(argv, i, resolved))
        }
        "nice" => Options {
            flags: &[],
            with_value: &["-n", "--adjustment"],
            numeric: true,
        }
        .skip(argv, at + 1),
        "timeout" => opts(
            &["--preserve-status", "--foreground", "-v", "--verbose"],
            &["-s", "--signal", "-k", "--kill-after"],
        )
        .skip(argv, at + 1)
        .map(|i| i + 1),
        "nohup" | "builtin" => opts(&[], &[]).skip(argv, at + 1),
        "command" => {
            if matches!(
                argv.get(at + 1).and_then(|a| a.text.as_deref()),
                Some("-v" | "-V")
            ) {
                return Step::Stop;
            }
            opts(&["-p"], &[]).skip(argv, at + 1)
        }
        "time" => opts(&["-p"], &[]).skip(argv, at + 1),
        "stdbuf" => {
            opts(&[], &["-i", "-o", "-e", "--input", "--output", "--error"]).skip(argv, at + 1)
        }
        "ionice" => opts(
            &["-t", "--ignore"],
            &[
                "-c",
                "--class",
                "-n",
                "--classdata",
                "-p",
                "--pid",
                "-P",
                "--pgid",
                "-u",
                "--uid",
            ],
        )
        .skip(argv, at + 1),
        "sudo" | "doas" => {
            resolved
                .never_allow
                .push(format!("`{name}` runs the command as another user"));
            let options = if name == "sudo" {
                opts(
                    &[
                        "-E",
                        "--preserve-env",
                        "-H",
                        "--set-home",
                        "-n",
                        "--non-interactive",
                        "-S",
                        "--stdin",
                        "-b",
                        "--background",
                        "-k",
                        "--reset-timestamp",
                        "-K",
                        "-P",
                        "--preserve-groups",
                        "-A",
                        "--askpass",
                        "-i",
                        "--login",
                        "-s",
                        "--shell",
                        "-B",
                        "--bell",
                    ],
                    &[
                        "-u",
                        "--user",
                        "-g",
                        "--group",
                        "-h",
                        "--host",
                        "-p",
                        "--prompt",
                        "-C",
                        "--close-from",
                        "-D",
                        "--chdir",
                        "-R",
                        "--chroot",
                        "-T",
                        "--command-timeout",
                        "-U",
                        "--other-user",
                        "-r",
                        "--role",
                        "-t",
                        "--type",
                    ],
                )
            } else {
                opts(&["-n", "-s"], &["-u", "-C"])
            };
            options
                .skip(argv, at + 1)
                .map(|i| skip_assignments(argv, i, resolved))
        }
        "exec" => {
            resolved
                .never_allow
                .push("`exec` replaces the shell with the command".to_string());
            opts(&["-c", "-l"], &["-a"]).skip(argv, at + 1)
        }
        "xargs" => {
            resolved
                .never_allow
                .push("`xargs` runs a command with arguments read from its input".to_string());
            resolved.dynamic_tail = true;
            opts(
                &[
                    "-0",
                    "--null",
                    "-r",
                    "--no-run-if-empty",
                    "-t",
                    "--verbose",
                    "-p",
                    "--interactive",
                    "-x",
                    "--exit",
                    "-o",
                    "--open-tty",
                    "--show-limits",
                    "-i",
                    "-l",
                    "-e",
                ],
                &[
                    "-I",
                    "-L",
                    "-n",
                    "-P",
                    "-d",
                    "-E",
                    "-s",
                    "-a",
                    "--arg-file",
                    "--delimiter",
                    "--max-args",
                    "--max-procs",
                    "--max-lines",
                    "--replace",
                    "--eof",
                    "--max-chars",
                    "--process-slot-var",
                ],
            )
            .skip(argv, at + 1)
        }
        "eval" => {
            resolved
                .never_allow
                .push("`eval` runs text as a command".to_string());
            let texts: Option<Vec<&str>> =
                argv[at + 1..].iter().map(|a| a.text.as_deref()).collect();
            match texts {
                Some(texts) => resolved.command_strings.push(texts.join(" ")),
                None => {
                    let reason = "`eval` runs text known only when the command runs".to_string();
                    resolved.never_allow.push(reason.clone());
                    resolved.opaque.push(reason);
                }
            }
            return Step::Stop;
        }
        "setsid" => opts(&["-c", "--ctty", "-f", "--fork", "-w", "--wait"], &[]).skip(argv, at + 1),
        "flock" => {
            let options = opts(
                &[
                    "-s",
                    "--shared",
                    "-x",
                    "-e",
                    "--exclusive",
                    "-u",
                    "--unlock",
                    "-n",
                    "--nb",
                    "--nonblock",
                    "-o",
                    "--close",
                    "-F",
                    "--no-fork",
                    "--verbose",
                ],
                &["-w", "--wait", "--timeout", "-E", "--conflict-exit-code"],
            );
            // `flock [options] FILE command…` or `flock [options] FILE -c STRING`.
            match options.skip(argv, at + 1) {
                Some(file) if file + 1 < argv.len() => {
                    let next = argv[file + 1].text.as_deref();
                    if matches!(next, Some("-c" | "--command")) {
                        resolved
                            .never_allow
                            .push("`flock -c` runs a command string".to_string());
                        match argv.get(file + 2).and_then(|a| a.text.clone()) {
                            Some(source) => resolved.command_strings.push(source),
                            None => resolved.opaque.push(
                                "`flock -c` runs a command string known only at run time"
                                    .to_string(),
                            ),
                        }
                        return Step::Stop;
                    }
                    Some(file + 1)
                }
                Some(_) => return Step::Stop,
                None => None,
            }
        }
        _ if UNFOLLOWED.contains(&name) => {
            resolved
                .never_allow
                .push(format!("`{name}` runs another command"));
            resolved.opaque.push(format!(
                "`{name}` runs a command this check does not follow"
            ));
            return Step::Stop;
        }
        _ => return Step::Stop,
    };
    match skipped {
        Some(next) => Step::Next(next),
        None => not_understood(resolved, name, &argv[at..]),
    }
}

/// Classifies the program that finally runs: shells, interpreters, `source`, `find -exec`,
/// and programs run by path.
fn classify(resolved: &mut Resolved) {
    let argv = resolved.argv.clone();
    let Some(program) = argv.first().and_then(|a| a.text.as_deref()) else {
        return;
    };
    let name = basename(program);
    if program.contains('/') {
        resolved.runs_file = argv.first().cloned();
    }
    if SHELLS.contains(&name) {
        classify_shell(name, &argv, resolved);
    } else if let Some(interp) = interpreter(name) {
        classify_interpreter(name, &interp, &argv, resolved);
    } else if name == "source" || name == "." {
        resolved.runs_file = argv.get(1).cloned();
    } else if name == "find" {
        let mut i = 1;
        while i < argv.len() {
            if matches!(
                argv[i].text.as_deref(),
                Some("-exec" | "-execdir" | "-ok" | "-okdir")
            ) {
                let end = argv[i + 1..]
                    .iter()
                    .position(|a| matches!(a.text.as_deref(), Some(";" | "+")))
                    .map_or(argv.len(), |p| i + 1 + p);
                if end > i + 1 {
                    resolved.exec_argvs.push(argv[i + 1..end].to_vec());
                }
                i = end;
            }
            i += 1;
        }
    }
}

fn classify_shell(name: &str, argv: &[Arg], resolved: &mut Resolved) {
    let mut i = 1;
    let mut runs_string = false;
    let mut reads_stdin = false;
    while let Some(text) = argv.get(i).and_then(|a| a.text.as_deref()) {
        if text == "--" || text == "-" {
            i += 1;
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            i += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if text.len() > 1 && (text.starts_with('-') || text.starts_with('+')) {
            let letters = &text[1..];
            runs_string |= letters.contains('c');
            reads_stdin |= letters.contains('s');
            i += if letters.contains('o') || letters.contains('O') {
                2
            } else {
                1
            };
            continue;
        }
        break;
    }
    if runs_string {
        match argv.get(i).and_then(|a| a.text.clone()) {
            Some(source) => {
                resolved.never_allow.push(format!(
                    "`{name} -c` runs a command string; the commands in it are checked instead"
                ));
                resolved.command_strings.push(source);
            }
            None => {
                let reason = format!("`{name} -c` runs a command string known only at run time");
                resolved.never_allow.push(reason.clone());
                resolved.opaque.push(reason);
            }
        }
    } else if reads_stdin || i >= argv.len() {
        resolved
            .never_allow
            .push(format!("`{name}` runs a program read from its input"));
        resolved.stdin_program = true;
    } else {
        resolved.runs_file = argv.get(i).cloned();
    }
}

fn classify_interpreter(name: &str, interp: &Interpreter, argv: &[Arg], resolved: &mut Resolved) {
    let mut i = 1;
    let mut module = false;
    while let Some(text) = argv.get(i).and_then(|a| a.text.as_deref()) {
        let clustered = interp.cluster.is_some_and(|c| {
            text.starts_with('-')
                && !text.starts_with("--")
                && !interp.with_value.iter().any(|v| text.starts_with(v))
                && text[1..].contains(c)
        });
        let attached = interp
            .inline
            .iter()
            .find(|flag| flag.starts_with("--") && text.starts_with(&format!("{flag}=")));
        if interp.inline.contains(&text) || clustered || attached.is_some() {
            resolved
                .never_allow
                .push(format!("`{name} {text}` runs code given inline"));
            let code = match attached {
                Some(flag) => Some(text[flag.len() + 1..].to_owned()),
                None => argv.get(i + 1).and_then(|a| a.text.clone()),
            };
            match code {
                Some(code) => resolved.inline_code.push(code),
                None => resolved
                    .opaque
                    .push(format!("`{name} {text}` runs code known only at run time")),
            }
            resolved.opaque.push(format!(
                "`{name} {text}` runs code given inline: what it changes cannot be checked"
            ));
            return;
        }
        if text == "-m" {
            module = true;
            break;
        }
        if text == "-" {
            break;
        }
        if !text.starts_with('-') {
            resolved.runs_file = argv.get(i).cloned();
            return;
        }
        i += if interp.with_value.contains(&text) {
            2
        } else {
            1
        };
    }
    if module {
        return;
    }
    match argv.get(i) {
        Some(arg) if arg.text.is_none() => {
            resolved.runs_file = Some(arg.clone());
            let reason = format!("`{name}` runs a script named only at run time");
            resolved.never_allow.push(reason.clone());
            resolved.opaque.push(reason);
        }
        _ => {
            resolved
                .never_allow
                .push(format!("`{name}` runs a program read from its input"));
            resolved.stdin_program = true;
        }
    }
}
