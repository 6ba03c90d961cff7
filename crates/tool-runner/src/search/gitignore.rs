//! `.gitignore` rules, as `gitignore(5)` describes them.
//!
//! * blank lines and lines starting with `#` are skipped; `\#` and `\!` start a pattern with
//!   a literal `#` or `!`; trailing spaces are dropped unless escaped (`\ `);
//! * `!pattern` re-includes what an earlier rule excluded (but nothing inside an excluded
//!   folder: the walker never enters one);
//! * a pattern with a `/` at its start or in its middle is anchored to the folder holding the
//!   `.gitignore`; one without matches a name at any depth below it;
//! * a trailing `/` matches folders only; `*`, `?`, `[...]` and `**` as in [`GlobPattern`];
//! * within a file the last matching rule wins, and a deeper `.gitignore` overrides the
//!   rules of the folders above it.
//!
//! Lines that do not parse (an unclosed `[`) are skipped, as git skips them.

use std::rc::Rc;

use super::glob_pattern::{GlobPattern, Syntax};

/// One rule of a `.gitignore` file.
#[derive(Clone, Debug)]
struct Rule {
    pattern: GlobPattern,
    /// `!pattern`: a match re-includes the path.
    negated: bool,
}

/// The rules of one `.gitignore` file, in file order.
#[derive(Clone, Debug, Default)]
pub struct Gitignore {
    rules: Vec<Rule>,
}

impl Gitignore {
    pub fn parse(content: &str) -> Self {
        let rules = content.lines().filter_map(parse_line).collect();
        Self { rules }
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The decision of the last rule matching the path (relative to this file's folder):
    /// `Some(true)` ignored, `Some(false)` re-included, `None` no rule matched.
    pub fn decide(&self, components: &[&str], is_dir: bool) -> Option<bool> {
        self.rules
            .iter()
            .rev()
            .find(|rule| rule.pattern.matches_components(components, is_dir))
            .map(|rule| !rule.negated)
    }
}

fn parse_line(line: &str) -> Option<Rule> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let line = trim_unescaped_trailing_spaces(line);
    let (negated, body) = match line.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    // `\#` and `\!` at the start are literal; the glob compiler reads the escape itself.
    if body.is_empty() {
        return None;
    }
    let without_trailing_slash = body.strip_suffix('/').unwrap_or(body);
    let anchored = without_trailing_slash.contains('/');
    let body = body.strip_prefix('/').unwrap_or(body);
    let pattern_text = if anchored {
        body.to_owned()
    } else {
        format!("**/{body}")
    };
    let pattern = GlobPattern::with_syntax(&pattern_text, Syntax::GITIGNORE).ok()?;
    Some(Rule { pattern, negated })
}

fn trim_unescaped_trailing_spaces(line: &str) -> &str {
    let mut end = line.len();
    while end > 0 && line.as_bytes()[end - 1] == b' ' {
        // Count the backslashes before this space: an odd number escapes it.
        let backslashes = line.as_bytes()[..end - 1]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if backslashes % 2 == 1 {
            break;
        }
        end -= 1;
    }
    &line[..end]
}

/// The `.gitignore` files that apply in one folder: its own, then its ancestors' (within
/// the walk's base), as a shared linked list.
#[derive(Clone, Debug)]
pub(crate) struct IgnoreStack {
    node: Option<Rc<IgnoreNode>>,
}

#[derive(Debug)]
struct IgnoreNode {
    /// How many path components lie between the walk's base and this file's folder.
    depth: usize,
    rules: Gitignore,
    parent: Option<Rc<IgnoreNode>>,
}

impl IgnoreStack {
    pub(crate) fn empty() -> Self {
        Self { node: None }
    }

    /// This stack with the rules of the folder at `depth` added on top.
    pub(crate) fn push(&self, depth: usize, rules: Gitignore) -> Self {
        if rules.is_empty() {
            return self.clone();
        }
        Self {
            node: Some(Rc::new(IgnoreNode {
                depth,
                rules,
                parent: self.node.clone(),
            })),
        }
    }

    /// True when the path (components relative to the walk's base) is ignored.
    pub(crate) fn is_ignored(&self, components: &[&str], is_dir: bool) -> bool {
        let mut node = self.node.as_deref();
        while let Some(current) = node {
            if let Some(relative) = components.get(current.depth..)
                && let Some(decision) = current.rules.decide(relative, is_dir)
            {
                return decision;
            }
            node = current.parent.as_deref();
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignored(rules: &Gitignore, path: &str, is_dir: bool) -> Option<bool> {
        let components: Vec<&str> = path.split('/').collect();
        rules.decide(&components, is_dir)
    }

    #[test]
    fn patterns_follow_gitignore_semantics() {
        let rules = Gitignore::parse(
            "# build output\n\
             target/\n\
             *.log\n\
             !keep.log\n\
             /root-only.txt\n\
             docs/*.tmp\n\
             **/cache/**\n\
             \\#not-a-comment\n\
             \\!bang\n\
             trailing-space\\ \n\
             spaces-dropped   \n\
             \n\
             [unclosed\n",
        );
        let cases: &[(&str, bool, Option<bool>)] = &[
            ("target", true, Some(true)),
            ("target", false, None),
            ("deep/target", true, Some(true)),
            ("app.log", false, Some(true)),
            ("logs/app.log", false, Some(true)),
            ("keep.log", false, Some(false)),
            ("logs/keep.log", false, Some(false)),
            ("root-only.txt", false, Some(true)),
            ("sub/root-only.txt", false, None),
            ("docs/a.tmp", false, Some(true)),
            ("docs/deeper/a.tmp", false, None),
            ("x/cache/y", false, Some(true)),
            ("x/cache", true, None),
            ("#not-a-comment", false, Some(true)),
            ("!bang", false, Some(true)),
            ("trailing-space ", false, Some(true)),
            ("spaces-dropped", false, Some(true)),
            ("main.rs", false, None),
        ];
        for &(path, is_dir, expected) in cases {
            assert_eq!(
                ignored(&rules, path, is_dir),
                expected,
                "{path} (dir: {is_dir})"
            );
        }
    }

    #[test]
    fn the_last_matching_rule_wins() {
        let rules = Gitignore::parse("*.txt\n!important.txt\nimportant.txt\n");
        assert_eq!(ignored(&rules, "important.txt", false), Some(true));
        let rules = Gitignore::parse("*.txt\n!important.txt\n");
        assert_eq!(ignored(&rules, "important.txt", false), Some(false));
    }

    #[test]
    fn deeper_files_override_shallower_ones() {
        let root = IgnoreStack::empty().push(0, Gitignore::parse("*.gen\n"));
        let nested = root.push(1, Gitignore::parse("!keep.gen\n"));
        assert!(nested.is_ignored(&["sub", "other.gen"], false));
        assert!(!nested.is_ignored(&["sub", "keep.gen"], false));
        // The nested file's rules do not apply to its parent folder's other files.
        assert!(root.is_ignored(&["keep.gen"], false));
        // Anchored rules of a nested file are relative to that file's folder.
        let anchored = root.push(1, Gitignore::parse("/local.txt\n"));
        assert!(anchored.is_ignored(&["sub", "local.txt"], false));
        assert!(!anchored.is_ignored(&["sub", "x", "local.txt"], false));
    }

    #[test]
    fn crlf_files_parse_like_lf_files() {
        let rules = Gitignore::parse("*.bak\r\n!x.bak\r\n");
        assert_eq!(ignored(&rules, "a.bak", false), Some(true));
        assert_eq!(ignored(&rules, "x.bak", false), Some(false));
    }
}
