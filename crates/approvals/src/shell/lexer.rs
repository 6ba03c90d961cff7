//! Tokens and words. The lexer works on demand for the grammar in `parser.rs`, because a
//! word can contain a whole script (`$( … )`, `<( … )`) that the grammar must parse.

use std::cell::OnceCell;
use std::rc::Rc;

use super::ParseError;
use super::ast::{HeredocBody, RedirectOp, Script, Word, WordPart};

/// Deepest nesting of substitutions and compound commands accepted.
pub(super) const MAX_DEPTH: usize = 48;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    AndIf,
    OrIf,
    Semi,
    Pipe,
    PipeBoth,
    Amp,
    LParen,
    RParen,
}

impl Op {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Op::AndIf => "&&",
            Op::OrIf => "||",
            Op::Semi => ";",
            Op::Pipe => "|",
            Op::PipeBoth => "|&",
            Op::Amp => "&",
            Op::LParen => "(",
            Op::RParen => ")",
        }
    }
}

#[derive(Debug)]
pub(super) enum Token {
    Word(Word),
    Op(Op),
    Redirect { fd: Option<u32>, op: RedirectOp },
    Newline,
    Eof,
}

/// A here-document whose body starts after the current line.
pub(super) struct PendingHeredoc {
    pub delimiter: String,
    pub quoted: bool,
    pub strip_tabs: bool,
    pub cell: Rc<OnceCell<HeredocBody>>,
}

pub(super) struct Parser {
    pub(super) chars: Vec<char>,
    pub(super) pos: usize,
    pub(super) peeked: Option<Token>,
    pub(super) token_start: usize,
    pub(super) pending_heredocs: Vec<PendingHeredoc>,
    pub(super) depth: usize,
}

fn is_name_start(c: char) -> bool {
    c == '_' || c.is_ascii_alphabetic()
}

fn is_name_char(c: char) -> bool {
    c == '_' || c.is_ascii_alphanumeric()
}

