//! Shell variables a command sets before it uses them (`d=.git; echo > "$d/hooks/x"`), so the
//! checks see the paths they name. Values are tracked as sets: an assignment in a branch, a
//! loop or a subshell adds to what a variable may hold, never replaces it, so the checks
//! consider every value a run could see. What cannot be known (a value from `$(…)`, `read`,
//! an argument, the environment) makes the word unknown.

use std::collections::BTreeMap;

use crate::shell::{Word, WordPart};

/// Most values one word may expand to before it counts as unknown.
const MAX_VALUES: usize = 16;

/// What a variable may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    Known(Vec<String>),
    Unknown,
}

/// The variables of one command, as far as they are known before it runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Vars {
    map: BTreeMap<String, Value>,
}

/// A word with its variables expanded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Expanded {
    /// Every text the word may stand for (empty when a part is unknown).
    pub values: Vec<String>,
    /// What makes it unknown (`$X`, `$(…)`), empty when every part is known.
    pub unknown: Vec<String>,
    /// A variable was expanded (so the word is not literal text).
    pub expanded: bool,
    /// An unquoted expansion whose value holds blanks or glob characters: the shell would
    /// split or glob it, so no single text stands for it.
    pub splits: bool,
    /// The word names the home folder (`~`, `$HOME`).
    pub home: bool,
}

/// `$NAME` or `${NAME}` → `NAME`; anything more elaborate (`${X:-y}`, `$1`) → `None`.
fn simple_name(text: &str) -> Option<&str> {
    let name = text
        .strip_prefix("${")
        .and_then(|t| t.strip_suffix('}'))
        .or_else(|| text.strip_prefix('$'))?;
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
    valid.then_some(name)
}

impl Vars {
    /// Records that `name` may hold `value` (unknown when `None`).
    pub(crate) fn assign(&mut self, name: &str, value: Option<Vec<String>>) {
        let entry = self
            .map
            .entry(name.to_owned())
            .or_insert(Value::Known(Vec::new()));
        match (entry, value) {
            (Value::Known(values), Some(new)) => {
                for v in new {
                    if !values.contains(&v) {
                        values.push(v);
                    }
                }
                if values.len() > MAX_VALUES {
                    self.map.insert(name.to_owned(), Value::Unknown);
                }
            }
            (entry, _) => *entry = Value::Unknown,
        }
    }

    /// Expands a word's variables, tilde and simple brace alternatives.
    pub(crate) fn expand(&self, word: &Word) -> Expanded {
        let mut out = Expanded {
            values: vec![String::new()],
            ..Expanded::default()
        };
        let push_all = |values: &mut Vec<String>, text: &str| {
            for v in values.iter_mut() {
                v.push_str(text);
            }
        };
        for part in &word.parts {
            match part {
                WordPart::Literal { text, .. } | WordPart::Glob { text } => {
                    push_all(&mut out.values, text);
                }
                WordPart::Tilde { user } if user.is_empty() => {
                    out.home = true;
                    push_all(&mut out.values, "~");
                }
                WordPart::Parameter { text, quoted } => {
                    let Some(name) = simple_name(text) else {
                        out.unknown.push(text.clone());
                        continue;
                    };
                    if name == "HOME" {
                        out.home = true;
                        push_all(&mut out.values, "~");
                        continue;
                    }
                    match self.map.get(name) {
                        Some(Value::Known(values)) if !values.is_empty() => {
                            out.expanded = true;
                            if !quoted
                                && values.iter().any(|v| {
                                    v.is_empty() || v.contains([' ', '\t', '\n', '*', '?', '['])
                                })
                            {
                                out.splits = true;
                            }
                            let mut next = Vec::new();
                            for prefix in &out.values {
                                for value in values {
                                    next.push(format!("{prefix}{value}"));
                                }
                            }
                            if next.len() > MAX_VALUES {
                                out.unknown.push(format!("${name}"));
                            }
                            out.values = next;
                        }
                        _ => out.unknown.push(format!("${name}")),
                    }
                }
                WordPart::Brace { text } => {
                    let inner = text.strip_prefix('{').and_then(|t| t.strip_suffix('}'));
                    match inner.filter(|i| i.contains(',') && !i.contains(['{', '}', '$'])) {
                        Some(inner) => {
                            let mut next = Vec::new();
                            for prefix in &out.values {
                                for alt in inner.split(',') {
                                    next.push(format!("{prefix}{alt}"));
                                }
                            }
                            out.values = next;
                            out.splits = true;
                        }
                        None => out.unknown.push(text.clone()),
                    }
                }
                WordPart::Tilde { user } => out.unknown.push(format!("~{user}")),
                WordPart::CommandSubstitution { .. } => out.unknown.push("$(…)".to_owned()),
                WordPart::ProcessSubstitution { .. } => out.unknown.push("<(…)".to_owned()),
                WordPart::Arithmetic { text } => out.unknown.push(text.clone()),
            }
        }
        if !out.unknown.is_empty() || out.values.len() > MAX_VALUES {
            out.values.clear();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell;

    fn word(source: &str) -> Word {
        let script = shell::parse(&format!("echo {source}")).unwrap();
        match &script.items[0].and_or.first.commands[0] {
            shell::Command::Simple(simple) => simple.words[1].clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn known_variables_expand_and_unknown_ones_say_so() {
        let mut vars = Vars::default();
        vars.assign("d", Some(vec![".git".into()]));
        let e = vars.expand(&word("\"$d/hooks/x\""));
        assert_eq!(e.values, [".git/hooks/x"]);
        assert!(e.expanded && !e.splits && e.unknown.is_empty());
        let e = vars.expand(&word("${d}/config"));
        assert_eq!(e.values, [".git/config"]);
        vars.assign("d", Some(vec!["src".into()]));
        let e = vars.expand(&word("$d/x"));
        assert_eq!(e.values, [".git/x", "src/x"], "every value a run could see");
        let e = vars.expand(&word("$OTHER/x"));
        assert!(e.values.is_empty());
        assert_eq!(e.unknown, ["$OTHER"]);
        let e = vars.expand(&word("${d:-x}"));
        assert_eq!(e.unknown, ["${d:-x}"]);
        vars.assign("u", None);
        assert_eq!(vars.expand(&word("$u")).unknown, ["$u"]);
    }

    #[test]
    fn home_braces_and_splitting() {
        let mut vars = Vars::default();
        let e = vars.expand(&word("~/.bashrc"));
        assert!(e.home);
        assert_eq!(e.values, ["~/.bashrc"]);
        let e = vars.expand(&word("$HOME/.zshrc"));
        assert!(e.home);
        assert_eq!(e.values, ["~/.zshrc"]);
        let e = vars.expand(&word(".git/{hooks,info}/x"));
        assert_eq!(e.values, [".git/hooks/x", ".git/info/x"]);
        vars.assign("s", Some(vec!["a b".into()]));
        assert!(vars.expand(&word("$s")).splits);
        assert!(!vars.expand(&word("\"$s\"")).splits);
    }
}
