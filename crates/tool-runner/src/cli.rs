//! The command line: `serve`, `attach`, `stdio` and `self-check`, parsed with std only.

use std::fmt;

use tool_protocol::RootMode;

pub const USAGE: &str = "\
usage:
  tool-runner serve --socket PATH --root PATH:rw|ro [--root …] [OPTIONS]
  tool-runner stdio --root PATH:rw|ro [--root …] [OPTIONS]
  tool-runner attach --socket PATH
  tool-runner self-check [--keep]
  tool-runner --version

modes:
  serve       listen on a unix socket and serve many connections until a `shutdown` frame,
              or until the parent process goes away
  stdio       serve one connection on stdin/stdout (direct mode)
  attach      relay stdin/stdout to a serving runner's socket (one per exec stream)
  self-check  start a runner on a temporary folder, call every tool and report

options:
  --root PATH:rw|ro     a folder to serve, read-write or read-only (repeatable, at least one)
  --cwd PATH            the folder relative paths start from (default: the first root)
  --max-timeout-ms N    the longest run_bash timeout a call may ask for (default 600000)
  --exit-on-stdin-eof   serve: also exit when stdin reaches end of file
  --writable PATH       serve: a folder whose entries commands may make, remove and move
                        (repeatable: the wall's writable folders); once one is given they may
                        do so nowhere else, so the socket's folder, which must not lie below
                        any, cannot be changed by them
  --test-unscoped-signals
                        serve, tests only: no Landlock signal scope for the commands, as on a
                        kernel before 6.12 (so a test can show what else keeps them off the
                        runner); never used outside tests
  --keep                self-check: keep the temporary folder and print where it is
";

/// A command line that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// What to serve: the granted roots and limits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServeOptions {
    pub roots: Vec<(String, RootMode)>,
    pub cwd: Option<String>,
    pub max_timeout_ms: Option<u64>,
    /// `serve --test-unscoped-signals`: commands get no Landlock signal scope (tests only).
    pub unscoped_signals: bool,
    /// `serve --writable`: the only folders whose entries commands may change.
    pub writable: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    Serve {
        socket: String,
        options: ServeOptions,
        exit_on_stdin_eof: bool,
    },
    Stdio {
        options: ServeOptions,
    },
    Attach {
        socket: String,
    },
    SelfCheck {
        keep: bool,
    },
    Help,
    Version,
}

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Invocation, UsageError> {
    let Some((mode, rest)) = args.split_first() else {
        return Err(UsageError("no mode given".into()));
    };
    let mut socket = None;
    let mut options = ServeOptions::default();
    let mut exit_on_stdin_eof = false;
    let mut keep = false;
    let mut iter = rest.iter();
    while let Some(arg) = iter.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| iter.next().cloned())
                .ok_or_else(|| UsageError(format!("{flag} needs a value")))
        };
        match flag {
            "--socket" => socket = Some(value()?),
            "--root" => options.roots.push(parse_root(&value()?)?),
            "--cwd" => options.cwd = Some(value()?),
            "--max-timeout-ms" => {
                let text = value()?;
                let ms = text
                    .parse::<u64>()
                    .ok()
                    .filter(|&ms| ms > 0)
                    .ok_or_else(|| {
                        UsageError(format!(
                            "--max-timeout-ms: `{text}` is not a positive number of milliseconds"
                        ))
                    })?;
                options.max_timeout_ms = Some(ms);
            }
            "--exit-on-stdin-eof" => exit_on_stdin_eof = true,
            "--writable" => {
                let path = value()?;
                if !path.starts_with('/') {
                    return Err(UsageError(format!(
                        "--writable `{path}`: the path must be absolute"
                    )));
                }
                options.writable.push(path);
            }
            "--test-unscoped-signals" => options.unscoped_signals = true,
            "--keep" => keep = true,
            other => return Err(UsageError(format!("unknown argument `{other}`"))),
        }
    }
    let need_socket = |socket: Option<String>| {
        socket.ok_or_else(|| UsageError(format!("{mode} needs --socket PATH")))
    };
    let need_roots = |options: &ServeOptions| {
        if options.roots.is_empty() {
            Err(UsageError(format!(
                "{mode} needs at least one --root PATH:rw or --root PATH:ro"
            )))
        } else {
            Ok(())
        }
    };
    let only = |allowed: &[&str]| -> Result<(), UsageError> {
        let given = [
            ("--socket", socket.is_some()),
            ("--root", !options.roots.is_empty()),
            ("--cwd", options.cwd.is_some()),
            ("--max-timeout-ms", options.max_timeout_ms.is_some()),
            ("--exit-on-stdin-eof", exit_on_stdin_eof),
            ("--test-unscoped-signals", options.unscoped_signals),
            ("--writable", !options.writable.is_empty()),
            ("--keep", keep),
        ];
        match given
            .iter()
            .find(|(flag, set)| *set && !allowed.contains(flag))
        {
            Some((flag, _)) => Err(UsageError(format!("{flag} does not apply to {mode}"))),
            None => Ok(()),
        }
    };
    let serve_flags = ["--root", "--cwd", "--max-timeout-ms"];
    match mode.as_str() {
        "serve" => {
            only(
                &[
                    &serve_flags[..],
                    &[
                        "--socket",
                        "--exit-on-stdin-eof",
                        "--test-unscoped-signals",
                        "--writable",
                    ],
                ]
                .concat(),
            )?;
            need_roots(&options)?;
            Ok(Invocation::Serve {
                socket: need_socket(socket)?,
                options,
                exit_on_stdin_eof,
            })
        }
        "stdio" => {
            only(&serve_flags)?;
            need_roots(&options)?;
            Ok(Invocation::Stdio { options })
        }
        "attach" => {
            only(&["--socket"])?;
            Ok(Invocation::Attach {
                socket: need_socket(socket)?,
            })
        }
        "self-check" => {
            only(&["--keep"])?;
            Ok(Invocation::SelfCheck { keep })
        }
        "help" | "--help" | "-h" => Ok(Invocation::Help),
        "--version" | "-V" => Ok(Invocation::Version),
        other => Err(UsageError(format!("unknown mode `{other}`"))),
    }
}

