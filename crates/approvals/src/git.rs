//! Reading a `git` command line the way git does: global options first (`-C DIR`, `-c
//! key=value`, `--git-dir`, `--work-tree`, …), then the subcommand and its arguments. The
//! safety checks use it to find `git config` wherever it sits, `git init --template`, and the
//! folder relative paths are taken from.

use crate::analysis::{Analysis, Arg, Unit};

/// Global options that take a value (as the next word, or after `=` for long ones).
const WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--exec-path",
    "--list-cmds",
    "--attr-source",
];

/// Global options without a value.
const FLAGS: &[&str] = &[
    "-p",
    "--paginate",
    "-P",
    "--no-pager",
    "--bare",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
    "--no-advice",
    "--html-path",
    "--man-path",
    "--info-path",
    "-v",
    "--version",
    "-h",
    "--help",
];

/// Configuration keys that make `git init`/`git clone` copy hooks or set programs in the
/// repository they create.
const TEMPLATE_KEYS: &[&str] = &["init.templatedir"];

/// A git command line, read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct GitCall {
    /// Index in `argv` of the subcommand, when there is one.
    pub subcommand: Option<usize>,
    /// The folders of `-C` options, in order (each relative to the one before).
    pub dirs: Vec<Arg>,
    /// `-c key=value` settings (as written).
    pub settings: Vec<Arg>,
    /// A global option that is not understood (or known only at run time).
    pub not_understood: Option<String>,
}

/// Reads a `git` unit's global options.
pub(crate) fn read(unit: &Unit) -> GitCall {
    let mut call = GitCall::default();
    let argv = &unit.argv;
    let mut i = 1;
    while let Some(arg) = argv.get(i) {
        let Some(text) = arg.text.as_deref() else {
            call.not_understood = Some(format!("`{}` is known only at run time", arg.display));
            return call;
        };
        if !text.starts_with('-') {
            call.subcommand = Some(i);
            return call;
        }
        let (name, attached) = match text.split_once('=') {
            Some((name, _)) if text.starts_with("--") => (name, true),
            _ => (text, false),
        };
        if FLAGS.contains(&name) {
            i += 1;
        } else if WITH_VALUE.contains(&name) {
            let value = if attached {
                Arg::literal(&text[name.len() + 1..])
            } else {
                match argv.get(i + 1) {
                    Some(value) => value.clone(),
                    None => return call,
                }
            };
            match name {
                "-C" => call.dirs.push(value),
                "-c" => call.settings.push(value),
                _ => {}
            }
            i += if attached { 1 } else { 2 };
        } else if let Some(dir) = text.strip_prefix("-C").filter(|d| !d.is_empty()) {
            call.dirs.push(Arg::literal(dir));
            i += 1;
        } else if let Some(setting) = text.strip_prefix("-c").filter(|s| !s.is_empty()) {
            call.settings.push(Arg::literal(setting));
            i += 1;
        } else {
            call.not_understood = Some(format!("git's option `{text}` is not understood"));
            return call;
        }
    }
    call
}

impl GitCall {
    /// The subcommand's name (`config`, `init`), when known.
    pub(crate) fn name<'a>(&self, unit: &'a Unit) -> Option<&'a str> {
        self.subcommand
            .and_then(|i| unit.argv.get(i))
            .and_then(|a| a.text.as_deref())
    }

    /// The subcommand's arguments.
    pub(crate) fn args<'a>(&self, unit: &'a Unit) -> &'a [Arg] {
        match self.subcommand {
            Some(i) => &unit.argv[i + 1..],
            None => &[],
        }
    }

    /// The folder relative paths are read from: `cwd` changed by each `-C`; `None` when a
    /// `-C` folder is known only at run time.
    pub(crate) fn folder(&self, analysis: &Analysis, cwd: &str) -> Option<String> {
        let mut folder = cwd.to_owned();
        for dir in &self.dirs {
            folder = analysis.resolve_arg(&folder, dir)?;
        }
        Some(folder)
    }

    /// Whether the command makes a repository from a template (`git init --template=…`,
    /// `-c init.templateDir=…`, `GIT_TEMPLATE_DIR`), which copies the template's hooks in.
    pub(crate) fn uses_template(&self, unit: &Unit) -> bool {
        if !matches!(self.name(unit), Some("init" | "clone")) {
            return false;
        }
        let setting_is_template = |text: &str| {
            text.split_once('=')
                .is_some_and(|(key, _)| TEMPLATE_KEYS.contains(&key.to_ascii_lowercase().as_str()))
        };
        let option = self.args(unit).iter().enumerate().any(|(i, arg)| {
            let Some(text) = arg.text.as_deref() else {
                return false;
            };
            text == "--template"
                || text.starts_with("--template=")
                || (matches!(text, "-c" | "--config")
                    && self.args(unit)[i + 1..]
                        .first()
                        .and_then(|a| a.text.as_deref())
                        .is_some_and(setting_is_template))
                || text
                    .strip_prefix("--config=")
                    .is_some_and(setting_is_template)
        });
        option
            || self
                .settings
                .iter()
                .any(|s| s.text.as_deref().is_none_or(setting_is_template))
            || unit.env.iter().any(|name| name == "GIT_TEMPLATE_DIR")
    }

    /// Whether a `git clone` sets configuration in the repository it makes (`-c`/`--config`).
    pub(crate) fn clone_sets_config(&self, unit: &Unit) -> bool {
        self.name(unit) == Some("clone")
            && self.args(unit).iter().any(|arg| {
                arg.text
                    .as_deref()
                    .is_some_and(|t| t == "-c" || t == "--config" || t.starts_with("--config="))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::analyze;
    use crate::shell;

    fn git(source: &str) -> (Analysis, GitCall) {
        let analysis = analyze(&shell::parse(source).unwrap(), "/p");
        let call = read(&analysis.units[0]);
        (analysis, call)
    }

    #[test]
    fn global_options_are_read_before_the_subcommand() {
        let (a, call) = git("git -C sub -c color.ui=never --git-dir=.git --no-pager config x y");
        assert_eq!(call.name(&a.units[0]), Some("config"));
        assert_eq!(call.folder(&a, "/p").as_deref(), Some("/p/sub"));
        assert_eq!(call.settings.len(), 1);
        let (a, call) = git("git -C a -C b status");
        assert_eq!(call.folder(&a, "/p").as_deref(), Some("/p/a/b"));
        let (a, call) = git("git --exec-path=/x --bare log");
        assert_eq!(call.name(&a.units[0]), Some("log"));
        let (_, call) = git("git --frobnicate status");
        assert!(call.not_understood.is_some());
    }

    #[test]
    fn templates_are_seen_every_way_they_can_be_given() {
        for source in [
            "git init --template=tpl",
            "git init --template tpl",
            "git -c init.templateDir=tpl init",
            "git clone --template=tpl https://x/r.git",
            "git clone -c init.templateDir=tpl https://x/r.git",
            "GIT_TEMPLATE_DIR=tpl git init",
        ] {
            let (a, call) = git(source);
            assert!(call.uses_template(&a.units[0]), "{source}");
        }
        let (a, call) = git("git init -q fresh");
        assert!(!call.uses_template(&a.units[0]));
        let (a, call) = git("git clone -c core.hooksPath=x https://x/r.git");
        assert!(call.clone_sets_config(&a.units[0]));
    }
}
