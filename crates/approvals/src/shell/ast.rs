//! The syntax tree of the POSIX-shell subset Paddock understands.
//!
//! Everything the parser accepts is represented here exactly enough to decide what runs:
//! which programs, with which words, fed by what, writing where. Constructs outside the
//! subset never reach this tree; the parser refuses them (see [`super::ParseError`]).

use std::cell::OnceCell;
use std::rc::Rc;

/// A whole command line: and-or lists separated by `;`, `&` or newlines.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Script {
    pub items: Vec<ListItem>,
}

/// One and-or list and how it was terminated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListItem {
    pub and_or: AndOr,
    /// Ended by `&`: runs in the background.
    pub background: bool,
}

/// `a && b || c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AndOr {
    pub first: Pipeline,
    pub rest: Vec<(Connector, Pipeline)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    /// `&&`
    And,
    /// `||`
    Or,
}

/// `! a | b |& c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    pub negated: bool,
    pub commands: Vec<Command>,
    /// For each `|` between `commands[i]` and `commands[i + 1]`: true for `|&` (stderr too).
    pub stderr_piped: Vec<bool>,
}

/// One stage of a pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Simple(SimpleCommand),
    /// `( … )`
    Subshell {
        body: Script,
        redirects: Vec<Redirect>,
    },
    /// `{ …; }`
    Group {
        body: Script,
        redirects: Vec<Redirect>,
    },
    /// `if c; then b; elif c2; then b2; else e; fi`
    If {
        branches: Vec<(Script, Script)>,
        else_body: Option<Script>,
        redirects: Vec<Redirect>,
    },
    /// `while c; do b; done` and `until c; do b; done`
    Loop {
        until: bool,
        condition: Script,
        body: Script,
        redirects: Vec<Redirect>,
    },
    /// `for name in words; do b; done` (`words` is `None` for the implicit `"$@"`).
    For {
        variable: String,
        words: Option<Vec<Word>>,
        body: Script,
        redirects: Vec<Redirect>,
    },
    /// `[[ … ]]`: a conditional expression; its words are operands and operators.
    Test {
        words: Vec<Word>,
        redirects: Vec<Redirect>,
    },
}

impl Command {
    pub fn redirects(&self) -> &[Redirect] {
        match self {
            Command::Simple(simple) => &simple.redirects,
            Command::Subshell { redirects, .. }
            | Command::Group { redirects, .. }
            | Command::If { redirects, .. }
            | Command::Loop { redirects, .. }
            | Command::For { redirects, .. }
            | Command::Test { redirects, .. } => redirects,
        }
    }
}

/// `NAME=value … program words … redirections`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleCommand {
    pub assignments: Vec<Assignment>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

/// `NAME=value` or `NAME+=value` before a command (or alone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub name: String,
    pub append: bool,
    pub value: Word,
}

/// A shell word: the concatenation of its parts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Word {
    pub parts: Vec<WordPart>,
}

/// A piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WordPart {
    /// Text taken literally (quotes removed, escapes resolved).
    Literal { text: String, quoted: bool },
    /// `$name`, `${…}` or a special parameter, as written.
    Parameter { text: String, quoted: bool },
    /// `$( … )` or `` ` … ` ``.
    CommandSubstitution { script: Script, quoted: bool },
    /// `<( … )` (the command's output is read) or `>( … )` (written to).
    ProcessSubstitution { script: Script, output: bool },
    /// `$(( … ))`, as written.
    Arithmetic { text: String },
    /// Unquoted `*`, `?` or a `[…]` class.
    Glob { text: String },
    /// Unquoted `{a,b}` or `{1..9}` brace expansion, as written.
    Brace { text: String },
    /// Unquoted `~` or `~user` at the start of a word.
    Tilde { user: String },
}

impl Word {
    /// The word's text when it is fully known before the shell runs (no expansions, no globs).
    pub fn static_text(&self) -> Option<String> {
        let mut text = String::new();
        for part in &self.parts {
            match part {
                WordPart::Literal { text: t, .. } => text.push_str(t),
                _ => return None,
            }
        }
        Some(text)
    }

