//! The grammar: lists, and-or lists, pipelines, simple and compound commands.

use std::cell::OnceCell;
use std::rc::Rc;

use super::ParseError;
use super::ast::{
    AndOr, Assignment, Command, Connector, Heredoc, ListItem, Pipeline, Redirect, RedirectOp,
    RedirectTarget, Script, SimpleCommand, Word, WordPart,
};
use super::lexer::{MAX_DEPTH, Op, Parser, PendingHeredoc, Token};

/// Where a list ends.
#[derive(Clone, Copy)]
pub(super) enum Stop<'s> {
    Eof,
    RParen,
    Words(&'s [&'s str]),
}

/// What the next token is, without holding a borrow of it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Next {
    /// A word; `Some` with its text when it is an unquoted literal (a possible reserved word).
    Word(Option<String>),
    Op(Op),
    Redirect,
    Newline,
    Eof,
}

/// Words that open or close compound commands where a command may start.
const RESERVED: &[&str] = &[
    "!", "{", "}", "if", "then", "elif", "else", "fi", "while", "until", "for", "do", "done",
    "case", "esac", "in", "select", "function", "coproc", "[[", "]]",
];

fn bare_literal(word: &Word) -> Option<&str> {
    match word.parts.as_slice() {
        [
            WordPart::Literal {
                text,
                quoted: false,
            },
        ] => Some(text),
        _ => None,
    }
}

fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Splits `NAME=value` / `NAME+=value` (the name unquoted) into an assignment.
fn as_assignment(word: &Word) -> Option<Assignment> {
    let Some(WordPart::Literal {
        text,
        quoted: false,
    }) = word.parts.first()
    else {
        return None;
    };
    let eq = text.find('=')?;
    let (name, append) = match text[..eq].strip_suffix('+') {
        Some(name) => (name, true),
        None => (&text[..eq], false),
    };
    if !is_name(name) {
        return None;
    }
    let mut parts = Vec::new();
    let rest = &text[eq + 1..];
    if !rest.is_empty() {
        parts.push(WordPart::Literal {
            text: rest.to_string(),
            quoted: false,
        });
    }
    parts.extend(word.parts[1..].iter().cloned());
    Some(Assignment {
        name: name.to_string(),
        append,
        value: Word { parts },
    })
}

impl Parser {
    fn peek_next(&mut self) -> Result<Next, ParseError> {
        Ok(match self.peek()? {
            Token::Word(word) => Next::Word(bare_literal(word).map(str::to_string)),
            Token::Op(op) => Next::Op(*op),
            Token::Redirect { .. } => Next::Redirect,
            Token::Newline => Next::Newline,
            Token::Eof => Next::Eof,
        })
    }

    fn describe(next: &Next) -> String {
        match next {
            Next::Word(Some(text)) => format!("`{text}`"),
            Next::Word(None) => "a word".to_string(),
            Next::Op(op) => format!("`{}`", op.as_str()),
            Next::Redirect => "a redirection".to_string(),
            Next::Newline => "a newline".to_string(),
            Next::Eof => "end of the command".to_string(),
        }
    }

    fn is_stop(next: &Next, stop: Stop<'_>) -> bool {
        match (stop, next) {
            (Stop::Eof, Next::Eof) => true,
            (Stop::RParen, Next::Op(Op::RParen)) => true,
            (Stop::Words(words), Next::Word(Some(text))) => words.contains(&text.as_str()),
            _ => false,
        }
    }

    fn skip_newlines(&mut self) -> Result<(), ParseError> {
        while self.peek_next()? == Next::Newline {
            self.next_token()?;
        }
        Ok(())
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.unsupported("nesting deeper than 48 levels"));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Parses `$( … )` / `<( … )` after the opening; consumes the closing `)`.
    pub(super) fn parse_nested_until_rparen(&mut self) -> Result<Script, ParseError> {
        self.enter()?;
        let script = self.parse_list(Stop::RParen)?;
        match self.next_token()? {
            Token::Op(Op::RParen) => {}
            _ => return Err(self.syntax("missing `)`")),
        }
        self.leave();
        Ok(script)
    }

