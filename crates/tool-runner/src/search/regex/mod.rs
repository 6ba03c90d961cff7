//! A linear-time regular-expression engine for searching lines of text.
//!
//! A pattern is parsed ([`parse`]), compiled to a Thompson NFA ([`compile`]) and run either by
//! a lazy DFA (does a line match? one table lookup per byte) or by a Pike VM (where is the
//! leftmost match?). Neither backtracks, so the time is linear in the text for every pattern:
//! `(a*)*b` against thirty thousand `a`s costs what any other pattern costs.
//!
//! Before the automaton runs, a prefilter scans the whole buffer for a literal string that
//! every match must contain ([`literal`]), and only lines holding one are examined.
//!
//! The engine is line-oriented and UTF-8 aware: `.` and classes match one character (bytes
//! that are not valid UTF-8 each count as U+FFFD), no match contains a newline, and `^`/`$`
//! match at the start and end of each line. The syntax is described in [`parse`].

mod ast;
pub(crate) mod charset;
mod compile;
mod dfa;
mod literal;
pub(crate) mod memchr;
mod parse;
mod pike;
mod utf8;

use std::ops::Range;

pub use ast::{RegexError, RegexErrorKind};

use compile::Program;
use dfa::{Classes, LazyDfa};
use literal::Prefilter;
use memchr::LiteralFinder;
use pike::PikeVm;

/// The largest count a repetition `{m,n}` may name.
pub const MAX_REPEAT: u32 = 1000;
/// The deepest groups may nest.
pub const MAX_NESTING: usize = 128;
/// The most NFA instructions a pattern may compile to (this bounds nested repetitions such
/// as `(a{1000}){1000}`).
pub const MAX_PROGRAM_SIZE: usize = 100_000;

/// How a pattern is compiled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegexOptions {
    /// Match letters in either case (the same as starting the pattern with `(?i)`).
    pub case_insensitive: bool,
}

/// A compiled pattern. Immutable and shareable; searches keep their scratch state in a
/// [`LineSearcher`].
#[derive(Clone, Debug)]
pub struct Regex {
    pattern: String,
    program: Program,
    classes: Classes,
    prefilter: Option<Prefilter>,
}

impl Regex {
    pub fn new(pattern: &str) -> Result<Self, RegexError> {
        Self::with_options(pattern, RegexOptions::default())
    }

    pub fn with_options(pattern: &str, options: RegexOptions) -> Result<Self, RegexError> {
        let node = parse::parse(pattern, options.case_insensitive)?;
        let program = compile::compile(&node)?;
        let classes = Classes::new(&program);
        Ok(Self {
            pattern: pattern.to_owned(),
            prefilter: literal::prefilter(&node),
            program,
            classes,
        })
    }

    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// True when some line of `text` matches. The lines are the pieces between newlines, so
    /// an empty text is one empty line, and so is the end of a text ending with a newline.
    pub fn is_match(&self, text: &str) -> bool {
        let mut searcher = self.line_searcher();
        if searcher.matching_lines(text.as_bytes()).next().is_some() {
            return true;
        }
        (text.is_empty() || text.ends_with('\n')) && searcher.is_match_line(b"")
    }

    /// The byte range of the leftmost-first match in `text` (greedy and lazy repetitions
    /// choose as in Perl), found by the Pike VM.
    pub fn find(&self, text: &str) -> Option<Range<usize>> {
        PikeVm::new(&self.program)
            .find(text.as_bytes())
            .map(|(start, end)| start..end)
    }

    /// Scratch state for searching many buffers with this pattern.
    pub fn line_searcher(&self) -> LineSearcher<'_> {
        let finders = self
            .prefilter
            .iter()
            .flat_map(|p| {
                p.strings
                    .iter()
                    .map(|s| LiteralFinder::new(s, p.ignore_case))
            })
            .collect();
        LineSearcher {
            dfa: LazyDfa::new(&self.program, &self.classes),
            finders,
            prefilter_is_exact: self.prefilter.as_ref().is_some_and(|p| p.exact),
        }
    }

    /// This pattern with the literal prefilter turned off, so every line goes through the
    /// automaton (for measurements and tests; the answers are the same).
    pub fn without_prefilter(mut self) -> Self {
        self.prefilter = None;
        self
    }

    /// The literal strings the prefilter scans for (lower-cased when it ignores case).
    pub fn prefilter_strings(&self) -> Vec<String> {
        self.prefilter
            .iter()
            .flat_map(|p| p.strings.iter())
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect()
    }
}

