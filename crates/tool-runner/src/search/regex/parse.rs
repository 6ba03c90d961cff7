//! The pattern parser: text to [`Node`], with every refusal naming its position.
//!
//! Syntax (a practical superset of POSIX ERE): literals; `.`; classes `[a-z]`, `[^…]`,
//! `[[:alpha:]]` and escapes inside classes; `\d \D \w \W \s \S`; anchors `^ $`; word
//! assertions `\b \B \< \>`; `* + ? {m} {m,} {m,n} {,n}`, each optionally lazy with a
//! trailing `?`; alternation `|`; groups `( )`, `(?: )`, `(?P<name> )`, `(?<name> )`; flags
//! `(?i)`, `(?-i)`, `(?i: )`; escapes `\t \n \r \f \v \a \e \0 \xHH \x{H…}` and any escaped
//! punctuation. A `{` that does not start a repetition is a literal `{`.

use super::ast::{Look, Node, RegexError, RegexErrorKind};
use super::charset::{self, CharSet};
use super::{MAX_NESTING, MAX_REPEAT};

/// Parses `pattern`; `case_insensitive` is the initial state of the `i` flag.
pub(crate) fn parse(pattern: &str, case_insensitive: bool) -> Result<Node, RegexError> {
    let mut parser = Parser {
        chars: pattern.chars().collect(),
        pos: 0,
        fold: case_insensitive,
        depth: 0,
    };
    let node = parser.parse_alternation()?;
    if parser.peek() == Some(')') {
        return Err(parser.error(parser.pos, RegexErrorKind::UnmatchedCloseParen));
    }
    Ok(node)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// The `i` flag where the parser stands.
    fold: bool,
    depth: usize,
}

/// What an escape sequence stands for.
enum Escape {
    Char(char),
    Set(CharSet),
    Look(Look),
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn error(&self, position: usize, kind: RegexErrorKind) -> RegexError {
        RegexError { position, kind }
    }

    fn parse_alternation(&mut self) -> Result<Node, RegexError> {
        let mut branches = vec![self.parse_concat()?];
        while self.peek() == Some('|') {
            self.pos += 1;
            branches.push(self.parse_concat()?);
        }
        Ok(match branches.len() {
            1 => branches.pop().unwrap_or(Node::Empty),
            _ => Node::Alternate(branches),
        })
    }