    pub(super) fn parse_list(&mut self, stop: Stop<'_>) -> Result<Script, ParseError> {
        let mut items = Vec::new();
        loop {
            self.skip_newlines()?;
            let next = self.peek_next()?;
            if Self::is_stop(&next, stop) {
                break;
            }
            match next {
                Next::Eof => return Err(self.missing(stop)),
                Next::Op(Op::Semi | Op::Amp) => {
                    return Err(self.syntax(format!("unexpected {}", Self::describe(&next))));
                }
                _ => {}
            }
            let and_or = self.parse_and_or()?;
            let after = self.peek_next()?;
            match after {
                Next::Op(Op::Semi) => {
                    self.next_token()?;
                    items.push(ListItem {
                        and_or,
                        background: false,
                    });
                }
                Next::Op(Op::Amp) => {
                    self.next_token()?;
                    items.push(ListItem {
                        and_or,
                        background: true,
                    });
                }
                _ if after == Next::Newline || Self::is_stop(&after, stop) => {
                    items.push(ListItem {
                        and_or,
                        background: false,
                    });
                }
                Next::Eof => return Err(self.missing(stop)),
                other => {
                    return Err(self.syntax(format!("unexpected {}", Self::describe(&other))));
                }
            }
        }
        if items.is_empty() && matches!(stop, Stop::Words(_)) {
            return Err(self.syntax("empty command list"));
        }
        Ok(Script { items })
    }

    fn missing(&self, stop: Stop<'_>) -> ParseError {
        let missing = match stop {
            Stop::Eof => "",
            Stop::RParen => "`)`",
            Stop::Words(words) => words.last().copied().unwrap_or(""),
        };
        self.syntax(format!("unexpected end of the command; missing {missing}"))
    }

    fn parse_and_or(&mut self) -> Result<AndOr, ParseError> {
        let first = self.parse_pipeline()?;
        let mut rest = Vec::new();
        loop {
            let connector = match self.peek_next()? {
                Next::Op(Op::AndIf) => Connector::And,
                Next::Op(Op::OrIf) => Connector::Or,
                _ => break,
            };
            self.next_token()?;
            self.skip_newlines()?;
            rest.push((connector, self.parse_pipeline()?));
        }
        Ok(AndOr { first, rest })
    }

    fn parse_pipeline(&mut self) -> Result<Pipeline, ParseError> {
        let negated = self.peek_next()? == Next::Word(Some("!".to_string()));
        if negated {
            self.next_token()?;
        }
        let mut commands = vec![self.parse_command()?];
        let mut stderr_piped = Vec::new();
        loop {
            let both = match self.peek_next()? {
                Next::Op(Op::Pipe) => false,
                Next::Op(Op::PipeBoth) => true,
                _ => break,
            };
            self.next_token()?;
            self.skip_newlines()?;
            stderr_piped.push(both);
            commands.push(self.parse_command()?);
        }
        Ok(Pipeline {
            negated,
            commands,
            stderr_piped,
        })
    }

    fn parse_command(&mut self) -> Result<Command, ParseError> {
        let next = self.peek_next()?;
        match &next {
            Next::Op(Op::LParen) => {
                self.next_token()?;
                self.enter()?;
                let body = self.parse_list(Stop::RParen)?;
                self.expect_op(Op::RParen)?;
                self.leave();
                if body.items.is_empty() {
                    return Err(self.syntax("empty subshell `( )`"));
                }
                let redirects = self.parse_trailing_redirects()?;
                Ok(Command::Subshell { body, redirects })
            }
            Next::Word(Some(word)) if RESERVED.contains(&word.as_str()) => {
                self.parse_compound(word)
            }
            Next::Word(_) | Next::Redirect => self.parse_simple().map(Command::Simple),
            other => Err(self.syntax(format!(
                "expected a command, found {}",
                Self::describe(other)
            ))),
        }
    }

