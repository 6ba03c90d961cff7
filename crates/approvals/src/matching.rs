//! How a rule's matcher is tested against a unit, an analysis or a file tool call, and when a
//! whole command counts as allowed.

use crate::analysis::{Analysis, Arg, Unit};
use crate::paths::{Grants, basename, glob_match, normalize};

/// Folders whose programs are the system's own: `/usr/bin/git` is `git` for an allow rule,
/// `./git` is not.
const SYSTEM_DIRS: &[&str] = &[
    "/usr/bin",
    "/bin",
    "/usr/local/bin",
    "/usr/sbin",
    "/sbin",
    "/usr/local/sbin",
];

/// Files a command may always write: they are not files.
const HARMLESS_WRITES: &[&str] = &[
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/1",
    "/dev/fd/2",
];

/// Matches simple commands by prefix and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommandMatcher {
    pub prefixes: Vec<Vec<String>>,
    pub with_any_flag: Vec<String>,
    pub with_any_arg: Vec<String>,
    pub with_arg_prefix: Vec<String>,
    pub excluding: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Matcher {
    Command(CommandMatcher),
    /// A program in `from` whose output reaches a program in `into`.
    Feeds {
        from: Vec<String>,
        into: Vec<String>,
    },
    /// Tools other than `run_bash`, optionally only on paths matching a glob.
    Tool {
        tools: Vec<String>,
        paths: Vec<String>,
    },
}

/// True when `arg` is the option `flag`: equal, `--flag=value`, or a short flag anywhere in a
/// single-dash argument (`-rf` holds `-r` and `-f`; `-o/etc/x` is `-o` with a value). Erring
/// towards "present" keeps exclusions and deny rules on the strict side.
pub(crate) fn arg_is_flag(arg: &str, flag: &str) -> bool {
    if arg == flag {
        return true;
    }
    if flag.starts_with("--") {
        return arg
            .strip_prefix(flag)
            .is_some_and(|rest| rest.starts_with('='));
    }
    let mut flag_chars = flag.chars();
    match (flag_chars.next(), flag_chars.next(), flag_chars.next()) {
        (Some('-'), Some(letter), None) if letter.is_ascii_alphanumeric() => {
            arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(letter)
        }
        _ => false,
    }
}

fn program_matches(program: &str, wanted: &str, strict: bool) -> bool {
    if !strict {
        return basename(program) == basename(wanted);
    }
    if program == wanted {
        return true;
    }
    // `/usr/bin/git` may stand for `git`, but only from the system's folders.
    !wanted.contains('/')
        && program.rsplit_once('/').is_some_and(|(dir, name)| {
            name == wanted && SYSTEM_DIRS.contains(&normalize(dir).as_str())
        })
}

impl CommandMatcher {
    /// Whether `unit` matches. `strict` (for allow decisions) also refuses a program run from an
    /// unknown folder, and unknown arguments when the rule excludes some.
    pub(crate) fn matches(&self, unit: &Unit, strict: bool) -> bool {
        let Some(program) = unit.program() else {
            return false;
        };
        let prefix_ok = self.prefixes.iter().any(|prefix| {
            unit.argv.len() >= prefix.len()
                && program_matches(program, &prefix[0], strict)
                && prefix[1..]
                    .iter()
                    .zip(&unit.argv[1..])
                    .all(|(want, arg)| arg.text.as_deref() == Some(want.as_str()))
        });
        if !prefix_ok {
            return false;
        }
        let args = &unit.argv[1..];
        let texts = || args.iter().filter_map(|a| a.text.as_deref());
        if !self.with_any_flag.is_empty()
            && !texts().any(|a| self.with_any_flag.iter().any(|f| arg_is_flag(a, f)))
        {
            return false;
        }
        if !self.with_any_arg.is_empty()
            && !args
                .iter()
                .any(|a| self.with_any_arg.iter().any(|v| arg_equals(a, v)))
        {
            return false;
        }
        if !self.with_arg_prefix.is_empty()
            && !args.iter().any(|a| {
                self.with_arg_prefix
                    .iter()
                    .any(|p| a.display.starts_with(p.as_str()))
            })
        {
            return false;
        }
        if texts().any(|a| self.excluding.iter().any(|f| arg_is_flag(a, f))) {
            return false;
        }
        if strict
            && !self.excluding.is_empty()
            && (unit.dynamic_tail || args.iter().any(|a| a.text.is_none()))
        {
            return false;
        }
        true
    }
}

