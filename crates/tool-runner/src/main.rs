//! `tool-runner`: see `tool-runner --help` and the crate README.

mod cli;
mod modes;
mod self_check;

use std::process::ExitCode;

use cli::Invocation;

fn main() -> ExitCode {
    let mut args = Vec::new();
    for arg in std::env::args_os().skip(1) {
        match arg.into_string() {
            Ok(arg) => args.push(arg),
            Err(arg) => {
                return usage_error(&format!("argument {arg:?} is not UTF-8"));
            }
        }
    }
    let invocation = match cli::parse(&args) {
        Ok(invocation) => invocation,
        Err(e) => return usage_error(&e.0),
    };
    let outcome = match invocation {
        Invocation::Serve {
            socket,
            options,
            exit_on_stdin_eof,
        } => modes::serve(&socket, &options, exit_on_stdin_eof).map(|()| ExitCode::SUCCESS),
        Invocation::Stdio { options } => modes::stdio(&options).map(|()| ExitCode::SUCCESS),
        Invocation::Attach { socket } => modes::attach(&socket).map(|()| ExitCode::SUCCESS),
        Invocation::SelfCheck { keep } => self_check::run(keep),
        Invocation::Help => {
            print_help();
            Ok(ExitCode::SUCCESS)
        }
        Invocation::Version => {
            print_version();
            Ok(ExitCode::SUCCESS)
        }
    };
    outcome.unwrap_or_else(|e| {
        modes::diagnostic(&e.0);
        ExitCode::FAILURE
    })
}

fn usage_error(message: &str) -> ExitCode {
    modes::diagnostic(&format!("{message}\n\n{}", cli::USAGE));
    ExitCode::from(2)
}

#[allow(
    clippy::print_stdout,
    reason = "--help prints to stdout; no protocol runs in this mode"
)]
fn print_help() {
    print!("{}", cli::USAGE);
}

#[allow(
    clippy::print_stdout,
    reason = "--version prints to stdout; no protocol runs in this mode"
)]
fn print_version() {
    println!(
        "tool-runner {} (protocol {}, {})",
        env!("CARGO_PKG_VERSION"),
        tool_protocol::PROTOCOL_VERSION,
        tool_runner::build_id::of_this_executable()
    );
}
