//! Whether a command can be checked at all. What the checks cannot see through — code given
//! inline to an interpreter, a program read from input, a path known only when the command
//! runs, a script written earlier in the session — is "not understood", and `auto-in-sandbox`
//! asks about it instead of letting the wall's confinement decide alone.

use std::collections::BTreeSet;

use crate::analysis::Analysis;
use crate::safety::{may_write_args, unit_text};

/// Why a command cannot be checked (empty when it can).
pub(crate) fn not_understood(
    analysis: &Analysis,
    cwd: &str,
    written: &BTreeSet<String>,
) -> Vec<String> {
    let mut reasons: Vec<String> = Vec::new();
    let mut add = |reason: String| {
        if !reasons.contains(&reason) {
            reasons.push(reason);
        }
    };
    for write in &analysis.writes {
        if !write.unknown.is_empty() {
            add(format!(
                "it writes to `{}`, a path known only when it runs",
                write.display
            ));
        }
    }
    let written_now: BTreeSet<String> = analysis
        .writes
        .iter()
        .flat_map(|w| w.resolved.iter().chain(&w.candidates))
        .cloned()
        .collect();
    for unit in &analysis.units {
        for reason in &unit.opaque {
            add(reason.clone());
        }
        let name = unit.program_name();
        if unit.stdin_program && !unit.input_seen {
            add(format!(
                "`{}` runs a program read from its input, known only when it runs",
                name.unwrap_or("the shell")
            ));
        }
        let writes_paths = may_write_args(unit);
        if unit.dynamic_tail && writes_paths {
            add(format!(
                "`{}` is given paths known only when it runs (xargs, find -exec)",
                unit_text(unit)
            ));
        }
        if writes_paths {
            for arg in unit.argv.iter().skip(1) {
                if !arg.unknown.is_empty() {
                    add(format!(
                        "`{}` is given `{}`, known only when it runs",
                        unit_text(unit),
                        arg.display
                    ));
                }
            }
        }
        if let Some(file) = &unit.runs_file {
            if !file.is_known() {
                add(format!(
                    "it runs `{}`, a file known only when it runs",
                    file.display
                ));
            }
            let paths = analysis.resolve_all(cwd, file);
            if paths.iter().any(|p| written.contains(p)) {
                add(format!(
                    "it runs `{}`, written earlier in this session: what it does is not checked",
                    file.display
                ));
            } else if paths.iter().any(|p| written_now.contains(p)) {
                add(format!(
                    "it runs `{}`, which it writes itself: what that does is not checked",
                    file.display
                ));
            }
        }
    }
    reasons
}
