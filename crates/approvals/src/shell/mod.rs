//! A parser for the POSIX-shell subset that agents write, and its syntax tree.
//!
//! Understood: quoting (`'…'`, `"…"` with escapes and `$( … )` inside, `$'…'`), `\` escapes,
//! line continuations, comments, parameters (`$x`, `${…}`), command substitution (`$( … )`,
//! backquotes), process substitution (`<( … )`, `>( … )`), arithmetic `$(( … ))`, globs,
//! brace expansion, `~`; operators `&& || ; | |& &`, subshells `( … )`, groups `{ …; }`,
//! `if`, `while`, `until`, `for … in`, `[[ … ]]`; redirections `< > >> >| <> &> &>> >& <&
//! <<< << <<-` with here-document bodies; `NAME=value` prefixes.
//!
//! Refused with [`ParseErrorKind::Unsupported`]: `case`, function definitions, `select`,
//! `coproc`, arithmetic commands `(( … ))`, array assignments, substitutions inside `${ … }`
//! or `$(( … ))`, nesting deeper than 48 levels. A refusal is never an approval: callers
//! treat any error as "ask".

mod ast;
mod lexer;
mod parser;
mod render;

pub use ast::*;
pub use render::canonical;

use std::fmt;

use lexer::Parser;
use parser::Stop;

/// Why a command could not be parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// Not valid shell.
    Syntax,
    /// Valid shell outside the subset this parser understands.
    Unsupported,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub kind: ParseErrorKind,
    pub message: String,
    /// Character offset in the command where the problem was found.
    pub offset: usize,
}

impl ParseError {
    pub(crate) fn syntax(message: impl Into<String>, offset: usize) -> Self {
        ParseError {
            kind: ParseErrorKind::Syntax,
            message: message.into(),
            offset,
        }
    }

    pub(crate) fn unsupported(what: impl Into<String>, offset: usize) -> Self {
        ParseError {
            kind: ParseErrorKind::Unsupported,
            message: format!("not understood: {}", what.into()),
            offset,
        }
    }

    fn shifted(mut self, by: usize) -> Self {
        self.offset += by;
        self
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ParseErrorKind::Syntax => {
                write!(f, "shell syntax error at character {}: ", self.offset)?
            }
            ParseErrorKind::Unsupported => {
                write!(f, "unsupported shell at character {}: ", self.offset)?;
            }
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parses a command line (what `bash -c` would run).
pub fn parse(source: &str) -> Result<Script, ParseError> {
    parse_at_depth(source, 0)
}

fn parse_at_depth(source: &str, depth: usize) -> Result<Script, ParseError> {
    let mut parser = Parser::new(source, depth);
    let script = parser.parse_list(Stop::Eof)?;
    parser.finish_heredocs();
    Ok(script)
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