fn parse_root(text: &str) -> Result<(String, RootMode), UsageError> {
    let (path, mode) = text
        .rsplit_once(':')
        .ok_or_else(|| UsageError(format!("--root `{text}`: expected PATH:rw or PATH:ro")))?;
    let mode = RootMode::from_wire(mode).ok_or_else(|| {
        UsageError(format!(
            "--root `{text}`: the mode must be `rw` or `ro`, not `{mode}`"
        ))
    })?;
    if path.is_empty() {
        return Err(UsageError(format!("--root `{text}`: the path is empty")));
    }
    Ok((path.to_owned(), mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn parses_every_mode() {
        assert_eq!(
            parse(&args(
                "serve --socket /s --root /a:rw --root=/b:c:ro --cwd /a/x --max-timeout-ms 5 \
                 --writable /tmp --writable=/a"
            )),
            Ok(Invocation::Serve {
                socket: "/s".into(),
                options: ServeOptions {
                    roots: vec![
                        ("/a".into(), RootMode::ReadWrite),
                        ("/b:c".into(), RootMode::ReadOnly)
                    ],
                    cwd: Some("/a/x".into()),
                    max_timeout_ms: Some(5),
                    unscoped_signals: false,
                    writable: vec!["/tmp".into(), "/a".into()],
                },
                exit_on_stdin_eof: false,
            })
        );
        assert!(matches!(
            parse(&args("serve --socket /s --root /a:rw --test-unscoped-signals")),
            Ok(Invocation::Serve { options, .. }) if options.unscoped_signals
        ));
        assert_eq!(
            parse(&args("attach --socket /s")),
            Ok(Invocation::Attach {
                socket: "/s".into()
            })
        );
        assert_eq!(
            parse(&args("self-check --keep")),
            Ok(Invocation::SelfCheck { keep: true })
        );
        assert!(matches!(
            parse(&args("stdio --root /a:ro")),
            Ok(Invocation::Stdio { .. })
        ));
    }

    #[test]
    fn bad_command_lines_say_what_is_wrong() {
        for (line, message) in [
            ("", "no mode given"),
            ("fly", "unknown mode `fly`"),
            ("serve --root /a:rw", "serve needs --socket PATH"),
            (
                "stdio",
                "stdio needs at least one --root PATH:rw or --root PATH:ro",
            ),
            (
                "stdio --root /a",
                "--root `/a`: expected PATH:rw or PATH:ro",
            ),
            (
                "stdio --root /a:rx",
                "--root `/a:rx`: the mode must be `rw` or `ro`, not `rx`",
            ),
            (
                "stdio --root /a:rw --max-timeout-ms 0",
                "--max-timeout-ms: `0` is not a positive number of milliseconds",
            ),
            (
                "stdio --root /a:rw --socket /s",
                "--socket does not apply to stdio",
            ),
            (
                "stdio --root /a:rw --test-unscoped-signals",
                "--test-unscoped-signals does not apply to stdio",
            ),
            ("attach --socket", "--socket needs a value"),
            (
                "serve --socket /s --root /a:rw --writable tmp",
                "--writable `tmp`: the path must be absolute",
            ),
            (
                "stdio --root /a:rw --writable /tmp",
                "--writable does not apply to stdio",
            ),
            ("attach --socket /s --bogus", "unknown argument `--bogus`"),
        ] {
            assert_eq!(
                parse(&args(line)),
                Err(UsageError(message.into())),
                "{line}"
            );
        }
    }
}
