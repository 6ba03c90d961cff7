//! The canonical text of a parsed command: one spelling per meaning, so that two commands
//! that differ only in spacing or quoting style get the same approval key, and two commands
//! that mean different things never do. It is a key, not something to run: here-document
//! bodies are written inline as `<<'DELIM'{json-escaped body}`.

use super::ast::{
    AndOr, Command, Connector, Pipeline, Redirect, RedirectTarget, Script, SimpleCommand, Word,
    WordPart,
};

/// The canonical text of `script`.
pub fn canonical(script: &Script) -> String {
    let mut out = String::new();
    script_into(script, &mut out);
    out
}

fn script_into(script: &Script, out: &mut String) {
    for (i, item) in script.items.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        and_or_into(&item.and_or, out);
        out.push_str(if item.background { " &" } else { ";" });
    }
}

fn and_or_into(and_or: &AndOr, out: &mut String) {
    pipeline_into(&and_or.first, out);
    for (connector, pipeline) in &and_or.rest {
        out.push_str(match connector {
            Connector::And => " && ",
            Connector::Or => " || ",
        });
        pipeline_into(pipeline, out);
    }
}

fn pipeline_into(pipeline: &Pipeline, out: &mut String) {
    if pipeline.negated {
        out.push_str("! ");
    }
    for (i, command) in pipeline.commands.iter().enumerate() {
        if i > 0 {
            let both = pipeline.stderr_piped.get(i - 1).copied().unwrap_or(false);
            out.push_str(if both { " |& " } else { " | " });
        }
        command_into(command, out);
    }
}

fn command_into(command: &Command, out: &mut String) {
    match command {
        Command::Simple(simple) => simple_into(simple, out),
        Command::Subshell { body, .. } => {
            out.push_str("( ");
            script_into(body, out);
            out.push_str(" )");
        }
        Command::Group { body, .. } => {
            out.push_str("{ ");
            script_into(body, out);
            out.push_str(" }");
        }
        Command::If {
            branches,
            else_body,
            ..
        } => {
            for (i, (condition, body)) in branches.iter().enumerate() {
                out.push_str(if i == 0 { "if " } else { " elif " });
                script_into(condition, out);
                out.push_str(" then ");
                script_into(body, out);
            }
            if let Some(body) = else_body {
                out.push_str(" else ");
                script_into(body, out);
            }
            out.push_str(" fi");
        }
        Command::Loop {
            until,
            condition,
            body,
            ..
        } => {
            out.push_str(if *until { "until " } else { "while " });
            script_into(condition, out);
            out.push_str(" do ");
            script_into(body, out);
            out.push_str(" done");
        }
        Command::For {
            variable,
            words,
            body,
            ..
        } => {
            out.push_str("for ");
            out.push_str(variable);
            if let Some(words) = words {
                out.push_str(" in");
                for word in words {
                    out.push(' ');
                    word_into(word, out);
                }
            }
            out.push_str("; do ");
            script_into(body, out);
            out.push_str(" done");
        }
        Command::Test { words, .. } => {
            out.push_str("[[");
            for word in words {
                out.push(' ');
                word_into(word, out);
            }
            out.push_str(" ]]");
        }
    }
    for redirect in command.redirects() {
        out.push(' ');
        redirect_into(redirect, out);
    }
}

fn simple_into(simple: &SimpleCommand, out: &mut String) {
    let mut first = true;
    let mut space = |out: &mut String| {
        if !first {
            out.push(' ');
        }
        first = false;
    };
    for assignment in &simple.assignments {
        space(out);
        out.push_str(&assignment.name);
        out.push_str(if assignment.append { "+=" } else { "=" });
        word_into(&assignment.value, out);
    }
    for word in &simple.words {
        space(out);
        word_into(word, out);
    }
    // Redirections of a simple command are written after its words (their meaning does not
    // depend on where they appear among the words).
    for redirect in &simple.redirects {
        space(out);
        redirect_into(redirect, out);
    }
}

fn redirect_into(redirect: &Redirect, out: &mut String) {
    if let Some(fd) = redirect.fd {
        out.push_str(&fd.to_string());
    }
    out.push_str(redirect.op.as_str());
    match &redirect.target {
        RedirectTarget::Word(word) => word_into(word, out),
        RedirectTarget::Heredoc(heredoc) => {
            quote_into(&heredoc.delimiter, heredoc.quoted, out);
            out.push_str(&serde_json::Value::String(heredoc.body_text().to_string()).to_string());
        }
    }
}

fn word_into(word: &Word, out: &mut String) {
    if word.parts.is_empty() {
        out.push_str("''");
    }
    let mut literal: Option<String> = None;
    for part in &word.parts {
        if let WordPart::Literal { text, .. } = part {
            literal.get_or_insert_with(String::new).push_str(text);
            continue;
        }
        if let Some(text) = literal.take() {
            quote_into(&text, false, out);
        }
        match part {
            WordPart::Literal { .. } => {}
            WordPart::Parameter { text, quoted } => {
                if *quoted {
                    out.push('"');
                    out.push_str(text);
                    out.push('"');
                } else {
                    out.push_str(text);
                }
            }
            WordPart::CommandSubstitution { script, quoted } => {
                out.push_str(if *quoted { "\"$(" } else { "$(" });
                script_into(script, out);
                out.push_str(if *quoted { ")\"" } else { ")" });
            }
            WordPart::ProcessSubstitution { script, output } => {
                out.push_str(if *output { ">(" } else { "<(" });
                script_into(script, out);
                out.push(')');
            }
            WordPart::Arithmetic { text } | WordPart::Glob { text } | WordPart::Brace { text } => {
                out.push_str(text);
            }
            WordPart::Tilde { user } => {
                out.push('~');
                out.push_str(user);
            }
        }
    }
    if let Some(text) = literal {
        quote_into(&text, false, out);
    }
}

/// Literal text: bare when it has only safe characters, otherwise single-quoted.
fn quote_into(text: &str, force: bool, out: &mut String) {
    let safe = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%^".contains(c));
    if safe && !force {
        out.push_str(text);
        return;
    }
    out.push('\'');
    out.push_str(&text.replace('\'', r"'\''"));
    out.push('\'');
}
