//! Glob patterns matched against `/`-separated relative paths.
//!
//! * `*` matches any run of characters within one path component (it never crosses `/`),
//!   leading dots included;
//! * `**` as a whole component matches any number of folders: `**/x` finds `x` at any depth,
//!   `a/**/b` allows zero or more folders between, and a trailing `a/**` matches everything
//!   inside `a` (not `a` itself). Elsewhere (`a**b`) it is an ordinary `*`;
//! * `?` matches one character; `[abc]`, `[a-z]`, `[!a-z]` (or `[^a-z]`) and `[[:alpha:]]`
//!   match one character of a set;
//! * `{a,b}` matches either alternative (nested braces allowed) unless the syntax turns braces
//!   off (`.gitignore` has none);
//! * `\` makes the next character literal; a trailing `/` matches folders only; `.`
//!   components and repeated slashes are ignored.
//!
//! Tool patterns are relative to a base folder: one that starts with `/` or holds a `..`
//! component is refused, so a pattern can never name a path outside its base.
//!
//! Matching walks the components once, tracking the set of pattern positions still alive, so
//! its cost is O(components × segments) and never exponential.

use std::fmt;

use super::regex::charset::{self, CharSet};

/// Brace expansion may produce at most this many alternatives.
const MAX_ALTERNATIVES: usize = 256;
/// A pattern may have at most this many components (they are tracked in a 64-bit set).
const MAX_SEGMENTS: usize = 63;

/// Why a glob pattern was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobError {
    pub pattern: String,
    pub reason: String,
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid glob `{}`: {}", self.pattern, self.reason)
    }
}

impl std::error::Error for GlobError {}

/// Which dialect a pattern is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Syntax {
    /// `{a,b}` alternatives (tool globs); off for `.gitignore`, where braces are literal.
    pub(crate) braces: bool,
    /// Refuse a leading `/` and `..` components (tool globs, relative to a base folder).
    pub(crate) relative_only: bool,
}

impl Syntax {
    pub(crate) const TOOL: Syntax = Syntax {
        braces: true,
        relative_only: true,
    };
    pub(crate) const GITIGNORE: Syntax = Syntax {
        braces: false,
        relative_only: false,
    };
}

/// One character position of a component pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Char(char),
    /// `?`
    AnyChar,
    /// `*`
    Star,
    Class(CharSet),
}

/// How one component is matched (the common shapes get a fast path).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Component {
    Literal(String),
    /// `*suffix`
    Suffix(String),
    /// `prefix*`
    Prefix(String),
    /// `*`
    Any,
    Tokens(Vec<Token>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    /// `**`: zero or more whole components.
    AnyDirs,
    One(Component),
}

/// One brace alternative, compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Alternative {
    segments: Vec<Segment>,
    dir_only: bool,
}

/// A compiled glob pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobPattern {
    source: String,
    alternatives: Vec<Alternative>,
}

impl GlobPattern {
    /// Compiles a tool pattern (braces on; refuses a leading `/` and `..` components).
    pub fn new(pattern: &str) -> Result<Self, GlobError> {
        Self::with_syntax(pattern, Syntax::TOOL)
    }