    fn parse_concat(&mut self) -> Result<Node, RegexError> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let start = self.pos;
            let atom = match c {
                '(' => match self.parse_group()? {
                    Some(node) => node,
                    None => continue,
                },
                '[' => self.parse_class()?,
                '\\' => match self.parse_escape()? {
                    Escape::Char(c) => self.literal(c),
                    Escape::Set(set) => Node::Class(set),
                    Escape::Look(look) => Node::Look(look),
                },
                '.' => {
                    self.pos += 1;
                    Node::Class(CharSet::all())
                }
                '^' => {
                    self.pos += 1;
                    Node::Look(Look::LineStart)
                }
                '$' => {
                    self.pos += 1;
                    Node::Look(Look::LineEnd)
                }
                '*' | '+' | '?' => {
                    return Err(self.error(start, RegexErrorKind::NothingToRepeat));
                }
                '{' => {
                    if self.repetition_braces()?.is_some() {
                        return Err(self.error(start, RegexErrorKind::NothingToRepeat));
                    }
                    self.pos += 1;
                    self.literal('{')
                }
                _ => {
                    self.pos += 1;
                    self.literal(c)
                }
            };
            let bare_look = matches!(atom, Node::Look(_)) && c != '(';
            let atom = self.parse_repetitions(atom, bare_look)?;
            items.push(atom);
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(items),
        })
    }

    fn literal(&self, c: char) -> Node {
        let fold = self.fold && charset::case_variants(c).nth(1).is_some();
        Node::Literal { c, fold }
    }

    /// Applies any quantifiers that follow `atom`. A bare assertion (`^`, `$`, `\b`, …) cannot
    /// be repeated; a group holding one can (it repeats nothing but does no harm).
    fn parse_repetitions(&mut self, mut atom: Node, bare_look: bool) -> Result<Node, RegexError> {
        loop {
            let start = self.pos;
            let (min, max) = match self.peek() {
                Some('*') => {
                    self.pos += 1;
                    (0, None)
                }
                Some('+') => {
                    self.pos += 1;
                    (1, None)
                }
                Some('?') => {
                    self.pos += 1;
                    (0, Some(1))
                }
                Some('{') => match self.repetition_braces()? {
                    Some((min, max, end)) => {
                        self.pos = end;
                        (min, max)
                    }
                    None => return Ok(atom),
                },
                _ => return Ok(atom),
            };
            if bare_look {
                return Err(self.error(start, RegexErrorKind::NothingToRepeat));
            }
            let greedy = if self.peek() == Some('?') {
                self.pos += 1;
                false
            } else {
                true
            };
            atom = Node::Repeat {
                node: Box::new(atom),
                min,
                max,
                greedy,
            };
        }
    }

    /// Reads `{m}`, `{m,}`, `{m,n}` or `{,n}` at the current `{` without consuming it.
    /// `None` when the brace does not start a repetition (it is then a literal `{`).
    fn repetition_braces(&self) -> Result<Option<(u32, Option<u32>, usize)>, RegexError> {
        let start = self.pos;
        let mut i = start + 1;
        let read_number = |i: &mut usize| -> Option<u64> {
            let begin = *i;
            let mut value: u64 = 0;
            while let Some(d) = self.chars.get(*i).and_then(|c| c.to_digit(10)) {
                value = value.saturating_mul(10).saturating_add(u64::from(d));
                *i += 1;
            }
            (*i > begin).then_some(value)
        };
        let min = read_number(&mut i);
        let max = match self.chars.get(i) {
            Some('}') => match min {
                Some(m) => Some(m),
                None => return Ok(None),
            },
            Some(',') => {
                i += 1;
                let max = read_number(&mut i);
                if self.chars.get(i) != Some(&'}') {
                    return if min.is_some() || max.is_some() {
                        Err(self.error(start, RegexErrorKind::UnclosedRepetition))
                    } else {
                        Ok(None)
                    };
                }
                if min.is_none() && max.is_none() {
                    return Ok(None);
                }
                max
            }
            _ => {
                return if min.is_some() {
                    Err(self.error(start, RegexErrorKind::UnclosedRepetition))
                } else {
                    Ok(None)
                };
            }
        };
        let end = i + 1;
        let min_value = min.unwrap_or(0);
        for count in [Some(min_value), max].into_iter().flatten() {
            if count > u64::from(MAX_REPEAT) {
                return Err(self.error(start, RegexErrorKind::RepetitionTooLarge { count }));
            }
        }
        // Both are at most MAX_REPEAT here, so they fit in u32.
        let min32 = u32::try_from(min_value).unwrap_or(MAX_REPEAT);
        let max32 = max.map(|m| u32::try_from(m).unwrap_or(MAX_REPEAT));
        if let Some(max) = max32
            && min32 > max
        {
            return Err(self.error(
                start,
                RegexErrorKind::ReversedRepetition { min: min32, max },
            ));
        }
        Ok(Some((min32, max32, end)))
    }

    /// Parses a group at `(`; `None` for a flag-only group such as `(?i)`.
    fn parse_group(&mut self) -> Result<Option<Node>, RegexError> {
        let start = self.pos;
        if self.depth >= MAX_NESTING {
            return Err(self.error(start, RegexErrorKind::NestingTooDeep));
        }
        self.pos += 1;
        let saved_fold = self.fold;
        if self.peek() == Some('?') {
            self.pos += 1;
            match self.peek() {
                Some(':') => self.pos += 1,
                Some('<') if !matches!(self.peek_at(1), Some('=' | '!')) => {
                    self.pos += 1;
                    self.skip_group_name(start)?;
                }
                Some('P') if self.peek_at(1) == Some('<') => {
                    self.pos += 2;
                    self.skip_group_name(start)?;
                }
                _ => {
                    let scoped = self.parse_flags(start)?;
                    if !scoped {
                        // `(?i)`: the flags hold until the end of the enclosing group.
                        return Ok(None);
                    }
                }
            }
        }
        self.depth += 1;
        let inner = self.parse_alternation()?;
        self.depth -= 1;
        self.fold = saved_fold;
        if self.peek() != Some(')') {
            return Err(self.error(start, RegexErrorKind::UnclosedGroup));
        }
        self.pos += 1;
        Ok(Some(inner))
    }

    fn skip_group_name(&mut self, start: usize) -> Result<(), RegexError> {
        let name_start = self.pos;
        while let Some(c) = self.peek() {
            if c == '>' {
                if self.pos == name_start {
                    break;
                }
                self.pos += 1;
                return Ok(());
            }
            if !charset::is_word_char(c) {
                break;
            }
            self.pos += 1;
        }
        Err(self.error(start, RegexErrorKind::UnclosedGroup))
    }

    /// Parses flags after `(?`; true when they open a scoped group (`(?i:`), false when the
    /// group closed at once (`(?i)`).
    fn parse_flags(&mut self, start: usize) -> Result<bool, RegexError> {
        let mut negate = false;
        loop {
            let at = self.pos;
            match self.peek() {
                Some('i') => {
                    self.fold = !negate;
                    self.pos += 1;
                }
                Some('-') if !negate => {
                    negate = true;
                    self.pos += 1;
                }
                Some(':') => {
                    self.pos += 1;
                    return Ok(true);
                }
                Some(')') => {
                    self.pos += 1;
                    return Ok(false);
                }
                Some(c) => return Err(self.error(at, RegexErrorKind::UnknownFlag(c))),
                None => return Err(self.error(start, RegexErrorKind::UnclosedFlags)),
            }
        }
    }

    /// Parses an escape at `\` (outside a class).
    fn parse_escape(&mut self) -> Result<Escape, RegexError> {
        let start = self.pos;
        self.pos += 1;
        let Some(c) = self.peek() else {
            return Err(self.error(start, RegexErrorKind::TrailingBackslash));
        };
        self.pos += 1;
        Ok(match c {
            'b' => Escape::Look(Look::WordBoundary),
            'B' => Escape::Look(Look::NotWordBoundary),
            '<' => Escape::Look(Look::WordStart),
            '>' => Escape::Look(Look::WordEnd),
            '1'..='9' => return Err(self.error(start, RegexErrorKind::Backreference)),
            _ => self.escape_body(c, start)?,
        })
    }

    /// The escapes valid both inside and outside classes; `c` follows the backslash.
    fn escape_body(&mut self, c: char, start: usize) -> Result<Escape, RegexError> {
        Ok(match c {
            'd' => Escape::Set(charset::digit_chars()),
            'D' => Escape::Set(charset::digit_chars().negated()),
            'w' => Escape::Set(charset::word_chars().clone()),
            'W' => Escape::Set(charset::word_chars().negated()),
            's' => Escape::Set(charset::space_chars().clone()),
            'S' => Escape::Set(charset::space_chars().negated()),
            't' => Escape::Char('\t'),
            'n' => Escape::Char('\n'),
            'r' => Escape::Char('\r'),
            'f' => Escape::Char('\x0C'),
            'v' => Escape::Char('\x0B'),
            'a' => Escape::Char('\x07'),
            'e' => Escape::Char('\x1B'),
            '0' => Escape::Char('\0'),
            'x' => Escape::Char(self.parse_hex(start)?),
            c if c.is_ascii_alphanumeric() => {
                return Err(self.error(start, RegexErrorKind::UnknownEscape(c)));
            }
            c => Escape::Char(c),
        })
    }

    /// Parses the digits of `\xHH` or `\x{H…}` (the `x` is consumed).
    fn parse_hex(&mut self, start: usize) -> Result<char, RegexError> {
        let bad = || RegexError {
            position: start,
            kind: RegexErrorKind::BadHexEscape,
        };
        let digits: String = if self.peek() == Some('{') {
            self.pos += 1;
            let mut digits = String::new();
            loop {
                match self.peek() {
                    Some('}') => {
                        self.pos += 1;
                        break;
                    }
                    Some(c) if c.is_ascii_hexdigit() && digits.len() < 8 => {
                        digits.push(c);
                        self.pos += 1;
                    }
                    _ => return Err(bad()),
                }
            }
            digits
        } else {
            let mut digits = String::new();
            for _ in 0..2 {
                match self.peek() {
                    Some(c) if c.is_ascii_hexdigit() => {
                        digits.push(c);
                        self.pos += 1;
                    }
                    _ => return Err(bad()),
                }
            }
            digits
        };
        u32::from_str_radix(&digits, 16)
            .ok()
            .and_then(char::from_u32)
            .ok_or_else(bad)
    }

    /// Parses a bracket class at `[`.
    fn parse_class(&mut self) -> Result<Node, RegexError> {
        let start = self.pos;
        self.pos += 1;
        let negated = self.peek() == Some('^');
        if negated {
            self.pos += 1;
        }
        let mut set = CharSet::empty();
        let mut first = true;
        loop {
            let item_start = self.pos;
            let Some(c) = self.peek() else {
                return Err(self.error(start, RegexErrorKind::UnclosedClass));
            };
            if c == ']' && !first {
                self.pos += 1;
                break;
            }
            first = false;
            if c == '['
                && self.peek_at(1) == Some(':')
                && let Some(posix) = self.parse_posix_class()?
            {
                set.union(&posix);
                continue;
            }
            let low = match self.class_atom(start)? {
                Escape::Char(low) => low,
                Escape::Set(escaped) => {
                    set.union(&escaped);
                    continue;
                }
                Escape::Look(_) => continue,
            };
            let is_range = self.peek() == Some('-') && !matches!(self.peek_at(1), None | Some(']'));
            if !is_range {
                set.add_char(low);
                continue;
            }
            self.pos += 1;
            match self.class_atom(start)? {
                Escape::Char(high) => {
                    if high < low {
                        return Err(self.error(
                            item_start,
                            RegexErrorKind::ReversedClassRange {
                                start: low,
                                end: high,
                            },
                        ));
                    }
                    set.add_range(u32::from(low), u32::from(high));
                }
                Escape::Set(escaped) => {
                    // `[a-\d]`: no range; the `-` is literal, as in PCRE.
                    set.add_char(low);
                    set.add_char('-');
                    set.union(&escaped);
                }
                Escape::Look(_) => {}
            }
        }
        if self.fold {
            set = set.case_folded();
        }
        if negated {
            return Ok(Node::Class(set.negated()));
        }
        Ok(match set.single_char() {
            Some(c) => Node::Literal { c, fold: false },
            None => Node::Class(set),
        })
    }

    /// One member inside a class: a character or an escape. `Look` is never returned.
    fn class_atom(&mut self, class_start: usize) -> Result<Escape, RegexError> {
        let Some(c) = self.peek() else {
            return Err(self.error(class_start, RegexErrorKind::UnclosedClass));
        };
        if c != '\\' {
            self.pos += 1;
            return Ok(Escape::Char(c));
        }
        let start = self.pos;
        self.pos += 1;
        let Some(escaped) = self.peek() else {
            return Err(self.error(class_start, RegexErrorKind::UnclosedClass));
        };
        self.pos += 1;
        match escaped {
            // Inside a class `\b` is a backspace, as in PCRE.
            'b' => Ok(Escape::Char('\x08')),
            _ => self.escape_body(escaped, start),
        }
    }

    /// Parses `[:name:]` at `[`; `None` (nothing consumed) when no `:]` closes it.
    fn parse_posix_class(&mut self) -> Result<Option<CharSet>, RegexError> {
        let start = self.pos;
        let mut i = start + 2;
        let mut name = String::new();
        while let Some(&c) = self.chars.get(i) {
            if c == ':' && self.chars.get(i + 1) == Some(&']') {
                return match charset::posix_class(&name) {
                    Some(set) => {
                        self.pos = i + 2;
                        Ok(Some(set))
                    }
                    None => Err(self.error(start, RegexErrorKind::UnknownPosixClass(name))),
                };
            }
            if !c.is_ascii_alphabetic() {
                break;
            }
            name.push(c);
            i += 1;
        }
        Ok(None)
    }
}