    fn parse_compound(&mut self, keyword: &str) -> Result<Command, ParseError> {
        match keyword {
            "{" => {
                self.next_token()?;
                self.enter()?;
                let body = self.parse_list(Stop::Words(&["}"]))?;
                self.expect_word("}")?;
                self.leave();
                let redirects = self.parse_trailing_redirects()?;
                Ok(Command::Group { body, redirects })
            }
            "if" => self.parse_if(),
            "while" | "until" => self.parse_loop(keyword == "until"),
            "for" => self.parse_for(),
            "[[" => self.parse_test(),
            "case" | "select" | "function" | "coproc" => {
                Err(self.unsupported(format!("`{keyword}` commands")))
            }
            other => Err(self.syntax(format!("unexpected `{other}`"))),
        }
    }

    fn expect_op(&mut self, op: Op) -> Result<(), ParseError> {
        match self.next_token()? {
            Token::Op(found) if found == op => Ok(()),
            _ => Err(self.syntax(format!("expected `{}`", op.as_str()))),
        }
    }

    fn expect_word(&mut self, keyword: &str) -> Result<(), ParseError> {
        match self.next_token()? {
            Token::Word(word) if bare_literal(&word) == Some(keyword) => Ok(()),
            _ => Err(self.syntax(format!("expected `{keyword}`"))),
        }
    }

    fn parse_if(&mut self) -> Result<Command, ParseError> {
        self.next_token()?;
        self.enter()?;
        let mut branches = Vec::new();
        let mut else_body = None;
        loop {
            let condition = self.parse_list(Stop::Words(&["then"]))?;
            self.expect_word("then")?;
            let body = self.parse_list(Stop::Words(&["elif", "else", "fi"]))?;
            branches.push((condition, body));
            match self.next_token()? {
                Token::Word(word) => match bare_literal(&word) {
                    Some("elif") => continue,
                    Some("else") => {
                        else_body = Some(self.parse_list(Stop::Words(&["fi"]))?);
                        self.expect_word("fi")?;
                        break;
                    }
                    Some("fi") => break,
                    _ => return Err(self.syntax("expected `fi`")),
                },
                _ => return Err(self.syntax("expected `fi`")),
            }
        }
        self.leave();
        let redirects = self.parse_trailing_redirects()?;
        Ok(Command::If {
            branches,
            else_body,
            redirects,
        })
    }

    fn parse_loop(&mut self, until: bool) -> Result<Command, ParseError> {
        self.next_token()?;
        self.enter()?;
        let condition = self.parse_list(Stop::Words(&["do"]))?;
        self.expect_word("do")?;
        let body = self.parse_list(Stop::Words(&["done"]))?;
        self.expect_word("done")?;
        self.leave();
        let redirects = self.parse_trailing_redirects()?;
        Ok(Command::Loop {
            until,
            condition,
            body,
            redirects,
        })
    }

    fn parse_for(&mut self) -> Result<Command, ParseError> {
        self.next_token()?;
        let variable = match self.next_token()? {
            Token::Word(word) => match bare_literal(&word) {
                Some(name) if is_name(name) => name.to_string(),
                _ => return Err(self.syntax("`for` needs a variable name")),
            },
            Token::Op(Op::LParen) => return Err(self.unsupported("arithmetic `for ((…))` loops")),
            _ => return Err(self.syntax("`for` needs a variable name")),
        };
        self.enter()?;
        let mut words = None;
        loop {
            match self.peek_next()? {
                Next::Newline => {
                    self.next_token()?;
                }
                Next::Op(Op::Semi) => {
                    self.next_token()?;
                    break;
                }
                Next::Word(Some(text)) if text == "in" && words.is_none() => {
                    self.next_token()?;
                    let mut list = Vec::new();
                    loop {
                        match self.next_token()? {
                            Token::Word(word) => list.push(word),
                            Token::Op(Op::Semi) | Token::Newline => break,
                            _ => {
                                return Err(
                                    self.syntax("expected `;` or a newline after `for … in` words")
                                );
                            }
                        }
                    }
                    words = Some(list);
                    break;
                }
                _ => break,
            }
        }
        self.skip_newlines()?;
        self.expect_word("do")?;
        let body = self.parse_list(Stop::Words(&["done"]))?;
        self.expect_word("done")?;
        self.leave();
        let redirects = self.parse_trailing_redirects()?;
        Ok(Command::For {
            variable,
            words,
            body,
            redirects,
        })
    }