    pub(crate) fn with_syntax(pattern: &str, syntax: Syntax) -> Result<Self, GlobError> {
        let error = |reason: String| GlobError {
            pattern: pattern.to_owned(),
            reason,
        };
        if pattern.is_empty() {
            return Err(error("the pattern is empty".to_owned()));
        }
        if syntax.relative_only && pattern.starts_with('/') {
            return Err(error(
                "it starts with `/`; patterns are relative to the base folder (`path`)".to_owned(),
            ));
        }
        let expanded = if syntax.braces {
            expand_braces(pattern).map_err(error)?
        } else {
            vec![pattern.to_owned()]
        };
        let mut alternatives = Vec::with_capacity(expanded.len());
        for text in &expanded {
            alternatives.push(compile_alternative(text, syntax).map_err(error)?);
        }
        Ok(Self {
            source: pattern.to_owned(),
            alternatives,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// True when the relative path (components separated by `/`) matches; `is_dir` tells
    /// whether it names a folder (patterns ending in `/` match folders only).
    pub fn matches(&self, path: &str, is_dir: bool) -> bool {
        let components: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
        self.matches_components(&components, is_dir)
    }

    pub(crate) fn matches_components(&self, components: &[&str], is_dir: bool) -> bool {
        self.alternatives.iter().any(|alternative| {
            (is_dir || !alternative.dir_only)
                && alive_after(&alternative.segments, components)
                    .is_some_and(|alive| alive & (1u64 << alternative.segments.len()) != 0)
        })
    }

    /// True when some path strictly inside the folder `components` could match (a walker
    /// descends only into such folders).
    pub(crate) fn could_match_inside(&self, components: &[&str]) -> bool {
        self.alternatives.iter().any(|alternative| {
            let end = 1u64 << alternative.segments.len();
            alive_after(&alternative.segments, components).is_some_and(|alive| alive & !end != 0)
        })
    }
}

/// The set of pattern positions alive after matching `components` (bit `i`: the next
/// component must match segment `i`; bit `len`: the pattern is complete). `None` when none.
fn alive_after(segments: &[Segment], components: &[&str]) -> Option<u64> {
    let mut alive = closure(segments, 1);
    for component in components {
        let mut next = 0u64;
        for (i, segment) in segments.iter().enumerate() {
            if alive & (1u64 << i) == 0 {
                continue;
            }
            match segment {
                Segment::AnyDirs => next |= 1u64 << i,
                Segment::One(pattern) => {
                    if component_matches(pattern, component) {
                        next |= 1u64 << (i + 1);
                    }
                }
            }
        }
        alive = closure(segments, next);
        if alive == 0 {
            return None;
        }
    }
    Some(alive)
}

/// Adds the positions reachable by letting `**` match zero components.
fn closure(segments: &[Segment], mut alive: u64) -> u64 {
    for (i, segment) in segments.iter().enumerate() {
        if alive & (1u64 << i) != 0 && *segment == Segment::AnyDirs {
            alive |= 1u64 << (i + 1);
        }
    }
    alive
}

fn component_matches(pattern: &Component, name: &str) -> bool {
    match pattern {
        Component::Literal(literal) => name == literal,
        Component::Suffix(suffix) => name.ends_with(suffix.as_str()),
        Component::Prefix(prefix) => name.starts_with(prefix.as_str()),
        Component::Any => true,
        Component::Tokens(tokens) => tokens_match(tokens, name),
    }
}

/// Wildcard matching within one component: `*` backtracks only to the last star, so the cost
/// is O(pattern × name).
fn tokens_match(tokens: &[Token], name: &str) -> bool {
    let mut t = 0;
    let mut n = 0;
    // The last star seen and the name offset it currently absorbs up to.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        let Some(c) = name[n..].chars().next() else {
            break;
        };
        let single = match tokens.get(t) {
            Some(Token::Char(expected)) => *expected == c,
            Some(Token::AnyChar) => true,
            Some(Token::Class(set)) => set.contains(u32::from(c)),
            Some(Token::Star) | None => false,
        };
        if single {
            t += 1;
            n += c.len_utf8();
        } else if tokens.get(t) == Some(&Token::Star) {
            star = Some((t, n));
            t += 1;
        } else if let Some((star_token, star_name)) = star {
            let absorbed = name[star_name..].chars().next().map_or(1, char::len_utf8);
            star = Some((star_token, star_name + absorbed));
            t = star_token + 1;
            n = star_name + absorbed;
        } else {
            return false;
        }
    }
    tokens[t..].iter().all(|token| *token == Token::Star)
}

/// Expands `{a,b}` alternatives (nested allowed; escaped braces and braces inside `[...]` are
/// literal). A brace with no matching `}` is an error.
fn expand_braces(pattern: &str) -> Result<Vec<String>, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let Some(open) = find_open_brace(&chars) else {
        return Ok(vec![pattern.to_owned()]);
    };
    let mut depth = 0;
    let mut commas = Vec::new();
    let mut close = None;
    let mut i = open;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' => i = skip_bracket(&chars, i),
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            ',' if depth == 1 => commas.push(i),
            _ => {}
        }
        i += 1;
    }
    let Some(close) = close else {
        return Err(format!("unclosed `{{` at {open}"));
    };
    let prefix: String = chars[..open].iter().collect();
    let suffix: String = chars[close + 1..].iter().collect();
    let mut bounds = vec![open];
    bounds.extend(commas);
    bounds.push(close);
    let mut out = Vec::new();
    for window in bounds.windows(2) {
        let choice: String = chars[window[0] + 1..window[1]].iter().collect();
        for expanded in expand_braces(&format!("{prefix}{choice}{suffix}"))? {
            out.push(expanded);
            if out.len() > MAX_ALTERNATIVES {
                return Err(format!(
                    "braces expand to more than {MAX_ALTERNATIVES} alternatives"
                ));
            }
        }
    }
    Ok(out)
}

fn find_open_brace(chars: &[char]) -> Option<usize> {
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' => i = skip_bracket(chars, i),
            '{' => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the `]` closing the bracket expression at `open`, or `open` when unclosed.
fn skip_bracket(chars: &[char], open: usize) -> usize {
    let mut i = open + 1;
    if matches!(chars.get(i), Some('!' | '^')) {
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' if chars.get(i + 1) == Some(&':') => {
                if let Some(end) = (i + 2..chars.len().saturating_sub(1))
                    .find(|&j| chars[j] == ':' && chars[j + 1] == ']')
                {
                    i = end + 1;
                }
            }
            ']' => return i,
            _ => {}
        }
        i += 1;
    }
    open
}