/// Finds matching lines in byte buffers for one [`Regex`]; keeps the DFA's state cache, so
/// reuse one searcher for many buffers.
pub struct LineSearcher<'r> {
    dfa: LazyDfa<'r>,
    finders: Vec<LiteralFinder>,
    prefilter_is_exact: bool,
}

impl<'r> LineSearcher<'r> {
    /// The matching lines of `buf`, in order, as byte ranges without their newline.
    pub fn matching_lines<'s, 'b>(&'s mut self, buf: &'b [u8]) -> MatchingLines<'s, 'r, 'b> {
        let next_hits = vec![NextHit::default(); self.finders.len()];
        MatchingLines {
            searcher: self,
            buf,
            pos: 0,
            next_hits,
        }
    }

    /// True when `line` (which holds no newline) matches.
    pub fn is_match_line(&mut self, line: &[u8]) -> bool {
        self.dfa.is_match_line(line)
    }

    #[cfg(test)]
    pub(crate) fn dfa_steps(&self) -> (u64, u64) {
        (self.dfa.steps, self.dfa.cache_clears)
    }
}

/// Where a prefilter string was last found, so it is not searched for twice.
#[derive(Clone, Copy, Debug, Default)]
struct NextHit {
    /// The search started here ...
    searched_from: usize,
    /// ... and found the string here (`None`: not at all).
    found: Option<usize>,
    valid: bool,
}

/// Iterator over the matching lines of one buffer; see [`LineSearcher::matching_lines`].
pub struct MatchingLines<'s, 'r, 'b> {
    searcher: &'s mut LineSearcher<'r>,
    buf: &'b [u8],
    /// The start of the first line not yet examined.
    pos: usize,
    next_hits: Vec<NextHit>,
}

impl MatchingLines<'_, '_, '_> {
    /// The first offset at or after `self.pos` where some prefilter string starts.
    fn next_literal(&mut self) -> Option<usize> {
        let mut first: Option<usize> = None;
        for (finder, hit) in self.searcher.finders.iter().zip(self.next_hits.iter_mut()) {
            let fresh = hit.valid
                && hit.searched_from <= self.pos
                && hit.found.is_none_or(|at| at >= self.pos);
            if !fresh {
                *hit = NextHit {
                    searched_from: self.pos,
                    found: finder.find(self.buf, self.pos),
                    valid: true,
                };
            }
            if let Some(at) = hit.found {
                first = Some(first.map_or(at, |f| f.min(at)));
            }
        }
        first
    }
}

impl Iterator for MatchingLines<'_, '_, '_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        let buf = self.buf;
        if self.pos >= buf.len() {
            return None;
        }
        if self.searcher.finders.is_empty() {
            let (start, end) = self.searcher.dfa.find_line(buf, self.pos)?;
            self.pos = end + 1;
            return Some(start..end);
        }
        loop {
            let hit = self.next_literal()?;
            let start = memchr::rfind_byte(buf, hit, b'\n').map_or(0, |nl| nl + 1);
            let start = start.max(self.pos);
            let end = memchr::find_byte(buf, hit, b'\n').unwrap_or(buf.len());
            self.pos = end + 1;
            if self.searcher.prefilter_is_exact || self.searcher.dfa.is_match_line(&buf[start..end])
            {
                return Some(start..end);
            }
            if self.pos >= buf.len() {
                return None;
            }
        }
    }
}

#[cfg(test)]
#[path = "regex_tests.rs"]
mod regex_tests;

#[cfg(test)]
#[path = "oracle_tests.rs"]
mod oracle_tests;

#[cfg(test)]
#[path = "differential_tests.rs"]
mod differential_tests;
