//! `paddock-wall`: the local wall's launcher. See the crate's README for the stages.
//!
//! ```text
//! paddock-wall outer [--cgroup PROCS_FILE]… [--uid UID --gid GID] [--grant FD:DEVICE:INODE:PATH]…
//!     [--protected FD:DEVICE:INODE:PATH]… -- PROGRAM [ARGS…]
//! paddock-wall inner --config FILE -- PROGRAM [ARGS…]
//! paddock-wall connect HOST PORT
//! paddock-wall probe
//! ```

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use paddock_wall::config::BRIDGE_PORT;
use paddock_wall::launch::{self, report};
use paddock_wall::{WallError, connect, probe};

/// Exit code when the wall itself failed (as opposed to the program it runs).
const WALL_FAILED: u8 = 126;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report(&e);
            ExitCode::from(WALL_FAILED)
        }
    }
}

fn usage(detail: &str) -> WallError {
    WallError::Config(format!(
        "{detail}\nusage: paddock-wall outer [--cgroup PROCS_FILE]… [--uid UID --gid GID] \
         [--grant FD:DEVICE:INODE:PATH]… [--protected FD:DEVICE:INODE:PATH]… -- PROGRAM \
         [ARGS…]\n       \
         paddock-wall inner --config FILE -- PROGRAM [ARGS…]\n       \
         paddock-wall connect HOST PORT\n       paddock-wall probe"
    ))
}

/// Splits `args` at the first `--` into options and the command after it.
fn split_command(args: &[OsString]) -> Result<(Vec<String>, &[OsString]), WallError> {
    let at = args
        .iter()
        .position(|a| a == "--")
        .ok_or_else(|| usage("missing `--` before the command"))?;
    let options = args[..at]
        .iter()
        .map(|a| {
            a.to_str()
                .map(str::to_owned)
                .ok_or_else(|| usage("an option is not UTF-8"))
        })
        .collect::<Result<_, _>>()?;
    Ok((options, &args[at + 1..]))
}

fn option(options: &[String], name: &str) -> Result<Option<String>, WallError> {
    match options.iter().position(|o| o == name) {
        None => Ok(None),
        Some(i) => options
            .get(i + 1)
            .cloned()
            .map(Some)
            .ok_or_else(|| usage(&format!("{name} needs a value"))),
    }
}

/// Every value of an option that may repeat.
fn every(options: &[String], name: &str) -> Result<Vec<String>, WallError> {
    let mut values = Vec::new();
    let mut rest = options.iter();
    while let Some(option) = rest.next() {
        if option == name {
            values.push(
                rest.next()
                    .cloned()
                    .ok_or_else(|| usage(&format!("{name} needs a value")))?,
            );
        }
    }
    Ok(values)
}

/// Every `FD:DEVICE:INODE:PATH` value of `name`.
fn pins(options: &[String], name: &str) -> Result<Vec<launch::GrantPin>, WallError> {
    every(options, name)?
        .iter()
        .map(|v| launch::GrantPin::parse(v).map_err(|e| usage(&format!("{name}: {e}"))))
        .collect()
}

fn number(options: &[String], name: &str) -> Result<Option<u32>, WallError> {
    option(options, name)?
        .map(|v| {
            v.parse()
                .map_err(|_| usage(&format!("{name} {v:?} is not a number")))
        })
        .transpose()
}

fn run(args: &[OsString]) -> Result<(), WallError> {
    let Some(mode) = args.first().and_then(|a| a.to_str()) else {
        return Err(usage("no mode given"));
    };
    let rest = &args[1..];
    match mode {
        "outer" => {
            let (options, command) = split_command(rest)?;
            let drop_to = match (number(&options, "--uid")?, number(&options, "--gid")?) {
                (Some(uid), Some(gid)) => Some((uid, gid)),
                (None, None) => None,
                _ => return Err(usage("--uid and --gid go together")),
            };
            let cgroups = every(&options, "--cgroup")?
                .into_iter()
                .map(PathBuf::from)
                .collect::<Vec<_>>();
            let grants = pins(&options, "--grant")?;
            let protected = pins(&options, "--protected")?;
            match launch::outer(&cgroups, drop_to, &grants, &protected, command)? {}
        }
        "inner" => {
            let (options, command) = split_command(rest)?;
            let config =
                option(&options, "--config")?.ok_or_else(|| usage("inner needs --config FILE"))?;
            match launch::inner(&PathBuf::from(config), command)? {}
        }
        "connect" => {
            let host = rest
                .first()
                .and_then(|h| h.to_str())
                .ok_or_else(|| usage("connect needs HOST PORT"))?;
            let port = rest
                .get(1)
                .and_then(|p| p.to_str())
                .and_then(|p| p.parse().ok())
                .ok_or_else(|| usage("connect needs a numeric PORT"))?;
            connect::run(host, port, BRIDGE_PORT)
        }
        "probe" => {
            let landlock = probe::landlock_abi().unwrap_or(0);
            let seccomp = match probe::seccomp_filtering() {
                Ok(()) => "ok".to_owned(),
                Err(e) => e,
            };
            #[allow(clippy::print_stdout, reason = "the probe's answer is its output")]
            {
                println!(
                    "{}",
                    serde_json::json!({ "landlock_abi": landlock, "seccomp": seccomp })
                );
            }
            Ok(())
        }
        other => Err(usage(&format!("unknown mode {other:?}"))),
    }
}