fn compile_alternative(text: &str, syntax: Syntax) -> Result<Alternative, String> {
    let dir_only = text.ends_with('/') && !text.ends_with("\\/");
    let raw: Vec<&str> = text
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    if raw.is_empty() {
        return Err("the pattern names no path component".to_owned());
    }
    let mut segments = Vec::with_capacity(raw.len() + 1);
    for (index, component) in raw.iter().enumerate() {
        if syntax.relative_only && *component == ".." {
            return Err(
                "it has a `..` component; a pattern cannot leave its base folder".to_owned(),
            );
        }
        if *component == "**" {
            if segments.last() == Some(&Segment::AnyDirs) {
                continue;
            }
            if index + 1 == raw.len() {
                // A trailing `**` matches everything inside: at least one more component.
                segments.push(Segment::One(Component::Any));
            }
            segments.push(Segment::AnyDirs);
        } else {
            segments.push(Segment::One(compile_component(component)?));
        }
    }
    if segments.len() > MAX_SEGMENTS {
        return Err(format!("it has more than {MAX_SEGMENTS} components"));
    }
    Ok(Alternative { segments, dir_only })
}

fn compile_component(text: &str) -> Result<Component, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let Some(&escaped) = chars.get(i + 1) else {
                    return Err(format!("it ends with a lone `\\` in `{text}`"));
                };
                tokens.push(Token::Char(escaped));
                i += 2;
                continue;
            }
            '*' => {
                if tokens.last() != Some(&Token::Star) {
                    tokens.push(Token::Star);
                }
            }
            '?' => tokens.push(Token::AnyChar),
            '[' => {
                let (set, next) = parse_bracket(&chars, i)
                    .ok_or_else(|| format!("unclosed `[` in `{text}`"))??;
                tokens.push(Token::Class(set));
                i = next;
                continue;
            }
            _ => tokens.push(Token::Char(c)),
        }
        i += 1;
    }
    Ok(simplify(tokens))
}

/// Picks a fast path for the common shapes.
fn simplify(tokens: Vec<Token>) -> Component {
    let literal = |slice: &[Token]| -> Option<String> {
        slice
            .iter()
            .map(|token| match token {
                Token::Char(c) => Some(*c),
                _ => None,
            })
            .collect()
    };
    match tokens.as_slice() {
        [Token::Star] => Component::Any,
        [Token::Star, rest @ ..] if literal(rest).is_some() => {
            Component::Suffix(literal(rest).unwrap_or_default())
        }
        [rest @ .., Token::Star] if literal(rest).is_some() => {
            Component::Prefix(literal(rest).unwrap_or_default())
        }
        all => match literal(all) {
            Some(text) => Component::Literal(text),
            None => Component::Tokens(tokens),
        },
    }
}

/// Parses `[...]` at `open`: the set and the index after `]`; `None` when unclosed.
fn parse_bracket(chars: &[char], open: usize) -> Option<Result<(CharSet, usize), String>> {
    let mut i = open + 1;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut set = CharSet::empty();
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        if c == '[' && chars.get(i + 1) == Some(&':') {
            let end = (i + 2..chars.len().saturating_sub(1))
                .find(|&j| chars[j] == ':' && chars[j + 1] == ']');
            if let Some(end) = end {
                let name: String = chars[i + 2..end].iter().collect();
                match charset::posix_class(&name) {
                    Some(class) => set.union(&class),
                    None => return Some(Err(format!("unknown class `[:{name}:]`"))),
                }
                i = end + 2;
                continue;
            }
        }
        let (low, after_low) = bracket_char(chars, i)?;
        i = after_low;
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&n| n != ']') {
            let (high, after_high) = bracket_char(chars, i + 1)?;
            if high < low {
                return Some(Err(format!("range `{low}-{high}` is reversed")));
            }
            set.add_range(u32::from(low), u32::from(high));
            i = after_high;
        } else {
            set.add_char(low);
        }
    }
    Some(Ok((if negated { set.negated() } else { set }, i)))
}

/// One (possibly escaped) character inside brackets, and the index after it.
fn bracket_char(chars: &[char], i: usize) -> Option<(char, usize)> {
    match chars.get(i)? {
        '\\' => chars.get(i + 1).map(|&c| (c, i + 2)),
        &c => Some((c, i + 1)),
    }
}

#[cfg(test)]
#[path = "glob_pattern_tests.rs"]
mod tests;