/// Characters that end an unquoted word.
fn ends_word(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

/// Appends literal text, merging with the previous literal of the same quoting.
fn push_literal(parts: &mut Vec<WordPart>, text: &str, quoted: bool) {
    if let Some(WordPart::Literal {
        text: last,
        quoted: q,
    }) = parts.last_mut()
        && *q == quoted
    {
        last.push_str(text);
        return;
    }
    parts.push(WordPart::Literal {
        text: text.to_string(),
        quoted,
    });
}

impl Parser {
    pub(super) fn new(source: &str, depth: usize) -> Self {
        Parser {
            chars: source.chars().collect(),
            pos: 0,
            peeked: None,
            token_start: 0,
            pending_heredocs: Vec::new(),
            depth,
        }
    }

    pub(super) fn at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    pub(super) fn syntax(&self, message: impl Into<String>) -> ParseError {
        ParseError::syntax(message, self.token_start)
    }

    pub(super) fn unsupported(&self, what: impl Into<String>) -> ParseError {
        ParseError::unsupported(what, self.token_start)
    }

    fn starts_with(&self, text: &str) -> bool {
        text.chars().enumerate().all(|(i, c)| self.at(i) == Some(c))
    }

    pub(super) fn peek(&mut self) -> Result<&Token, ParseError> {
        let token = match self.peeked.take() {
            Some(token) => token,
            None => self.lex_token()?,
        };
        Ok(self.peeked.insert(token))
    }

    pub(super) fn next_token(&mut self) -> Result<Token, ParseError> {
        match self.peeked.take() {
            Some(token) => Ok(token),
            None => self.lex_token(),
        }
    }

    fn lex_token(&mut self) -> Result<Token, ParseError> {
        loop {
            match self.at(0) {
                Some(' ' | '\t') => self.pos += 1,
                Some('\\') if self.at(1) == Some('\n') => self.pos += 2,
                Some('#') => {
                    while self.at(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
        self.token_start = self.pos;
        let Some(c) = self.at(0) else {
            return Ok(Token::Eof);
        };
        let token = match c {
            '\n' => {
                self.pos += 1;
                self.read_heredoc_bodies()?;
                Token::Newline
            }
            '&' if self.starts_with("&&") => self.op(2, Op::AndIf),
            '&' if self.starts_with("&>>") => self.redirect(3, None, RedirectOp::AppendBoth),
            '&' if self.starts_with("&>") => self.redirect(2, None, RedirectOp::WriteBoth),
            '&' => self.op(1, Op::Amp),
            '|' if self.starts_with("||") => self.op(2, Op::OrIf),
            '|' if self.starts_with("|&") => self.op(2, Op::PipeBoth),
            '|' => self.op(1, Op::Pipe),
            ';' if self.starts_with(";;") || self.starts_with(";&") => {
                return Err(self.unsupported("case statements (`;;`)"));
            }
            ';' => self.op(1, Op::Semi),
            '(' if self.starts_with("((") => {
                return Err(self.unsupported("arithmetic commands `(( … ))`"));
            }
            '(' => self.op(1, Op::LParen),
            ')' => self.op(1, Op::RParen),
            '<' | '>' if self.at(1) == Some('(') => Token::Word(self.lex_word()?),
            '<' | '>' => self.lex_redirect_op(None)?,
            c if c.is_ascii_digit() => {
                let digits = self.chars[self.pos..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                let after = self.at(digits);
                if matches!(after, Some('<' | '>')) && self.at(digits + 1) != Some('(') {
                    let text: String = self.chars[self.pos..self.pos + digits].iter().collect();
                    let fd = text.parse::<u32>().map_err(|_| {
                        self.syntax(format!("file descriptor `{text}` is too large"))
                    })?;
                    self.pos += digits;
                    self.lex_redirect_op(Some(fd))?
                } else {
                    Token::Word(self.lex_word()?)
                }
            }
            _ => Token::Word(self.lex_word()?),
        };
        Ok(token)
    }

    fn op(&mut self, len: usize, op: Op) -> Token {
        self.pos += len;
        Token::Op(op)
    }

    fn redirect(&mut self, len: usize, fd: Option<u32>, op: RedirectOp) -> Token {
        self.pos += len;
        Token::Redirect { fd, op }
    }

    fn lex_redirect_op(&mut self, fd: Option<u32>) -> Result<Token, ParseError> {
        let table: [(&str, RedirectOp); 10] = [
            ("<<<", RedirectOp::HereString),
            ("<<-", RedirectOp::Heredoc { strip_tabs: true }),
            ("<<", RedirectOp::Heredoc { strip_tabs: false }),
            ("<&", RedirectOp::DupInput),
            ("<>", RedirectOp::ReadWrite),
            ("<", RedirectOp::Read),
            (">>", RedirectOp::Append),
            (">|", RedirectOp::Clobber),
            (">&", RedirectOp::DupOutput),
            (">", RedirectOp::Write),
        ];
        for (text, op) in table {
            if self.starts_with(text) {
                return Ok(self.redirect(text.chars().count(), fd, op));
            }
        }
        Err(self.syntax("expected a redirection operator"))
    }

    /// Lexes one unquoted word starting at the cursor.
    pub(super) fn lex_word(&mut self) -> Result<Word, ParseError> {
        let mut parts: Vec<WordPart> = Vec::new();
        let start = self.pos;
        while let Some(c) = self.at(0) {
            match c {
                '<' | '>' if self.at(1) == Some('(') => {
                    let output = c == '>';
                    self.pos += 2;
                    let script = self.parse_nested_until_rparen()?;
                    parts.push(WordPart::ProcessSubstitution { script, output });
                }
                c if ends_word(c) => break,
                '\\' => match self.at(1) {
                    Some('\n') => self.pos += 2,
                    Some(next) => {
                        push_literal(&mut parts, &next.to_string(), true);
                        self.pos += 2;
                    }
                    None => {
                        push_literal(&mut parts, "\\", false);
                        self.pos += 1;
                    }
                },
                '\'' => {
                    self.pos += 1;
                    let mut text = String::new();
                    loop {
                        match self.at(0) {
                            None => return Err(self.syntax("unterminated single quote")),
                            Some('\'') => break,
                            Some(c) => text.push(c),
                        }
                        self.pos += 1;
                    }
                    self.pos += 1;
                    push_literal(&mut parts, &text, true);
                }
                '"' => {
                    self.pos += 1;
                    self.lex_double_quoted(&mut parts)?;
                }
                '$' => self.lex_dollar(&mut parts, false)?,
                '`' => self.lex_backtick(&mut parts, false)?,
                '*' | '?' => {
                    parts.push(WordPart::Glob {
                        text: c.to_string(),
                    });
                    self.pos += 1;
                }
                '[' => match self.bracket_class_len() {
                    Some(len) => {
                        let text = self.chars[self.pos..self.pos + len].iter().collect();
                        parts.push(WordPart::Glob { text });
                        self.pos += len;
                    }
                    None => {
                        push_literal(&mut parts, "[", false);
                        self.pos += 1;
                    }
                },
                '~' if self.tilde_position(&parts, start) => {
                    self.pos += 1;
                    let mut user = String::new();
                    while let Some(c) = self.at(0) {
                        if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+') {
                            user.push(c);
                            self.pos += 1;
                        } else {
                            break;
                        }
                    }
                    parts.push(WordPart::Tilde { user });
                }
                '{' => match self.brace_expansion_len() {
                    Some(len) => {
                        let text = self.chars[self.pos..self.pos + len].iter().collect();
                        parts.push(WordPart::Brace { text });
                        self.pos += len;
                    }
                    None => {
                        push_literal(&mut parts, "{", false);
                        self.pos += 1;
                    }
                },
                c => {
                    push_literal(&mut parts, &c.to_string(), false);
                    self.pos += 1;
                }
            }
        }
        if parts.is_empty() {
            return Err(self.syntax("expected a word"));
        }
        Ok(Word { parts })
    }

    /// `~` is expanded at the start of a word and after `=` or `:` in assignment-like words.
    fn tilde_position(&self, parts: &[WordPart], start: usize) -> bool {
        if self.pos == start {
            return true;
        }
        match parts.last() {
            Some(WordPart::Literal {
                text,
                quoted: false,
            }) => {
                parts.len() == 1
                    && (text.ends_with('=') || text.ends_with(':'))
                    && text.chars().next().is_some_and(is_name_start)
            }
            _ => false,
        }
    }

    /// Length of a `[…]` glob class at the cursor, if it closes within the word.
    fn bracket_class_len(&self) -> Option<usize> {
        let mut i = 1;
        if matches!(self.at(i), Some('!' | '^')) {
            i += 1;
        }
        if self.at(i) == Some(']') {
            i += 1;
        }
        loop {
            match self.at(i) {
                Some(']') => return Some(i + 1),
                Some(c) if ends_word(c) || matches!(c, '\'' | '"' | '\\' | '$' | '`') => {
                    return None;
                }
                None => return None,
                Some(_) => i += 1,
            }
        }
    }

    /// Length of a `{a,b}` / `{1..3}` brace expansion at the cursor, if there is one.
    fn brace_expansion_len(&self) -> Option<usize> {
        let mut depth = 0usize;
        let mut expands = false;
        let mut i = 0;
        loop {
            match self.at(i) {
                Some('{') => depth += 1,
                Some('}') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return expands.then_some(i + 1);
                    }
                }
                Some(',') if depth >= 1 => expands = true,
                Some('.') if self.at(i + 1) == Some('.') && depth >= 1 => expands = true,
                Some(c) if ends_word(c) || matches!(c, '\'' | '"' | '\\' | '$' | '`') => {
                    return None;
                }
                None => return None,
                Some(_) => {}
            }
            i += 1;
        }
    }

    /// Lexes the inside of `"…"`; the opening quote is consumed.
    fn lex_double_quoted(&mut self, parts: &mut Vec<WordPart>) -> Result<(), ParseError> {
        let before = parts.len();
        let mut text = String::new();
        loop {
            let Some(c) = self.at(0) else {
                return Err(self.syntax("unterminated double quote"));
            };
            match c {
                '"' => {
                    self.pos += 1;
                    break;
                }
                '\\' => match self.at(1) {
                    Some('\n') => self.pos += 2,
                    Some(e @ ('$' | '`' | '"' | '\\')) => {
                        text.push(e);
                        self.pos += 2;
                    }
                    _ => {
                        text.push('\\');
                        self.pos += 1;
                    }
                },
                '$' | '`' => {
                    push_literal(parts, &std::mem::take(&mut text), true);
                    if c == '$' {
                        self.lex_dollar(parts, true)?;
                    } else {
                        self.lex_backtick(parts, true)?;
                    }
                }
                c => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
        if !text.is_empty() || parts.len() == before {
            push_literal(parts, &text, true);
        }
        Ok(())
    }

    /// Lexes an expansion starting with `$` at the cursor.
    pub(super) fn lex_dollar(
        &mut self,
        parts: &mut Vec<WordPart>,
        quoted: bool,
    ) -> Result<(), ParseError> {
        match self.at(1) {
            Some('(') if self.at(2) == Some('(') => {
                let text = self.arithmetic_text()?;
                parts.push(WordPart::Arithmetic { text });
            }
            Some('(') => {
                self.pos += 2;
                let script = self.parse_nested_until_rparen()?;
                parts.push(WordPart::CommandSubstitution { script, quoted });
            }
            Some('{') => {
                let text = self.braced_parameter_text()?;
                parts.push(WordPart::Parameter { text, quoted });
            }
            Some('\'') if !quoted => {
                self.pos += 2;
                let text = self.ansi_c_text()?;
                push_literal(parts, &text, true);
            }
            Some('"') if !quoted => {
                self.pos += 2;
                self.lex_double_quoted(parts)?;
            }
            Some(c) if is_name_start(c) => {
                let mut text = String::from("$");
                self.pos += 1;
                while let Some(c) = self.at(0).filter(|c| is_name_char(*c)) {
                    text.push(c);
                    self.pos += 1;
                }
                parts.push(WordPart::Parameter { text, quoted });
            }
            Some(c) if c.is_ascii_digit() || "@*#?-$!".contains(c) => {
                parts.push(WordPart::Parameter {
                    text: format!("${c}"),
                    quoted,
                });
                self.pos += 2;
            }
            _ => {
                push_literal(parts, "$", quoted);
                self.pos += 1;
            }
        }
        Ok(())
    }

    /// `$(( … ))` as written; refuses substitutions inside (they would run commands).
    fn arithmetic_text(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        self.pos += 3;
        let mut depth = 2usize;
        while depth > 0 {
            match self.at(0) {
                None => return Err(self.syntax("unterminated `$((`")),
                Some('(') => depth += 1,
                Some(')') => depth -= 1,
                Some('`') => return Err(self.unsupported("command substitution inside `$(( ))`")),
                Some('$') if self.at(1) == Some('(') && self.at(2) != Some('(') => {
                    return Err(self.unsupported("command substitution inside `$(( ))`"));
                }
                Some(_) => {}
            }
            self.pos += 1;
        }
        Ok(self.chars[start..self.pos].iter().collect())
    }

    /// `${ … }` as written; refuses substitutions inside (they would run commands).
    fn braced_parameter_text(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        self.pos += 2;
        let mut depth = 1usize;
        while depth > 0 {
            match self.at(0) {
                None => return Err(self.syntax("unterminated `${`")),
                Some('{') => depth += 1,
                Some('}') => depth -= 1,
                Some('`') => return Err(self.unsupported("command substitution inside `${ }`")),
                Some('$' | '<' | '>') if self.at(1) == Some('(') => {
                    return Err(self.unsupported("command substitution inside `${ }`"));
                }
                Some('\\') => self.pos += 1,
                Some(_) => {}
            }
            self.pos += 1;
        }
        Ok(self.chars[start..self.pos].iter().collect())
    }

    /// The body of `$'…'` with its escapes decoded; the opening is consumed.
    fn ansi_c_text(&mut self) -> Result<String, ParseError> {
        let mut text = String::new();
        loop {
            let Some(c) = self.at(0) else {
                return Err(self.syntax("unterminated `$'`"));
            };
            self.pos += 1;
            match c {
                '\'' => return Ok(text),
                '\\' => {
                    let Some(e) = self.at(0) else {
                        return Err(self.syntax("unterminated `$'`"));
                    };
                    self.pos += 1;
                    let decoded = match e {
                        'a' => '\u{7}',
                        'b' => '\u{8}',
                        'e' | 'E' => '\u{1b}',
                        'f' => '\u{c}',
                        'n' => '\n',
                        'r' => '\r',
                        't' => '\t',
                        'v' => '\u{b}',
                        '\\' | '\'' | '"' | '?' => e,
                        'x' => self.ansi_c_number(16, 2)?,
                        'u' => self.ansi_c_number(16, 4)?,
                        '0'..='7' => {
                            self.pos -= 1;
                            self.ansi_c_number(8, 3)?
                        }
                        other => {
                            return Err(
                                self.unsupported(format!("the escape `\\{other}` in `$'…'`"))
                            );
                        }
                    };
                    if decoded == '\0' {
                        return Err(self.unsupported("a NUL byte in `$'…'`"));
                    }
                    text.push(decoded);
                }
                c => text.push(c),
            }
        }
    }

    fn ansi_c_number(&mut self, radix: u32, max_digits: usize) -> Result<char, ParseError> {
        let mut value = 0u32;
        let mut digits = 0;
        while digits < max_digits {
            match self.at(0).and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    value = value * radix + d;
                    digits += 1;
                    self.pos += 1;
                }
                None => break,
            }
        }
        if digits == 0 {
            return Err(self.syntax("an escape in `$'…'` without digits"));
        }
        char::from_u32(value).ok_or_else(|| self.syntax("an escape in `$'…'` is not a character"))
    }

    /// `` `…` ``: the content (with `` \` ``, `\\`, `\$` unescaped) is parsed as a script.
    pub(super) fn lex_backtick(
        &mut self,
        parts: &mut Vec<WordPart>,
        quoted: bool,
    ) -> Result<(), ParseError> {
        self.pos += 1;
        let mut inner = String::new();
        loop {
            match self.at(0) {
                None => return Err(self.syntax("unterminated backquote")),
                Some('`') => break,
                Some('\\') => match self.at(1) {
                    Some(e @ ('`' | '\\' | '$')) => {
                        inner.push(e);
                        self.pos += 2;
                        continue;
                    }
                    Some('"') if quoted => {
                        inner.push('"');
                        self.pos += 2;
                        continue;
                    }
                    _ => inner.push('\\'),
                },
                Some(c) => inner.push(c),
            }
            self.pos += 1;
        }
        self.pos += 1;
        if self.depth + 1 > MAX_DEPTH {
            return Err(self.unsupported("nesting deeper than 48 levels"));
        }
        let script = super::parse_at_depth(&inner, self.depth + 1)
            .map_err(|e| e.shifted(self.token_start))?;
        parts.push(WordPart::CommandSubstitution { script, quoted });
        Ok(())
    }

    /// Reads the bodies of the here-documents opened on the line that just ended.
    fn read_heredoc_bodies(&mut self) -> Result<(), ParseError> {
        for pending in std::mem::take(&mut self.pending_heredocs) {
            let mut text = String::new();
            while self.pos < self.chars.len() {
                let end = self.chars[self.pos..]
                    .iter()
                    .position(|c| *c == '\n')
                    .map_or(self.chars.len(), |i| self.pos + i);
                let line: String = self.chars[self.pos..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len());
                let line = if pending.strip_tabs {
                    line.trim_start_matches('\t').to_string()
                } else {
                    line
                };
                if line == pending.delimiter {
                    break;
                }
                text.push_str(&line);
                text.push('\n');
            }
            let substitutions = if pending.quoted {
                Vec::new()
            } else {
                scan_expansions(&text, self.depth + 1).map_err(|e| e.shifted(self.pos))?
            };
            // A cell is filled once; a second fill cannot happen because each pending entry is
            // taken from the list exactly once.
            let _ = pending.cell.set(HeredocBody {
                text,
                substitutions,
            });
        }
        Ok(())
    }

    /// Gives every here-document still waiting an empty body (the input ended first).
    pub(super) fn finish_heredocs(&mut self) {
        for pending in std::mem::take(&mut self.pending_heredocs) {
            let _ = pending.cell.set(HeredocBody::default());
        }
    }
}

/// The command substitutions in text that the shell expands like a double-quoted string
/// (an unquoted here-document body).
fn scan_expansions(text: &str, depth: usize) -> Result<Vec<Script>, ParseError> {
    if depth > MAX_DEPTH {
        return Err(ParseError::unsupported("nesting deeper than 48 levels", 0));
    }
    let mut parser = Parser::new(text, depth);
    let mut parts = Vec::new();
    while let Some(c) = parser.at(0) {
        match c {
            '\\' => parser.pos += 2,
            '$' => parser.lex_dollar(&mut parts, true)?,
            '`' => parser.lex_backtick(&mut parts, true)?,
            _ => parser.pos += 1,
        }
    }
    Ok(parts
        .into_iter()
        .filter_map(|part| match part {
            WordPart::CommandSubstitution { script, .. } => Some(script),
            _ => None,
        })
        .collect())
}
