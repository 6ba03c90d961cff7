//! Reading git's configuration format closely enough to keep only allowed settings.
//!
//! A repository created during a session keeps its configuration only when every setting in
//! it is one `git init`, `git clone`, `git submodule` or `git worktree` writes; anything else
//! (a `core.fsmonitor`, a `core.hooksPath`, an alias, an `include`) is removed. The reader is
//! line-based and conservative: a line it does not understand is removed too, and so is
//! everything under a section header it cannot read (git would read it under that section).

/// Which subsection a key pattern accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Subsection {
    None,
    Any,
    Exact(String),
}

/// A setting's name as the list writes it: `core.bare`, `remote.*.url` (`*`: any subsection)
/// or `branch.main.merge`. Section and key are case-insensitive, as in git.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPattern {
    section: String,
    subsection: Subsection,
    key: String,
}

impl KeyPattern {
    /// Parses `section.key` or `section.sub.key`; an error says what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (section, rest) = text
            .split_once('.')
            .ok_or_else(|| format!("`{text}` is not `section.key`"))?;
        let (subsection, key) = match rest.rsplit_once('.') {
            None => (Subsection::None, rest),
            Some(("*", key)) => (Subsection::Any, key),
            Some((sub, key)) => (Subsection::Exact(sub.to_owned()), key),
        };
        if !valid_name(section) || !valid_name(key) {
            return Err(format!(
                "`{text}`: section and key are letters, digits and `-`"
            ));
        }
        Ok(Self {
            section: section.to_ascii_lowercase(),
            subsection,
            key: key.to_ascii_lowercase(),
        })
    }

    fn matches(&self, setting: &Setting<'_>) -> bool {
        self.section == setting.section
            && self.key == setting.key
            && match (&self.subsection, setting.subsection) {
                (Subsection::None, None) | (Subsection::Any, Some(_)) => true,
                (Subsection::Exact(a), Some(b)) => a == b,
                _ => false,
            }
    }
}

fn valid_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// What a configuration may keep, and what had to go.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConfigJudgement {
    /// The file without the removed lines (kept lines exactly as they were).
    pub kept: String,
    /// Settings removed (`core.fsmonitor`) and lines not understood (`line 7: …`).
    pub removed: Vec<String>,
}

impl ConfigJudgement {
    /// True when nothing had to be removed.
    pub fn is_clean(&self) -> bool {
        self.removed.is_empty()
    }
}

struct Setting<'a> {
    section: &'a str,
    subsection: Option<&'a str>,
    key: String,
}

/// `[section]`, `[section "sub"]` or the old `[section.sub]`; `None` when not understood or
/// followed by more than a comment.
fn header(line: &str) -> Option<(String, Option<String>)> {
    let inner = line.strip_prefix('[')?;
    let (section, rest) = match inner.find([' ', '\t', ']']) {
        Some(at) => inner.split_at(at),
        None => return None,
    };
    let (subsection, after) = if let Some(rest) = rest.trim_start().strip_prefix('"') {
        let mut sub = String::new();
        let mut chars = rest.chars();
        loop {
            match chars.next()? {
                '\\' => sub.push(chars.next()?),
                '"' => break,
                c => sub.push(c),
            }
        }
        let after = chars.as_str().strip_prefix(']')?;
        (Some(sub), after)
    } else {
        (None, rest.strip_prefix(']')?)
    };
    let trailing = after.trim();
    if !(trailing.is_empty() || trailing.starts_with('#') || trailing.starts_with(';')) {
        return None;
    }
    let (section, subsection) = match (section.split_once('.'), subsection) {
        (Some((section, sub)), None) => (section, Some(sub.to_ascii_lowercase())),
        (Some(_), Some(_)) => return None,
        (None, subsection) => (section, subsection),
    };
    valid_name(section).then(|| (section.to_ascii_lowercase(), subsection))
}

/// The key of a `key = value` line, and whether its value continues on the next line.
fn setting_line(line: &str) -> Option<(String, bool)> {
    let end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or(line.len());
    let (key, rest) = line.split_at(end);
    if !valid_name(key) {
        return None;
    }
    let rest = rest.trim_start();
    let value = match rest.strip_prefix('=') {
        Some(value) => value,
        None if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') => "",
        None => return None,
    };
    // A value ends at an unquoted comment; a backslash at the very end continues it.
    let mut quoted = false;
    let mut chars = value.chars();
    let mut continues = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '#' | ';' if !quoted => break,
            '\\' if chars.next().is_none() => continues = true,
            _ => {}
        }
    }
    Some((key.to_ascii_lowercase(), continues))
}

