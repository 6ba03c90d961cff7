//! Finds literal strings a pattern's matches must contain, for the prefilter.
//!
//! For each node the analysis knows, when it can, the small set of strings the node matches
//! (`exact`), and a set of strings one of which occurs in every match (`required`). A search
//! then scans the text for those strings and runs the automaton only on lines holding one.

use super::ast::Node;
use super::charset::case_variants;
use super::utf8::REPLACEMENT;

/// Sets larger than this are forgotten (too many strings to scan for).
const MAX_SET: usize = 16;
/// Strings longer than this stop growing.
const MAX_LEN: usize = 64;
/// The prefilter scans for at most this many strings.
const MAX_PREFILTER_STRINGS: usize = 4;

/// One character of a literal; `fold` when it matches its other case too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LitChar {
    c: char,
    fold: bool,
}

type Lit = Vec<LitChar>;

#[derive(Clone, Debug, Default)]
struct Facts {
    /// Every string the node can match, when known and small.
    exact: Option<Vec<Lit>>,
    /// Strings (none empty) one of which occurs in every match, when known.
    required: Option<Vec<Lit>>,
}

/// The strings a prefilter should scan for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Prefilter {
    /// UTF-8 bytes of each string, lower-cased when `ignore_case`.
    pub(crate) strings: Vec<Vec<u8>>,
    /// Scan ignoring ASCII case (some character of the pattern folds case).
    pub(crate) ignore_case: bool,
    /// True when a line holding one of the strings always matches: the pattern is nothing but
    /// these alternatives, with no assertion and no case-sensitive letter under `ignore_case`.
    pub(crate) exact: bool,
}

/// The prefilter for a parsed pattern, if one helps.
pub(crate) fn prefilter(node: &Node) -> Option<Prefilter> {
    let facts = facts(node);
    let exact_set = facts
        .exact
        .clone()
        .filter(|set| set.iter().all(|lit| !lit.is_empty()));
    let chosen = best([exact_set.clone(), facts.required])?;
    if chosen.len() > MAX_PREFILTER_STRINGS {
        return None;
    }
    let ignore_case = chosen.iter().flatten().any(|lc| lc.fold);
    let case_sensitive_letter = chosen
        .iter()
        .flatten()
        .any(|lc| !lc.fold && case_variants(lc.c).nth(1).is_some());
    let exact = exact_set.as_ref() == Some(&chosen)
        && !has_look(node)
        && !(ignore_case && case_sensitive_letter);
    let strings = chosen
        .iter()
        .map(|lit| {
            let text: String = lit.iter().map(|lc| lc.c).collect();
            if ignore_case {
                text.to_ascii_lowercase().into_bytes()
            } else {
                text.into_bytes()
            }
        })
        .collect();
    Some(Prefilter {
        strings,
        ignore_case,
        exact,
    })
}

fn has_look(node: &Node) -> bool {
    match node {
        Node::Look(_) => true,
        Node::Concat(items) | Node::Alternate(items) => items.iter().any(has_look),
        Node::Repeat { node, .. } => has_look(node),
        Node::Empty | Node::Literal { .. } | Node::Class(_) => false,
    }
}

fn facts(node: &Node) -> Facts {
    match node {
        Node::Empty | Node::Look(_) => Facts {
            exact: Some(vec![Vec::new()]),
            required: None,
        },
        Node::Literal { c: '\n', .. } => Facts {
            // The engine never matches a newline: this node matches nothing.
            exact: Some(Vec::new()),
            required: None,
        },
        Node::Literal { c: REPLACEMENT, .. } => {
            // U+FFFD also stands for bytes that are not UTF-8, which a byte scan for its
            // encoding would miss: it ends a literal.
            Facts::default()
        }
        Node::Literal { c, fold } => {
            if *fold && !c.is_ascii() {
                // The scan folds ASCII only; other case-folded characters end a literal.
                return Facts::default();
            }
            Facts {
                exact: Some(vec![vec![LitChar { c: *c, fold: *fold }]]),
                required: None,
            }
        }
        Node::Class(set) => {
            if set.len() > 4 || set.contains(u32::from(REPLACEMENT)) {
                return Facts::default();
            }
            let chars: Vec<Lit> = set
                .ranges()
                .iter()
                .flat_map(|&(low, high)| low..=high)
                .filter_map(char::from_u32)
                .filter(|&c| c != '\n')
                .map(|c| vec![LitChar { c, fold: false }])
                .collect();
            Facts {
                exact: Some(chars),
                required: None,
            }
        }
        Node::Concat(items) => concat_facts(items),
        Node::Alternate(branches) => alternate_facts(branches),
        Node::Repeat { node, min, max, .. } => {
            let inner = facts(node);
            if *min == 0 {
                let exact = match (max, inner.exact) {
                    (Some(1), Some(mut set)) if set.len() < MAX_SET => {
                        set.push(Vec::new());
                        Some(set)
                    }
                    _ => None,
                };
                return Facts {
                    exact,
                    required: None,
                };
            }
            let required = best([non_empty(inner.exact.clone()), inner.required]);
            let exact = match (max, inner.exact) {
                (Some(max), Some(set)) if max == min && *min <= 4 => {
                    let mut product = Some(vec![Vec::new()]);
                    for _ in 0..*min {
                        product = product.and_then(|p| cross(&p, &set));
                    }
                    product
                }
                _ => None,
            };
            Facts { exact, required }
        }
    }
}

