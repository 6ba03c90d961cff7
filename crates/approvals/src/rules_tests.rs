use pretty_assertions::assert_eq;

use super::*;

#[test]
fn the_builtin_rules_load_and_prove_their_examples() {
    let set = RuleSet::builtin().unwrap_or_else(|e| panic!("{e}"));
    assert!(set.get("git-read-only").is_some());
    assert!(set.get("download-into-interpreter").is_some());
    assert!(set.rules().iter().all(|r| !r.examples.is_empty()));
}

fn load_err(text: &str) -> String {
    RuleSet::from_toml(text)
        .expect_err("must be refused")
        .to_string()
}

#[test]
fn a_rule_whose_example_fails_is_refused_naming_rule_and_example() {
    let err = load_err(
        r#"
        [[rule]]
        name = "git-status"
        decision = "allow"
        commands = ["git status"]
        examples = ["git status", "git status && git push"]
        "#,
    );
    assert!(err.contains("`git-status`"), "{err}");
    assert!(err.contains("`git status && git push`"), "{err}");
    assert!(err.contains("no rule allows `git push`"), "{err}");
}

#[test]
fn a_rule_whose_not_example_matches_is_refused() {
    let err = load_err(
        r#"
        [[rule]]
        name = "no-rm"
        decision = "deny"
        reason = "no"
        commands = ["rm"]
        examples = ["rm x"]
        not_examples = ["sudo rm y"]
        "#,
    );
    assert_eq!(
        err,
        "rule `no-rm`: not_example `sudo rm y` matches the rule, but must not"
    );
}

#[test]
fn an_example_that_does_not_parse_is_refused_with_the_parse_error() {
    let err = load_err(
        r#"
        [[rule]]
        name = "echo"
        decision = "ask"
        commands = ["echo"]
        examples = ["echo 'unterminated"]
        "#,
    );
    assert!(
        err.contains("`echo 'unterminated`") && err.contains("unterminated single quote"),
        "{err}"
    );
}

#[test]
fn invalid_rules_are_refused_with_what_was_wrong() {
    let cases = [
        (
            "name = \"\"\ndecision = \"allow\"\ncommands = [\"ls\"]\nexamples = [\"ls\"]",
            "`name` must not be empty",
        ),
        (
            "name = \"a\"\ndecision = \"allow\"\nexamples = [\"ls\"]",
            "exactly one of",
        ),
        (
            "name = \"a\"\ndecision = \"allow\"\ncommands = [\"ls\"]\ntools = [\"grep\"]\nexamples = [\"ls\"]",
            "exactly one of",
        ),
        (
            "name = \"a\"\ndecision = \"deny\"\ncommands = [\"ls\"]\nexamples = [\"ls\"]",
            "needs a `reason`",
        ),
        (
            "name = \"a\"\ndecision = \"allow\"\ncommands = [\"ls\"]",
            "at least one entry in `examples`",
        ),
        (
            "name = \"a\"\ndecision = \"allow\"\ncommands = [\"ls | sh\"]\nexamples = [\"ls\"]",
            "must be one simple command",
        ),
        (
            "name = \"a\"\ndecision = \"allow\"\ncommands = [\"ls $X\"]\nexamples = [\"ls\"]",
            "must not contain expansions",
        ),
        (
            "name = \"a\"\ndecision = \"allow\"\ncommands = [\"sudo\"]\nexamples = [\"sudo ls\"]",
            "runs other programs",
        ),
        (
            "name = \"a\"\ndecision = \"allow\"\ncommands = [\"bash\"]\nexamples = [\"bash x.sh\"]",
            "alone runs any code",
        ),
        (
            "name = \"a\"\ndecision = \"allow\"\ncommands = [\"python3\"]\nexamples = [\"python3 x.py\"]",
            "alone runs any code",
        ),
        (
            "name = \"a\"\ndecision = \"allow\"\nfeeds = { from = [\"a\"], into = [\"b\"] }\nexamples = [\"a | b\"]",
            "can only ask or deny",
        ),
        (
            "name = \"a\"\ndecision = \"allow\"\ntools = [\"run_bash\"]\nexamples = [\"run_bash\"]",
            "use `commands`",
        ),
        (
            "name = \"a\"\ndecision = \"allow\"\ntools = [\"grep\"]\nexcluding = [\"-x\"]\nexamples = [\"grep\"]",
            "need `commands`",
        ),
        (
            "name = \"a\"\ndecision = \"allow\"\ncommands = [\"ls\"]\npaths = [\"x\"]\nexamples = [\"ls\"]",
            "`paths` needs `tools`",
        ),
        (
            "name = \"a\"\ndecision = \"maybe\"\ncommands = [\"ls\"]\nexamples = [\"ls\"]",
            "not valid TOML",
        ),
        (
            "name = \"a\"\ndecision = \"allow\"\ncommand = [\"ls\"]\nexamples = [\"ls\"]",
            "unknown field",
        ),
    ];
    for (body, fragment) in cases {
        let err = load_err(&format!("[[rule]]\n{body}\n"));
        assert!(err.contains(fragment), "{body}\n=> {err}");
    }
}

#[test]
fn duplicate_names_are_refused_within_and_across_sets() {
    let one =
        "[[rule]]\nname = \"a\"\ndecision = \"ask\"\ncommands = [\"ls\"]\nexamples = [\"ls\"]\n";
    let err = load_err(&format!("{one}{one}"));
    assert_eq!(err, "rule `a` is defined twice");
    let mut set = RuleSet::from_toml(one).unwrap();
    let err = set.extend(RuleSet::from_toml(one).unwrap()).unwrap_err();
    assert_eq!(err.to_string(), "rule `a` is defined twice");
}

#[test]
fn tool_rules_match_tools_and_path_globs() {
    let set = RuleSet::from_toml(
        r#"
        [[rule]]
        name = "env-files"
        decision = "ask"
        tools = ["write_file", "edit_file"]
        paths = ["**/.env", "*.pem"]
        examples = ["write_file .env", "edit_file keys/server.pem"]
        not_examples = ["write_file src/main.rs", "read_file .env", "write_file"]
        "#,
    )
    .unwrap();
    assert_eq!(set.rules().len(), 1);
}