fn arg_equals(arg: &Arg, value: &str) -> bool {
    if arg.display == value {
        return true;
    }
    match arg.text.as_deref() {
        Some(text) if text.starts_with('/') && value.starts_with('/') => {
            normalize(text) == normalize(value)
        }
        _ => false,
    }
}

impl Matcher {
    /// The units this matcher hits in a command, loosely (for deny and ask): their indices.
    pub(crate) fn hits(&self, analysis: &Analysis) -> Vec<usize> {
        match self {
            Matcher::Command(m) => analysis
                .units
                .iter()
                .enumerate()
                .filter(|(_, u)| m.matches(u, false))
                .map(|(i, _)| i)
                .collect(),
            Matcher::Feeds { from, into } => {
                let named = |i: usize, set: &[String]| {
                    analysis.units[i]
                        .program_name()
                        .is_some_and(|n| set.iter().any(|s| s == n))
                };
                let mut hit: Vec<usize> = analysis
                    .feeds
                    .iter()
                    .filter(|(a, b)| named(*a, from) && named(*b, into))
                    .map(|(_, b)| *b)
                    .collect();
                hit.dedup();
                hit
            }
            Matcher::Tool { .. } => Vec::new(),
        }
    }

    /// Whether this matcher approves `unit` for an allow decision.
    pub(crate) fn covers(&self, unit: &Unit) -> bool {
        match self {
            Matcher::Command(m) => m.matches(unit, true),
            Matcher::Feeds { .. } | Matcher::Tool { .. } => false,
        }
    }

    /// Whether this matcher hits a file tool call on `path` (normalised, absolute).
    pub(crate) fn hits_tool(&self, tool: &str, path: Option<&str>) -> bool {
        match self {
            Matcher::Tool { tools, paths } => {
                tools.iter().any(|t| t == tool)
                    && (paths.is_empty()
                        || path.is_some_and(|p| paths.iter().any(|g| glob_match(g, p))))
            }
            Matcher::Command(_) | Matcher::Feeds { .. } => false,
        }
    }
}

/// Checks that a whole command may run without asking, given which units are approved:
/// every unit approved and free of objections, every write inside a read-write grant, and
/// nothing in it that could not be read. The error says what stands in the way.
pub(crate) fn command_allowed(
    analysis: &Analysis,
    grants: &Grants,
    approved: impl Fn(&Unit) -> bool,
) -> Result<(), String> {
    if let Some(issue) = analysis.issues.first() {
        return Err(issue.clone());
    }
    if analysis.units.is_empty() {
        return Err("the command runs nothing".to_string());
    }
    for unit in &analysis.units {
        if let Some(reason) = unit.never_allow.first() {
            return Err(reason.clone());
        }
        if !unit.argv.is_empty() && !approved(unit) {
            let shown: Vec<&str> = unit.argv.iter().map(|a| a.display.as_str()).collect();
            return Err(format!("no rule allows `{}`", shown.join(" ")));
        }
    }
    for write in &analysis.writes {
        match &write.resolved {
            Some(path) if HARMLESS_WRITES.contains(&path.as_str()) || grants.is_writable(path) => {}
            Some(path) => {
                return Err(format!(
                    "it writes `{path}`, outside the session's read-write folders"
                ));
            }
            None => {
                return Err(format!(
                    "it writes `{}`, a path known only when the command runs",
                    write.display
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_match_in_clusters_and_with_values() {
        assert!(arg_is_flag("-rf", "-r"));
        assert!(arg_is_flag("-fr", "-r"));
        assert!(arg_is_flag("-r", "-r"));
        assert!(arg_is_flag("--output=x", "--output"));
        assert!(!arg_is_flag("--outputs", "--output"));
        assert!(!arg_is_flag("--recursive", "-r"));
        assert!(!arg_is_flag("-f", "-r"));
        assert!(
            arg_is_flag("-o/etc/x", "-o"),
            "an attached value still names the flag"
        );
    }

    #[test]
    fn strict_program_match_accepts_only_system_folders() {
        assert!(program_matches("git", "git", true));
        assert!(program_matches("/usr/bin/git", "git", true));
        assert!(program_matches("/usr/bin/../bin/git", "git", true));
        assert!(!program_matches("./git", "git", true));
        assert!(!program_matches("/tmp/git", "git", true));
        assert!(program_matches("/tmp/rm", "rm", false));
    }
}