    /// True when any part was quoted (used for heredoc delimiters).
    pub fn any_quoted(&self) -> bool {
        self.parts.iter().any(|p| {
            matches!(
                p,
                WordPart::Literal { quoted: true, .. } | WordPart::Parameter { quoted: true, .. }
            )
        })
    }

    /// A readable form with quotes removed: literals as text, expansions as written
    /// (`$HOME`, `~`, `*`, `$(…)`). Used for display and for matching rule arguments.
    pub fn display(&self) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                WordPart::Literal { text, .. } => out.push_str(text),
                WordPart::Parameter { text, .. } => out.push_str(&simplify_parameter(text)),
                WordPart::CommandSubstitution { .. } => out.push_str("$(…)"),
                WordPart::ProcessSubstitution { output: false, .. } => out.push_str("<(…)"),
                WordPart::ProcessSubstitution { output: true, .. } => out.push_str(">(…)"),
                WordPart::Arithmetic { text }
                | WordPart::Glob { text }
                | WordPart::Brace { text } => out.push_str(text),
                WordPart::Tilde { user } => {
                    out.push('~');
                    out.push_str(user);
                }
            }
        }
        out
    }

    /// The scripts nested in this word (command and process substitutions), with whether
    /// each one's output is written to (`>( … )`) rather than read.
    pub fn substitutions(&self) -> impl Iterator<Item = (&Script, bool)> {
        self.parts.iter().filter_map(|part| match part {
            WordPart::CommandSubstitution { script, .. } => Some((script, false)),
            WordPart::ProcessSubstitution { script, output } => Some((script, *output)),
            _ => None,
        })
    }
}

/// `${NAME}` → `$NAME` when the braces hold a bare name; anything else unchanged.
fn simplify_parameter(text: &str) -> String {
    if let Some(inner) = text.strip_prefix("${").and_then(|t| t.strip_suffix('}'))
        && !inner.is_empty()
        && inner.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
    {
        return format!("${inner}");
    }
    text.to_string()
}

/// A redirection: `[fd]op target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The explicit file descriptor (`2>`), if written.
    pub fd: Option<u32>,
    pub op: RedirectOp,
    pub target: RedirectTarget,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    /// `<`
    Read,
    /// `>`
    Write,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `&>` (stdout and stderr)
    WriteBoth,
    /// `&>>`
    AppendBoth,
    /// `>&` (a descriptor, or in bash a file for both streams)
    DupOutput,
    /// `<&`
    DupInput,
    /// `<<<`
    HereString,
    /// `<<` or `<<-` (`strip_tabs`)
    Heredoc { strip_tabs: bool },
}

impl RedirectOp {
    pub fn as_str(self) -> &'static str {
        match self {
            RedirectOp::Read => "<",
            RedirectOp::Write => ">",
            RedirectOp::Append => ">>",
            RedirectOp::Clobber => ">|",
            RedirectOp::ReadWrite => "<>",
            RedirectOp::WriteBoth => "&>",
            RedirectOp::AppendBoth => "&>>",
            RedirectOp::DupOutput => ">&",
            RedirectOp::DupInput => "<&",
            RedirectOp::HereString => "<<<",
            RedirectOp::Heredoc { strip_tabs: false } => "<<",
            RedirectOp::Heredoc { strip_tabs: true } => "<<-",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedirectTarget {
    Word(Word),
    Heredoc(Heredoc),
}

/// A here-document. Its body is read after the line that opened it, so it is filled in when
/// the parser reaches that line's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heredoc {
    pub delimiter: String,
    /// A quoted delimiter (`<<'EOF'`) turns off expansions in the body.
    pub quoted: bool,
    pub body: Rc<OnceCell<HeredocBody>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HeredocBody {
    pub text: String,
    /// Command substitutions found in an unquoted body (they run when the shell reads it).
    pub substitutions: Vec<Script>,
}

impl Heredoc {
    pub fn body_text(&self) -> &str {
        self.body.get().map_or("", |b| b.text.as_str())
    }

    pub fn substitutions(&self) -> &[Script] {
        self.body.get().map_or(&[], |b| b.substitutions.as_slice())
    }
}