/// A setting's value as git reads it: surrounding blanks dropped, quotes removed, escapes
/// resolved, an unquoted comment cut. `None` for a value continued on the next line.
fn value_of(line: &str) -> Option<String> {
    let value = line.split_once('=').map_or("", |(_, v)| v).trim();
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '#' | ';' if !quoted => break,
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'b' => {
                    out.pop();
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    Some(if quoted {
        out
    } else {
        out.trim_end().to_owned()
    })
}

/// Every value `text` gives the settings matching `name` (`core.hooksPath`,
/// `includeIf.*.path`), in file order (git uses the last for single-valued settings). Lines
/// the reader does not understand are skipped.
pub fn setting_values(text: &str, name: &KeyPattern) -> Vec<String> {
    let mut values = Vec::new();
    let mut section: Option<(String, Option<String>)> = None;
    let mut continuing = false;
    for raw in text.lines() {
        let line = raw.trim();
        if continuing {
            continuing = line.ends_with('\\');
            continue;
        }
        if line.starts_with('[') {
            section = header(line);
            continue;
        }
        let Some((key, continues)) = setting_line(line) else {
            continue;
        };
        continuing = continues;
        let Some((s, sub)) = &section else {
            continue;
        };
        let setting = Setting {
            section: s,
            subsection: sub.as_deref(),
            key,
        };
        if !continues
            && name.matches(&setting)
            && let Some(value) = value_of(line)
        {
            values.push(value);
        }
    }
    values
}

/// Keeps the lines of `text` whose settings match one of `allowed`.
pub fn judge(text: &str, allowed: &[KeyPattern]) -> ConfigJudgement {
    let mut judgement = ConfigJudgement::default();
    // `None` before the first header and under one not understood: everything there goes.
    let mut section: Option<(String, Option<String>)> = None;
    let mut continuing = false;
    for (index, raw) in text.split_inclusive('\n').enumerate() {
        let line = raw.trim_start();
        if continuing {
            continuing = line.trim_end_matches(['\n', '\r']).ends_with('\\');
            continue;
        }
        let content = line.trim_end_matches(['\n', '\r']);
        if content.is_empty() || content.starts_with('#') || content.starts_with(';') {
            judgement.kept.push_str(raw);
            continue;
        }
        if content.starts_with('[') {
            match header(content) {
                Some(found) => {
                    section = Some(found);
                    judgement.kept.push_str(raw);
                }
                None => {
                    section = None;
                    judgement.removed.push(format!(
                        "line {}: a section header not understood",
                        index + 1
                    ));
                }
            }
            continue;
        }
        let Some((key, continues)) = setting_line(content) else {
            judgement
                .removed
                .push(format!("line {}: not a setting", index + 1));
            continue;
        };
        continuing = continues;
        let name = match &section {
            Some((s, Some(sub))) => format!("{s}.{sub}.{key}"),
            Some((s, None)) => format!("{s}.{key}"),
            None => format!("{key} (outside any section)"),
        };
        let setting = section.as_ref().map(|(s, sub)| Setting {
            section: s,
            subsection: sub.as_deref(),
            key: key.clone(),
        });
        let allowed = !continues
            && setting
                .as_ref()
                .is_some_and(|s| allowed.iter().any(|p| p.matches(s)));
        if allowed {
            judgement.kept.push_str(raw);
        } else {
            judgement.removed.push(name);
        }
    }
    judgement
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed() -> Vec<KeyPattern> {
        [
            "core.bare",
            "core.filemode",
            "remote.*.url",
            "branch.main.merge",
        ]
        .iter()
        .map(|k| KeyPattern::parse(k).unwrap())
        .collect()
    }

    #[test]
    fn a_fresh_repository_keeps_everything() {
        let text = "[core]\n\tbare = false\n\tfilemode = true\n[remote \"origin\"]\n\turl = https://example.com/r.git\n# note\n";
        let judged = judge(text, &allowed());
        assert!(judged.is_clean(), "{:?}", judged.removed);
        assert_eq!(judged.kept, text);
    }

    #[test]
    fn settings_that_run_programs_are_removed() {
        let text = "[core]\n\tbare = false\n\tfsmonitor = touch /tmp/x\n\tHooksPath = /p/planted\n[alias]\n\tst = !sh -c id\n[include]\n\tpath = /p/evil\n";
        let judged = judge(text, &allowed());
        assert_eq!(
            judged.removed,
            [
                "core.fsmonitor",
                "core.hookspath",
                "alias.st",
                "include.path"
            ]
        );
        assert_eq!(judged.kept, "[core]\n\tbare = false\n[alias]\n[include]\n");
    }

    #[test]
    fn what_is_not_understood_goes_with_everything_under_it() {
        let text = "[core] bare = true\n\tfsmonitor = x\n[core]\nbare\nfilemode = \"a\\\n\tcontinued\"\nnonsense line\n[branch \"main\"]\n\tmerge = refs/heads/main\n[branch \"Main\"]\n\tmerge = x\n";
        let judged = judge(text, &allowed());
        assert_eq!(
            judged.removed,
            [
                "line 1: a section header not understood",
                "fsmonitor (outside any section)",
                "core.filemode",
                "line 7: not a setting",
                "branch.Main.merge",
            ]
        );
        assert_eq!(
            judged.kept,
            "[core]\nbare\n[branch \"main\"]\n\tmerge = refs/heads/main\n[branch \"Main\"]\n"
        );
    }

    #[test]
    fn values_are_read_as_git_reads_them() {
        let text = "[core]\n\thooksPath = \"/p/my hooks\" # planted\n[core]\n\thookspath = .githooks ; later\n[includeIf \"gitdir:/p/\"]\n\tpath = ../extra.conf\n[include]\n\tpath = a\\\\b\n";
        let hooks = KeyPattern::parse("core.hooksPath").unwrap();
        assert_eq!(setting_values(text, &hooks), ["/p/my hooks", ".githooks"]);
        let includes = KeyPattern::parse("includeIf.*.path").unwrap();
        assert_eq!(setting_values(text, &includes), ["../extra.conf"]);
        let include = KeyPattern::parse("include.path").unwrap();
        assert_eq!(setting_values(text, &include), ["a\\b"]);
    }

    #[test]
    fn old_style_subsections_and_patterns() {
        let judged = judge("[remote.Origin]\nurl = x\n", &allowed());
        assert!(judged.is_clean(), "{:?}", judged.removed);
        assert!(KeyPattern::parse("core").is_err());
        assert!(KeyPattern::parse("core.has space").is_err());
        assert!(KeyPattern::parse("1core.x").is_err());
    }
}
