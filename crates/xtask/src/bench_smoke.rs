//! `cargo xtask bench-smoke`: re-measures the headline ratios of `docs/performance.md` in one
//! run and fails only when one regresses past its stated margin.
//!
//! Each benchmark, given `-- --smoke`, takes fewer samples and prints its ratio on a line
//! `ratio: <name> = <value>`; every ratio compares two things measured in the same run, so
//! load from other processes falls on both. The tool-runner benches build in the bench profile
//! (the search code as it ships); the sandbox-provider ones in the dev profile, so they reuse
//! the test build (their figures are dominated by processes the tests built anyway).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::tasks;

/// Which way a ratio may move before the smoke fails.
#[derive(Clone, Copy)]
enum Bound {
    /// Fails below this.
    AtLeast(f64),
    /// Fails above this.
    AtMost(f64),
}

/// One guarded ratio: its `ratio:` name, what it compares, the target the doc states, and the
/// bound the smoke enforces (the target with a margin for a shared 2-core machine).
struct Guard {
    name: &'static str,
    what: &'static str,
    target: &'static str,
    bound: Bound,
}

/// The guarded ratios, quoted by the headline table of `docs/performance.md`.
const GUARDS: &[Guard] = &[
    Guard {
        name: "runner.spawn_over_call",
        what: "`bash -c 'cat FILE'` per call / runner `read_file` 4 KiB, p50",
        target: ">= 10x",
        bound: Bound::AtLeast(5.0),
    },
    Guard {
        name: "grep.literal",
        what: "runner grep / GNU grep (faster locale), `PADDOCK_NEEDLE`",
        target: "<= 1.0x",
        bound: Bound::AtMost(1.3),
    },
    Guard {
        name: "grep.regex_with_literal",
        what: "runner grep / GNU grep (faster locale), `fn \\w+_handler\\(`",
        target: "<= 1.0x",
        bound: Bound::AtMost(1.3),
    },
    Guard {
        name: "grep.regex_without_literal",
        what: "runner grep / GNU grep (faster locale), date regex",
        target: "<= 1.0x",
        bound: Bound::AtMost(1.3),
    },
    Guard {
        name: "local_wall.start_over_bare_bwrap",
        what: "local wall start with attestation / bare `bwrap true`, p50",
        target: "<= 12x",
        bound: Bound::AtMost(20.0),
    },
    Guard {
        name: "openshell.exec_over_attached",
        what: "one `ExecSandbox` per call / attached stream call, median",
        target: ">= 10x",
        bound: Bound::AtLeast(5.0),
    },
];

/// Runs the smoke; `Err` names every ratio past its bound (or missing).
pub fn bench_smoke() -> Result<(), String> {
    let started = Instant::now();
    let (runner, wall) = tasks::built_binaries()?;
    let mut lines = Vec::new();
    let mut tool_runner = tasks::cargo();
    tool_runner.args([
        "bench",
        "--locked",
        "-p",
        "tool-runner",
        "--bench",
        "runner",
        "--bench",
        "grep",
        "--",
        "--smoke",
    ]);
    let mut sandbox_provider = tasks::cargo();
    sandbox_provider.args([
        "bench",
        "--locked",
        "--profile",
        "dev",
        // The workspace's feature resolution (the benches are in `sandbox-provider`), so the
        // test build's artifacts are reused instead of compiling the graph again.
        "--workspace",
        "--bench",
        "local_wall",
        "--bench",
        "openshell_roundtrip",
        "--",
        "--smoke",
    ]);
    for mut command in [tool_runner, sandbox_provider] {
        command
            .env("PADDOCK_TOOL_RUNNER", &runner)
            .env("PADDOCK_WALL", &wall);
        lines.extend(run_capturing(command)?);
    }
    let figures = parse_ratios(&lines);
    let verdicts = judge(&figures);
    println!(
        "\nbench smoke: headline ratios (docs/performance.md), {:.0} s including builds",
        started.elapsed().as_secs_f64()
    );
    for verdict in &verdicts {
        println!("  {verdict}");
    }
    let failed: Vec<&String> = verdicts.iter().filter(|v| v.starts_with("FAIL")).collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} ratio(s) past their margin:\n  {}",
            failed.len(),
            failed
                .iter()
                .map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join("\n  ")
        ))
    }
}

/// Runs `command`, echoing its stdout line by line, and returns those lines.
fn run_capturing(mut command: Command) -> Result<Vec<String>, String> {
    let shown = format!("{command:?}").replace('"', "");
    println!("$ {shown}");
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {shown}: {e}"))?;
    let mut lines = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| format!("reading the output of {shown}: {e}"))?;
            println!("{line}");
            lines.push(line);
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for {shown}: {e}"))?;
    if status.success() {
        Ok(lines)
    } else {
        Err(format!("{shown} failed ({status})"))
    }
}

/// The `ratio: <name> = <value>` lines of a run.
fn parse_ratios(lines: &[String]) -> Vec<(String, f64)> {
    lines
        .iter()
        .filter_map(|line| {
            let (name, value) = line.strip_prefix("ratio: ")?.split_once(" = ")?;
            Some((name.trim().to_owned(), value.trim().parse().ok()?))
        })
        .collect()
}

/// One line per guard: `ok` or `FAIL`, the figure, the bound and the target.
fn judge(figures: &[(String, f64)]) -> Vec<String> {
    GUARDS
        .iter()
        .map(|guard| {
            let figure = figures
                .iter()
                .find(|(name, _)| name == guard.name)
                .map(|&(_, value)| value);
            let Some(value) = figure else {
                return format!("FAIL {}: no figure printed ({})", guard.name, guard.what);
            };
            let (passes, bound) = match guard.bound {
                Bound::AtLeast(limit) => (value >= limit, format!("fails below {limit}x")),
                Bound::AtMost(limit) => (value <= limit, format!("fails above {limit}x")),
            };
            format!(
                "{} {:<34} {value:>7.2}x  (target {}, {bound}): {}",
                if passes { "ok  " } else { "FAIL" },
                guard.name,
                guard.target,
                guard.what
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_read_from_their_lines_only() {
        let lines: Vec<String> = [
            "  persistent runner vs spawn  17.1x faster at p50",
            "ratio: runner.spawn_over_call = 17.10",
            "ratio: grep.literal = 0.84",
            "ratio: broken = fast",
        ]
        .map(str::to_owned)
        .to_vec();
        assert_eq!(
            parse_ratios(&lines),
            [
                ("runner.spawn_over_call".to_owned(), 17.1),
                ("grep.literal".to_owned(), 0.84)
            ]
        );
    }

    #[test]
    fn a_ratio_past_its_bound_or_missing_fails() {
        let mut figures: Vec<(String, f64)> = GUARDS
            .iter()
            .map(|g| {
                let passing = match g.bound {
                    Bound::AtLeast(limit) => limit * 2.0,
                    Bound::AtMost(limit) => limit / 2.0,
                };
                (g.name.to_owned(), passing)
            })
            .collect();
        assert!(judge(&figures).iter().all(|v| v.starts_with("ok")));
        figures[0].1 = 1.0; // a spawn barely slower than a runner call
        figures.retain(|(name, _)| name != "grep.literal");
        let verdicts = judge(&figures);
        let failed: Vec<&String> = verdicts.iter().filter(|v| v.starts_with("FAIL")).collect();
        assert_eq!(failed.len(), 2, "{verdicts:#?}");
        assert!(failed[0].contains("runner.spawn_over_call"));
        assert!(failed[1].contains("grep.literal: no figure printed"));
    }
}