fn concat_facts(items: &[Node]) -> Facts {
    let mut candidates = Vec::new();
    let mut run: Option<Vec<Lit>> = Some(vec![Vec::new()]);
    let mut all_exact = true;
    for item in items {
        let item_facts = facts(item);
        candidates.push(item_facts.required);
        match (&run, item_facts.exact) {
            (Some(current), Some(exact)) => match cross(current, &exact) {
                Some(product) => run = Some(product),
                None => {
                    // Too many or too long: close this run and start a new one here.
                    candidates.push(non_empty(run.take()));
                    all_exact = false;
                    run = Some(exact);
                }
            },
            (None, Some(exact)) => run = Some(exact),
            (_, None) => {
                candidates.push(non_empty(run.take()));
                all_exact = false;
                run = Some(vec![Vec::new()]);
            }
        }
    }
    let exact = if all_exact { run.clone() } else { None };
    candidates.push(non_empty(run));
    Facts {
        exact,
        required: best(candidates),
    }
}

fn alternate_facts(branches: &[Node]) -> Facts {
    let all: Vec<Facts> = branches.iter().map(facts).collect();
    let exact = all
        .iter()
        .map(|f| f.exact.clone())
        .collect::<Option<Vec<_>>>()
        .map(|sets| sets.concat())
        .filter(|set| set.len() <= MAX_SET);
    let required = all
        .into_iter()
        .map(|f| best([non_empty(f.exact), f.required]))
        .collect::<Option<Vec<_>>>()
        .map(|sets| sets.concat())
        .filter(|set| set.len() <= MAX_SET);
    Facts { exact, required }
}

/// Every concatenation of a string of `left` with a string of `right`, unless too large.
fn cross(left: &[Lit], right: &[Lit]) -> Option<Vec<Lit>> {
    if left.len() * right.len() > MAX_SET {
        return None;
    }
    let mut out = Vec::with_capacity(left.len() * right.len());
    for l in left {
        for r in right {
            if l.len() + r.len() > MAX_LEN {
                return None;
            }
            let mut joined = l.clone();
            joined.extend_from_slice(r);
            if !out.contains(&joined) {
                out.push(joined);
            }
        }
    }
    Some(out)
}

/// `set`, unless it holds the empty string (which every text contains: useless to scan for).
fn non_empty(set: Option<Vec<Lit>>) -> Option<Vec<Lit>> {
    set.filter(|set| !set.is_empty() && set.iter().all(|lit| !lit.is_empty()))
}

/// The most selective candidate: the longest shortest string, then the fewest strings.
fn best(candidates: impl IntoIterator<Item = Option<Vec<Lit>>>) -> Option<Vec<Lit>> {
    candidates
        .into_iter()
        .flatten()
        .filter(|set| !set.is_empty() && set.iter().all(|lit| !lit.is_empty()))
        .max_by_key(|set| {
            let shortest = set.iter().map(Vec::len).min().unwrap_or(0);
            (shortest.min(8), std::cmp::Reverse(set.len()), shortest)
        })
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    fn strings(pattern: &str, ignore_case: bool) -> Option<(Vec<String>, bool, bool)> {
        let node = parse(pattern, ignore_case).unwrap();
        prefilter(&node).map(|p| {
            let strings = p
                .strings
                .iter()
                .map(|s| String::from_utf8(s.clone()).unwrap())
                .collect();
            (strings, p.ignore_case, p.exact)
        })
    }

    fn owned(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn plain_literals_are_exact() {
        assert_eq!(
            strings("hello", false),
            Some((owned(&["hello"]), false, true))
        );
        assert_eq!(
            strings("Hello", true),
            Some((owned(&["hello"]), true, true))
        );
        assert_eq!(
            strings("foo|bar", false),
            Some((owned(&["foo", "bar"]), false, true))
        );
        assert_eq!(
            strings("colou?r", false),
            Some((owned(&["colour", "color"]), false, true))
        );
    }

    #[test]
    fn required_substrings_need_verification() {
        assert_eq!(
            strings(r"fn \w+\(", false),
            Some((owned(&["fn "]), false, false))
        );
        assert_eq!(
            strings(r"\d+ apples", false),
            Some((owned(&[" apples"]), false, false))
        );
        assert_eq!(
            strings("^main$", false),
            Some((owned(&["main"]), false, false))
        );
        assert_eq!(
            strings("(?i:a)bc", false),
            Some((owned(&["abc"]), true, false))
        );
        assert_eq!(
            strings("(error|warn)ing: .*", false),
            Some((owned(&["erroring: ", "warning: "]), false, false))
        );
    }

    #[test]
    fn patterns_without_a_useful_literal_have_no_prefilter() {
        assert_eq!(strings(r"\w+", false), None);
        assert_eq!(strings("a*", false), None);
        assert_eq!(strings("x|.", false), None);
        assert_eq!(strings("a|b|c|d|e", false), None);
        // Case-folded non-ASCII letters end a literal: only the folded ASCII `t` remains.
        assert_eq!(
            strings("(?i)\u{e9}t\u{e9}", false),
            Some((owned(&["t"]), true, false))
        );
    }
}
