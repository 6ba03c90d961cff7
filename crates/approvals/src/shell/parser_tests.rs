use pretty_assertions::assert_eq;

use super::*;

/// The static words of every simple command, in source order, descending into nested
/// scripts (substitutions first, as they appear in words).
fn commands(script: &Script) -> Vec<Vec<String>> {
    fn word_scripts(word: &Word, out: &mut Vec<Vec<String>>) {
        for (script, _) in word.substitutions() {
            walk(script, out);
        }
    }
    fn walk_command(command: &Command, out: &mut Vec<Vec<String>>) {
        match command {
            Command::Simple(simple) => {
                for a in &simple.assignments {
                    word_scripts(&a.value, out);
                }
                for w in &simple.words {
                    word_scripts(w, out);
                }
                out.push(simple.words.iter().map(Word::display).collect());
            }
            Command::Subshell { body, .. } | Command::Group { body, .. } => walk(body, out),
            Command::If {
                branches,
                else_body,
                ..
            } => {
                for (c, b) in branches {
                    walk(c, out);
                    walk(b, out);
                }
                if let Some(e) = else_body {
                    walk(e, out);
                }
            }
            Command::Loop {
                condition, body, ..
            } => {
                walk(condition, out);
                walk(body, out);
            }
            Command::For { body, .. } => walk(body, out),
            Command::Test { words, .. } => out.push(words.iter().map(Word::display).collect()),
        }
    }
    fn walk(script: &Script, out: &mut Vec<Vec<String>>) {
        for item in &script.items {
            walk_command_pipeline(&item.and_or.first, out);
            for (_, p) in &item.and_or.rest {
                walk_command_pipeline(p, out);
            }
        }
    }
    fn walk_command_pipeline(p: &Pipeline, out: &mut Vec<Vec<String>>) {
        for c in &p.commands {
            walk_command(c, out);
        }
    }
    let mut out = Vec::new();
    walk(script, &mut out);
    out
}

fn words(source: &str) -> Vec<Vec<String>> {
    let script = parse(source).unwrap_or_else(|e| panic!("{source:?}: {e}"));
    commands(&script)
}

fn v(items: &[&[&str]]) -> Vec<Vec<String>> {
    items
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect()
}

fn simple(source: &str) -> SimpleCommand {
    let script = parse(source).unwrap();
    match &script.items[0].and_or.first.commands[0] {
        Command::Simple(s) => s.clone(),
        other => panic!("not simple: {other:?}"),
    }
}