    /// `[[ … ]]`: inside, `&&`, `||`, `(`, `)`, `<` and `>` are operators of the test.
    fn parse_test(&mut self) -> Result<Command, ParseError> {
        self.next_token()?;
        let mut words = Vec::new();
        loop {
            let literal = |text: &str| Word {
                parts: vec![WordPart::Literal {
                    text: text.to_string(),
                    quoted: false,
                }],
            };
            match self.next_token()? {
                Token::Word(word) if bare_literal(&word) == Some("]]") => break,
                Token::Word(word) => words.push(word),
                Token::Op(op @ (Op::AndIf | Op::OrIf | Op::LParen | Op::RParen)) => {
                    words.push(literal(op.as_str()));
                }
                Token::Redirect {
                    fd: None,
                    op: op @ (RedirectOp::Read | RedirectOp::Write),
                } => words.push(literal(op.as_str())),
                Token::Eof => return Err(self.syntax("missing `]]`")),
                _ => return Err(self.unsupported("this operator inside `[[ ]]`")),
            }
        }
        let redirects = self.parse_trailing_redirects()?;
        Ok(Command::Test { words, redirects })
    }

    fn parse_trailing_redirects(&mut self) -> Result<Vec<Redirect>, ParseError> {
        let mut redirects = Vec::new();
        while self.peek_next()? == Next::Redirect {
            redirects.push(self.parse_redirect()?);
        }
        Ok(redirects)
    }

    fn parse_redirect(&mut self) -> Result<Redirect, ParseError> {
        let Token::Redirect { fd, op } = self.next_token()? else {
            return Err(self.syntax("expected a redirection"));
        };
        let Token::Word(word) = self.next_token()? else {
            return Err(self.syntax(format!("`{}` needs a target", op.as_str())));
        };
        let target = match op {
            RedirectOp::Heredoc { strip_tabs } => {
                let delimiter = word
                    .static_text()
                    .ok_or_else(|| self.unsupported("a here-document delimiter with expansions"))?;
                let cell = Rc::new(OnceCell::new());
                self.pending_heredocs.push(PendingHeredoc {
                    delimiter: delimiter.clone(),
                    quoted: word.any_quoted(),
                    strip_tabs,
                    cell: Rc::clone(&cell),
                });
                RedirectTarget::Heredoc(Heredoc {
                    delimiter,
                    quoted: word.any_quoted(),
                    body: cell,
                })
            }
            _ => RedirectTarget::Word(word),
        };
        Ok(Redirect { fd, op, target })
    }

    fn parse_simple(&mut self) -> Result<SimpleCommand, ParseError> {
        let mut command = SimpleCommand::default();
        loop {
            match self.peek_next()? {
                Next::Word(_) => {
                    let Token::Word(word) = self.next_token()? else {
                        return Err(self.syntax("expected a word"));
                    };
                    if command.words.is_empty()
                        && let Some(assignment) = as_assignment(&word)
                    {
                        command.assignments.push(assignment);
                    } else {
                        command.words.push(word);
                    }
                }
                Next::Redirect => command.redirects.push(self.parse_redirect()?),
                Next::Op(Op::LParen) => {
                    return Err(
                        if command.words.is_empty() && !command.assignments.is_empty() {
                            self.unsupported("array assignments `name=( … )`")
                        } else if command.words.len() == 1 {
                            self.unsupported("function definitions")
                        } else {
                            self.syntax("unexpected `(`")
                        },
                    );
                }
                _ => break,
            }
        }
        Ok(command)
    }
}
