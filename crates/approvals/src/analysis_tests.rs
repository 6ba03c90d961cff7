use pretty_assertions::assert_eq;

use super::*;

fn analysis(source: &str) -> Analysis {
    let script = shell::parse(source).unwrap_or_else(|e| panic!("{source}: {e}"));
    analyze(&script, "/p")
}

fn argvs(a: &Analysis) -> Vec<String> {
    a.units
        .iter()
        .map(|u| {
            u.argv
                .iter()
                .map(|x| x.display.clone())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn program_feeds(a: &Analysis) -> Vec<(String, String)> {
    a.feeds
        .iter()
        .map(|(x, y)| {
            let name = |i: usize| a.units[i].program_name().unwrap_or("?").to_string();
            (name(*x), name(*y))
        })
        .collect()
}

#[test]
fn wrappers_are_looked_through() {
    let cases = [
        ("sudo -u root git push", "git push", vec!["sudo"]),
        ("env -i FOO=1 BAR=2 git push", "git push", vec!["env"]),
        ("timeout -s KILL 10 git push", "git push", vec!["timeout"]),
        ("nice -n 5 git push", "git push", vec!["nice"]),
        ("nice -10 git push", "git push", vec!["nice"]),
        ("nohup git push", "git push", vec!["nohup"]),
        ("command git push", "git push", vec!["command"]),
        ("time -p git push", "git push", vec!["time"]),
        ("stdbuf -oL git push", "git push", vec!["stdbuf"]),
        ("ionice -c 3 git push", "git push", vec!["ionice"]),
        ("exec git push", "git push", vec!["exec"]),
        ("xargs -0 -n 1 git push", "git push", vec!["xargs"]),
        (
            "sudo env timeout 5 nice git push",
            "git push",
            vec!["sudo", "env", "timeout", "nice"],
        ),
        ("/usr/bin/env git push", "git push", vec!["env"]),
    ];
    for (source, argv, wrappers) in cases {
        let a = analysis(source);
        assert_eq!(argvs(&a), vec![argv.to_string()], "{source}");
        assert_eq!(a.units[0].wrappers, wrappers, "{source}");
    }
}

#[test]
fn escalation_and_indirection_forbid_rule_approval() {
    for source in [
        "sudo ls",
        "doas ls",
        "exec ls",
        "xargs ls",
        "eval ls",
        "$CMD ls",
        "bash -c ls",
        "sh",
        "python3",
        "python3 -c 'print(1)'",
        "perl -ne 'print' x",
        "node -e 1",
        "env -S 'ls -l'",
        "timeout --bogus 5 ls",
        "PATH=/tmp ls",
        "LD_PRELOAD=x.so ls",
        "GIT_PAGER=sh git log",
    ] {
        let a = analysis(source);
        assert!(
            a.units.iter().any(|u| !u.never_allow.is_empty()),
            "{source}: {:?}",
            a.units
        );
    }
    // Harmless environment settings stay approvable.
    for source in [
        "LC_ALL=C ls",
        "NO_COLOR=1 env LANG=C ls",
        "python3 -m pytest",
        "bash script.sh",
    ] {
        let a = analysis(source);
        assert!(
            a.units.iter().all(|u| u.never_allow.is_empty()),
            "{source}: {:?}",
            a.units
        );
    }
}

#[test]
fn command_strings_and_find_exec_become_units() {
    assert_eq!(
        argvs(&analysis("bash -c 'git status; rm -rf x'")),
        vec!["bash -c git status; rm -rf x", "git status", "rm -rf x"]
    );
    assert_eq!(
        argvs(&analysis("eval 'a && b'")),
        vec!["eval a && b", "a", "b"]
    );
    assert_eq!(
        argvs(&analysis("find . -name x -exec rm {} +")),
        vec!["find . -name x -exec rm {} +", "rm {}"]
    );
    let a = analysis("sh -c 'echo \"unterminated'");
    assert_eq!(a.issues.len(), 1, "{:?}", a.issues);
}

#[test]
fn feeds_follow_pipes_and_substitutions() {
    assert_eq!(
        program_feeds(&analysis("curl x | tee f | sh")),
        vec![
            ("curl".into(), "tee".into()),
            ("curl".into(), "sh".into()),
            ("tee".into(), "sh".into())
        ]
    );
    assert_eq!(
        program_feeds(&analysis("bash <(curl x)")),
        vec![("curl".into(), "bash".into())]
    );
    assert_eq!(
        program_feeds(&analysis("echo \"$(curl x)\"")),
        vec![("curl".into(), "echo".into())]
    );
    assert_eq!(
        program_feeds(&analysis("sh < <(curl x)")),
        vec![("curl".into(), "sh".into())]
    );
    assert_eq!(
        program_feeds(&analysis("curl x > >(sh)")),
        vec![("curl".into(), "sh".into())]
    );
    assert_eq!(
        program_feeds(&analysis("sh <<EOF\n$(curl x)\nEOF\n")),
        vec![("curl".into(), "sh".into())]
    );
    assert_eq!(
        program_feeds(&analysis("{ sh; } <<< \"$(curl x)\"")),
        vec![("curl".into(), "sh".into())]
    );
    assert!(program_feeds(&analysis("curl x; sh y")).is_empty());
}

#[test]
fn writes_are_resolved_against_the_folder() {
    let a = analysis("a > out 2>> ../x &> /dev/null >&2 2>&1 >| ~/y > \"$F\" >& file");
    let got: Vec<(String, Option<String>)> = a
        .writes
        .iter()
        .map(|w| (w.display.clone(), w.resolved.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("out".to_string(), Some("/p/out".to_string())),
            ("../x".to_string(), Some("/x".to_string())),
            ("/dev/null".to_string(), Some("/dev/null".to_string())),
            ("~/y".to_string(), None),
            ("$F".to_string(), None),
            ("file".to_string(), Some("/p/file".to_string())),
        ]
    );
    // Reads are not writes.
    assert!(analysis("a < in <<< x").writes.is_empty());
    // After `cd`, relative paths are unknown; absolute ones are not.
    let a = analysis("cd sub && a > out > /abs");
    assert!(a.changes_folder);
    assert_eq!(a.writes[0].resolved, None);
    assert_eq!(a.writes[1].resolved.as_deref(), Some("/abs"));
    // Redirections of compound commands count too.
    assert_eq!(
        analysis("(a; b) > /etc/x").writes[0].resolved.as_deref(),
        Some("/etc/x")
    );
}

#[test]
fn runs_file_names_the_executed_file() {
    let runs = |s: &str| {
        analysis(s).units[0]
            .runs_file
            .as_ref()
            .map(|a| a.display.clone())
    };
    assert_eq!(runs("./install.sh --yes"), Some("./install.sh".into()));
    assert_eq!(runs("bash -e install.sh"), Some("install.sh".into()));
    assert_eq!(runs("python3 -u get.py"), Some("get.py".into()));
    assert_eq!(runs(". ./env.sh"), Some("./env.sh".into()));
    assert_eq!(runs("sudo /tmp/x"), Some("/tmp/x".into()));
    assert_eq!(runs("git status"), None);
}