#[test]
fn quoting_removes_quotes_and_keeps_spaces() {
    assert_eq!(
        words(r#"echo 'a b' "c d" e\ f 'it'\''s' "q\"x" "back\\slash" "lit\n""#),
        v(&[&[
            "echo",
            "a b",
            "c d",
            "e f",
            "it's",
            "q\"x",
            "back\\slash",
            "lit\\n"
        ]])
    );
    assert_eq!(words("echo ''"), v(&[&["echo", ""]]));
    assert_eq!(words(r#"echo """#), v(&[&["echo", ""]]));
    assert_eq!(words("echo $'a\\tb\\x41\\101'"), v(&[&["echo", "a\tbAA"]]));
}

#[test]
fn quoted_words_are_static_and_expansions_are_not() {
    let cmd = simple(r#"git "status" '--short' "$X" ~/x *.rs {a,b} $(date)"#);
    let statics: Vec<Option<String>> = cmd.words.iter().map(Word::static_text).collect();
    assert_eq!(
        statics,
        vec![
            Some("git".to_string()),
            Some("status".to_string()),
            Some("--short".to_string()),
            None,
            None,
            None,
            None,
            None
        ]
    );
    // A quoted glob is a literal; an unquoted one is not.
    assert_eq!(
        simple("ls '*'").words[1].static_text(),
        Some("*".to_string())
    );
    assert_eq!(simple("ls *").words[1].static_text(), None);
    // `{}` and `[` alone are literals (find -exec, test).
    assert_eq!(
        simple("find . -exec {} ;").words[3].static_text(),
        Some("{}".to_string())
    );
    assert_eq!(
        simple("[ -f x ]").words[0].static_text(),
        Some("[".to_string())
    );
}

#[test]
fn operators_split_commands() {
    assert_eq!(
        words("a && b || c; d & e | f |& g\nh"),
        v(&[
            &["a"],
            &["b"],
            &["c"],
            &["d"],
            &["e"],
            &["f"],
            &["g"],
            &["h"]
        ])
    );
    let script = parse("a & b").unwrap();
    assert!(script.items[0].background);
    assert!(!script.items[1].background);
    let script = parse("a |& b").unwrap();
    assert_eq!(script.items[0].and_or.first.stderr_piped, vec![true]);
}

#[test]
fn operators_inside_quotes_are_text() {
    assert_eq!(
        words(r#"echo "a && b; c | d" 'e > f'"#),
        v(&[&["echo", "a && b; c | d", "e > f"]])
    );
}

#[test]
fn substitutions_are_parsed_as_scripts() {
    assert_eq!(
        words("echo $(git rev-parse HEAD) `date -u` \"x $(id -u)\""),
        v(&[
            &["git", "rev-parse", "HEAD"],
            &["date", "-u"],
            &["id", "-u"],
            &["echo", "$(…)", "$(…)", "x $(…)"]
        ])
    );
    // Nesting: a substitution inside a substitution inside double quotes.
    assert_eq!(
        words(r#"echo "$(echo "$(rm -rf x)")""#),
        v(&[&["rm", "-rf", "x"], &["echo", "$(…)"], &["echo", "$(…)"]])
    );
    // Backquotes nested with escapes.
    assert_eq!(
        words(r"echo `echo \`whoami\``"),
        v(&[&["whoami"], &["echo", "$(…)"], &["echo", "$(…)"]])
    );
    // A `)` inside quotes does not end a substitution.
    assert_eq!(
        words("echo $(echo ')')"),
        v(&[&["echo", ")"], &["echo", "$(…)"]])
    );
}

#[test]
fn process_substitution_is_a_script() {
    let cmd = simple("diff <(sort a) >(tee b)");
    let subs: Vec<bool> = cmd
        .words
        .iter()
        .flat_map(|w| w.substitutions().map(|(_, o)| o))
        .collect();
    assert_eq!(subs, vec![false, true]);
    assert_eq!(
        words("bash <(curl x)"),
        v(&[&["curl", "x"], &["bash", "<(…)"]])
    );
}

#[test]
fn subshells_groups_and_control_flow() {
    assert_eq!(
        words("(cd x && make) ; { a; b; }"),
        v(&[&["cd", "x"], &["make"], &["a"], &["b"]])
    );
    assert_eq!(
        words("if test -f x; then cat x; elif true; then echo; else rm y; fi"),
        v(&[
            &["test", "-f", "x"],
            &["cat", "x"],
            &["true"],
            &["echo"],
            &["rm", "y"]
        ])
    );
    assert_eq!(
        words("for f in *.rs; do wc -l \"$f\"; done"),
        v(&[&["wc", "-l", "$f"]])
    );
    assert_eq!(
        words("while read l; do echo $l; done < f"),
        v(&[&["read", "l"], &["echo", "$l"]])
    );
    assert_eq!(
        words("until false\ndo\n  x\ndone"),
        v(&[&["false"], &["x"]])
    );
    assert_eq!(
        words("[[ -n $a && $b < c ]] && d"),
        v(&[&["-n", "$a", "&&", "$b", "<", "c"], &["d"]])
    );
    // `{` and `}` are reserved only as whole words at a command's start.
    assert_eq!(words("echo { }"), v(&[&["echo", "{", "}"]]));
}

#[test]
fn assignments_before_the_command_are_not_words() {
    let cmd = simple("FOO=1 BAR+=x git push");
    assert_eq!(cmd.assignments.len(), 2);
    assert_eq!(cmd.assignments[0].name, "FOO");
    assert!(cmd.assignments[1].append);
    assert_eq!(cmd.words.len(), 2);
    // After the command name, NAME=value is an ordinary argument.
    assert_eq!(
        simple("dd of=/dev/sda").words[1].static_text(),
        Some("of=/dev/sda".to_string())
    );
    // A quoted name is not an assignment.
    assert!(simple("'A'=1 x").assignments.is_empty());
    // `~` after `=` in an assignment expands.
    assert_eq!(simple("X=~/y cmd").assignments[0].value.static_text(), None);
}

#[test]
fn redirections_are_parsed_with_descriptors() {
    let cmd = simple("cmd <in >out 2>>err &>both 2>&1 >&2 3<>rw >|clob <<<word");
    let got: Vec<(Option<u32>, &str, String)> = cmd
        .redirects
        .iter()
        .map(|r| {
            let target = match &r.target {
                RedirectTarget::Word(w) => w.display(),
                RedirectTarget::Heredoc(h) => h.delimiter.clone(),
            };
            (r.fd, r.op.as_str(), target)
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (None, "<", "in".to_string()),
            (None, ">", "out".to_string()),
            (Some(2), ">>", "err".to_string()),
            (None, "&>", "both".to_string()),
            (Some(2), ">&", "1".to_string()),
            (None, ">&", "2".to_string()),
            (Some(3), "<>", "rw".to_string()),
            (None, ">|", "clob".to_string()),
            (None, "<<<", "word".to_string()),
        ]
    );
    assert_eq!(cmd.words.len(), 1);
    // Digits not directly before `>` are a word.
    assert_eq!(simple("echo 2 > x").words.len(), 2);
}

#[test]
fn heredoc_bodies_are_read_after_the_line() {
    let script = parse("cat <<EOF > out\nhello $(whoami)\nEOF\necho done").unwrap();
    let Command::Simple(cat) = &script.items[0].and_or.first.commands[0] else {
        panic!()
    };
    let RedirectTarget::Heredoc(h) = &cat.redirects[0].target else {
        panic!()
    };
    assert_eq!(h.body_text(), "hello $(whoami)\n");
    assert_eq!(h.substitutions().len(), 1);
    assert_eq!(script.items.len(), 2);

    // A quoted delimiter turns expansion off; `<<-` strips leading tabs.
    let script = parse("cat <<-'X'\n\t$(rm -rf ~)\n\tX\n").unwrap();
    let Command::Simple(cat) = &script.items[0].and_or.first.commands[0] else {
        panic!()
    };
    let RedirectTarget::Heredoc(h) = &cat.redirects[0].target else {
        panic!()
    };
    assert_eq!(h.body_text(), "$(rm -rf ~)\n");
    assert!(h.substitutions().is_empty());

    // Two heredocs on one line are read in order.
    let script = parse("a <<A; b <<B\n1\nA\n2\nB\nc").unwrap();
    assert_eq!(commands(&script), v(&[&["a"], &["b"], &["c"]]));
}

#[test]
fn comments_and_continuations() {
    assert_eq!(words("git status # && rm -rf /"), v(&[&["git", "status"]]));
    assert_eq!(words("git \\\n  status"), v(&[&["git", "status"]]));
    // `#` inside a word is not a comment.
    assert_eq!(words("echo a#b"), v(&[&["echo", "a#b"]]));
}

#[test]
fn errors_name_what_was_wrong() {
    let cases: &[(&str, ParseErrorKind, &str)] = &[
        (
            "echo 'x",
            ParseErrorKind::Syntax,
            "unterminated single quote",
        ),
        (
            "echo \"x",
            ParseErrorKind::Syntax,
            "unterminated double quote",
        ),
        ("echo $(x", ParseErrorKind::Syntax, "missing `)`"),
        ("echo `x", ParseErrorKind::Syntax, "unterminated backquote"),
        (
            "a &&",
            ParseErrorKind::Syntax,
            "expected a command, found end",
        ),
        ("| a", ParseErrorKind::Syntax, "expected a command"),
        ("a ;; b", ParseErrorKind::Unsupported, "case"),
        (
            "case x in y) z;; esac",
            ParseErrorKind::Unsupported,
            "`case`",
        ),
        (
            "f() { rm -rf /; }",
            ParseErrorKind::Unsupported,
            "function definitions",
        ),
        ("a=(1 2)", ParseErrorKind::Unsupported, "array"),
        ("((x++))", ParseErrorKind::Unsupported, "arithmetic"),
        (
            "echo ${x:-$(rm y)}",
            ParseErrorKind::Unsupported,
            "inside `${ }`",
        ),
        (
            "echo $(( $(rm y) ))",
            ParseErrorKind::Unsupported,
            "inside `$(( ))`",
        ),
        ("if a; then b", ParseErrorKind::Syntax, "fi"),
        ("{ a }", ParseErrorKind::Syntax, "}"),
        ("echo >", ParseErrorKind::Syntax, "needs a target"),
        ("cat <<$X\n", ParseErrorKind::Unsupported, "delimiter"),
        ("echo $'\\q'", ParseErrorKind::Unsupported, "escape"),
    ];
    for (source, kind, fragment) in cases {
        let err = parse(source).expect_err(source);
        assert_eq!(err.kind, *kind, "{source}: {err}");
        assert!(err.to_string().contains(fragment), "{source}: {err}");
    }
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    let deep = format!("{}x{}", "$(".repeat(200), ")".repeat(200));
    let err = parse(&deep).unwrap_err();
    assert_eq!(err.kind, ParseErrorKind::Unsupported);
    let deep = format!("{}x{}", "( ".repeat(200), " )".repeat(200));
    assert_eq!(parse(&deep).unwrap_err().kind, ParseErrorKind::Unsupported);
}

#[test]
fn canonical_text_ignores_spelling_but_not_meaning() {
    let canon = |s: &str| canonical(&parse(s).unwrap());
    assert_eq!(canon("git   status"), canon("git status"));
    assert_eq!(canon("'git' \"status\""), canon("git status"));
    assert_eq!(canon("echo 'a b'"), canon("echo a\\ b"));
    assert_eq!(canon("a&&b"), canon("a && b"));
    assert_ne!(canon("ls *"), canon("ls '*'"));
    assert_ne!(canon("echo a b"), canon("echo 'a b'"));
    assert_ne!(canon("echo $x"), canon("echo '$x'"));
    assert_ne!(canon("a; b"), canon("a && b"));
    assert_ne!(canon("cat <<E\nx\nE\n"), canon("cat <<E\ny\nE\n"));
    assert_eq!(canon("git status && git push"), "git status && git push;");
}
