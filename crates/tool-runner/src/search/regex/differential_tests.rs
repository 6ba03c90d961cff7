//! Random small patterns and inputs: the Pike VM, the lazy DFA, the prefiltered line search
//! and a naive backtracking reference over the same parse tree must agree.

use super::ast::Node;
use super::charset::CharSet;
use super::pike::look_holds;
use super::*;

/// A deterministic xorshift generator (no dependencies, reproducible failures).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn random_pattern(rng: &mut Rng, depth: usize) -> String {
    let mut out = String::new();
    let items = 1 + rng.below(4);
    for _ in 0..items {
        let atom = match rng.below(if depth > 2 { 10 } else { 13 }) {
            0 | 1 => "a".to_owned(),
            2 => "b".to_owned(),
            3 => "c".to_owned(),
            4 => ".".to_owned(),
            5 => "[ab]".to_owned(),
            6 => "[^a]".to_owned(),
            7 => " ".to_owned(),
            8 => ["\\b", "^", "$", "\\B"][rng.below(4)].to_owned(),
            9 => "A".to_owned(),
            10 => format!("({})", random_pattern(rng, depth + 1)),
            11 => format!(
                "(?:{}|{})",
                random_pattern(rng, depth + 1),
                random_pattern(rng, depth + 1)
            ),
            _ => format!("(?i:{})", random_pattern(rng, depth + 1)),
        };
        let is_look = matches!(atom.as_str(), "\\b" | "^" | "$" | "\\B");
        out.push_str(&atom);
        if !is_look && rng.below(3) == 0 {
            let quantifier = ["*", "+", "?", "{0,2}", "{2}", "{1,}", "*?", "+?", "??"];
            out.push_str(quantifier[rng.below(quantifier.len())]);
        }
    }
    if depth == 0 && rng.below(5) == 0 {
        out = format!("{out}|{}", random_pattern(rng, 1));
    }
    out
}

fn random_input(rng: &mut Rng) -> String {
    let len = rng.below(12);
    (0..len)
        .map(|_| ['a', 'b', 'c', ' ', 'A', '\u{e9}'][rng.below(6)])
        .collect()
}

/// Backtracking over the parse tree with leftmost-first priorities (exponential in general;
/// fine for these sizes). `k` is the continuation: it receives the end of a match.
fn backtrack(node: &Node, text: &[char], pos: usize, k: &mut dyn FnMut(usize) -> bool) -> bool {
    match node {
        Node::Empty => k(pos),
        Node::Literal { c, fold } => {
            let set = if *fold {
                CharSet::single(*c).case_folded()
            } else {
                CharSet::single(*c)
            };
            pos < text.len() && set.contains(u32::from(text[pos])) && k(pos + 1)
        }
        Node::Class(set) => {
            pos < text.len()
                && text[pos] != '\n'
                && set.contains(u32::from(text[pos]))
                && k(pos + 1)
        }
        Node::Look(look) => {
            let prev = pos.checked_sub(1).map(|p| text[p]);
            let next = text.get(pos).copied();
            look_holds(*look, prev, next) && k(pos)
        }
        Node::Concat(items) => concat(items, text, pos, k),
        Node::Alternate(branches) => branches.iter().any(|b| backtrack(b, text, pos, k)),
        Node::Repeat {
            node,
            min,
            max,
            greedy,
        } => repeat(node, *min, *max, *greedy, 0, text, pos, k),
    }
}

fn concat(items: &[Node], text: &[char], pos: usize, k: &mut dyn FnMut(usize) -> bool) -> bool {
    match items.split_first() {
        None => k(pos),
        Some((first, rest)) => backtrack(first, text, pos, &mut |p| concat(rest, text, p, k)),
    }
}

#[allow(clippy::too_many_arguments)]
fn repeat(
    node: &Node,
    min: u32,
    max: Option<u32>,
    greedy: bool,
    count: u32,
    text: &[char],
    pos: usize,
    k: &mut dyn FnMut(usize) -> bool,
) -> bool {
    let can_more = max.is_none_or(|m| count < m);
    let more = |k: &mut dyn FnMut(usize) -> bool| {
        can_more
            && backtrack(node, text, pos, &mut |p| {
                // An empty iteration past the minimum cannot lead anywhere new.
                if p == pos && count >= min {
                    return false;
                }
                repeat(node, min, max, greedy, count + 1, text, p, k)
            })
    };
    // Lazy: try stopping first. Greedy: try another iteration first.
    if !greedy && count >= min && k(pos) {
        return true;
    }
    if more(k) {
        return true;
    }
    greedy && count >= min && k(pos)
}

fn reference_find(node: &Node, text: &str) -> Option<(usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let byte_at = |i: usize| chars[..i].iter().map(|c| c.len_utf8()).sum::<usize>();
    for start in 0..=chars.len() {
        let mut end = None;
        if backtrack(node, &chars, start, &mut |e| {
            end = Some(e);
            true
        }) {
            return end.map(|e| (byte_at(start), byte_at(e)));
        }
    }
    None
}

/// True when some repetition's body can match the empty string (where backtracking and
/// Pike VM priorities may legitimately pick different match ends).
fn has_nullable_loop(node: &Node) -> bool {
    fn nullable(node: &Node) -> bool {
        match node {
            Node::Empty | Node::Look(_) => true,
            Node::Literal { .. } | Node::Class(_) => false,
            Node::Concat(items) => items.iter().all(nullable),
            Node::Alternate(branches) => branches.iter().any(nullable),
            Node::Repeat { node, min, .. } => *min == 0 || nullable(node),
        }
    }
    match node {
        Node::Concat(items) | Node::Alternate(items) => items.iter().any(has_nullable_loop),
        Node::Repeat { node, .. } => nullable(node) || has_nullable_loop(node),
        _ => false,
    }
}

#[test]
fn engines_agree_with_a_backtracking_reference_on_random_patterns() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut checked = 0;
    for _ in 0..1500 {
        let pattern = random_pattern(&mut rng, 0);
        let node = parse::parse(&pattern, false)
            .unwrap_or_else(|e| panic!("generated pattern {pattern:?} should parse: {e}"));
        let regex = Regex::new(&pattern).unwrap();
        let mut searcher = regex.line_searcher();
        let inputs: Vec<String> = (0..12).map(|_| random_input(&mut rng)).collect();
        for input in &inputs {
            let expected = reference_find(&node, input);
            let found = regex.find(input).map(|r| (r.start, r.end));
            assert_eq!(
                found.is_some(),
                expected.is_some(),
                "Pike VM vs reference: {pattern:?} on {input:?}"
            );
            if !has_nullable_loop(&node) {
                assert_eq!(found, expected, "match range: {pattern:?} on {input:?}");
            }
            assert_eq!(
                searcher.is_match_line(input.as_bytes()),
                expected.is_some(),
                "DFA vs reference: {pattern:?} on {input:?}"
            );
            checked += 1;
        }
        let text = inputs.join("\n");
        let lines: Vec<usize> = searcher
            .matching_lines(text.as_bytes())
            .map(|r| text[..r.start].matches('\n').count())
            .collect();
        let expected_lines: Vec<usize> = inputs
            .iter()
            .enumerate()
            .filter(|(_, input)| reference_find(&node, input).is_some())
            .map(|(i, _)| i)
            .filter(|&i| i + 1 < inputs.len() || !inputs[i].is_empty())
            .collect();
        assert_eq!(
            lines,
            expected_lines,
            "matching lines of {pattern:?} in {text:?} (prefilter {:?})",
            regex.prefilter_strings()
        );
    }
    assert_eq!(checked, 1500 * 12);
}
