//! The parsed form of a pattern, and the errors parsing and compiling can give.

use std::fmt;

use super::charset::CharSet;

/// A zero-width assertion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Look {
    /// `^`: the start of a line.
    LineStart,
    /// `$`: the end of a line.
    LineEnd,
    /// `\b`: a word character on exactly one side.
    WordBoundary,
    /// `\B`: word characters on both sides or on neither.
    NotWordBoundary,
    /// `\<`: a word character after, none before.
    WordStart,
    /// `\>`: a word character before, none after.
    WordEnd,
}

/// A node of the parsed pattern. Groups leave no node of their own: the engine reports whole
/// matches only, so `(a)` and `(?:a)` both parse to `a`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    /// Matches the empty string (an empty pattern, branch or group).
    Empty,
    /// One character; `fold` when it was written under case-insensitive matching.
    Literal {
        c: char,
        fold: bool,
    },
    /// One character of a set (already case-folded and negated as written).
    Class(CharSet),
    Look(Look),
    Concat(Vec<Node>),
    Alternate(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
        greedy: bool,
    },
}

/// Why a pattern was refused, and where (a 0-based character offset into the pattern).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegexError {
    pub position: usize,
    pub kind: RegexErrorKind,
}

/// What was wrong with a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegexErrorKind {
    UnclosedGroup,
    UnmatchedCloseParen,
    UnclosedClass,
    /// A class range whose end comes before its start, such as `z-a`.
    ReversedClassRange {
        start: char,
        end: char,
    },
    UnknownPosixClass(String),
    /// `*`, `+`, `?` or `{…}` with nothing before it to repeat.
    NothingToRepeat,
    UnclosedRepetition,
    /// `{n,m}` with `n > m`.
    ReversedRepetition {
        min: u32,
        max: u32,
    },
    /// A repetition count above [`MAX_REPEAT`](super::MAX_REPEAT).
    RepetitionTooLarge {
        count: u64,
    },
    TrailingBackslash,
    UnknownEscape(char),
    BadHexEscape,
    Backreference,
    UnknownFlag(char),
    UnclosedFlags,
    /// Groups nested deeper than [`MAX_NESTING`](super::MAX_NESTING).
    NestingTooDeep,
    /// The compiled program would exceed [`MAX_PROGRAM_SIZE`](super::MAX_PROGRAM_SIZE)
    /// (the error's position is 0: the size is a property of the whole pattern).
    TooLarge,
}

impl fmt::Display for RegexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.position;
        match &self.kind {
            RegexErrorKind::UnclosedGroup => write!(f, "unclosed group at {at}"),
            RegexErrorKind::UnmatchedCloseParen => write!(f, "unmatched `)` at {at}"),
            RegexErrorKind::UnclosedClass => write!(f, "unclosed character class at {at}"),
            RegexErrorKind::ReversedClassRange { start, end } => {
                write!(f, "class range `{start}-{end}` is reversed at {at}")
            }
            RegexErrorKind::UnknownPosixClass(name) => {
                write!(f, "unknown POSIX class `[:{name}:]` at {at}")
            }
            RegexErrorKind::NothingToRepeat => {
                write!(f, "repetition operator with nothing to repeat at {at}")
            }
            RegexErrorKind::UnclosedRepetition => write!(f, "unclosed repetition `{{` at {at}"),
            RegexErrorKind::ReversedRepetition { min, max } => {
                write!(
                    f,
                    "repetition `{{{min},{max}}}` has its minimum above its maximum at {at}"
                )
            }
            RegexErrorKind::RepetitionTooLarge { count } => write!(
                f,
                "repetition count {count} exceeds the limit of {} at {at}",
                super::MAX_REPEAT
            ),
            RegexErrorKind::TrailingBackslash => {
                write!(f, "pattern ends with a lone backslash at {at}")
            }
            RegexErrorKind::UnknownEscape(c) => write!(f, "unknown escape `\\{c}` at {at}"),
            RegexErrorKind::BadHexEscape => write!(f, "invalid hexadecimal escape at {at}"),
            RegexErrorKind::Backreference => {
                write!(f, "backreferences are not supported at {at}")
            }
            RegexErrorKind::UnknownFlag(c) => write!(f, "unknown flag `{c}` at {at}"),
            RegexErrorKind::UnclosedFlags => write!(f, "unclosed flag group `(?` at {at}"),
            RegexErrorKind::NestingTooDeep => write!(
                f,
                "groups nested deeper than {} at {at}",
                super::MAX_NESTING
            ),
            RegexErrorKind::TooLarge => write!(
                f,
                "pattern too large: its repetitions compile to more than {} instructions",
                super::MAX_PROGRAM_SIZE
            ),
        }
    }
}

impl std::error::Error for RegexError {}
