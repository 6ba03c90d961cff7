//! `paddock connectors` through the built binary, as a user configures one: `add` with the
//! token piped on stdin (into the owner-only file key store, never the config), `list`,
//! `tools`, `test` against the real MCP test server, `edit`, `disable`, `enable` and `remove`
//! (the token deleted from the key store), with the
//! config file keeping the user's comments; bad input refused naming what was wrong and
//! changing nothing. The token appears in no output and no file but the key store's.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use serde_json::Value;

use crate::cli_support::Machine;

const TOKEN: &str = "tok-cli-planted-connector-4d3c2b1a0f";

const CONFIG: &str =
    "# my machine\n[models]\n# the key comes from the environment\nkey_store = \"file\"\n";

fn files_holding(root: &std::path::Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .unwrap_or_default()
                .windows(needle.len())
                .any(|w| w == needle.as_bytes())
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connector_is_added_listed_tested_edited_turned_off_and_on_and_removed_from_the_cli() {
    let machine = Machine::new(CONFIG);
    let server = test_support::binaries::mcp_test_server()
        .display()
        .to_string();
    let config_file = machine.root.path().join("config/paddock/config.toml");
    let mut outputs = String::new();

    // Added with its token piped in.
    let (code, out, err) = machine
        .run_with_stdin(
            &[
                "connectors",
                "add",
                "tracker",
                "--transport",
                "stdio",
                "--command",
                &server,
                "--env",
                "MCP_TEST_TOKEN={secret}",
                "--token-stdin",
            ],
            &format!("{TOKEN}\n"),
        )
        .await;
    outputs.push_str(&out);
    outputs.push_str(&err);
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(&config_file).unwrap();
    assert!(text.starts_with("# my machine\n"), "{text}");
    assert!(
        text.contains("# the key comes from the environment"),
        "{text}"
    );
    assert!(
        text.contains("[[connectors]]") && text.contains("name = \"tracker\""),
        "{text}"
    );
    assert!(text.contains("{secret}"), "{text}");

    // Listed, and its tools shown under the names the model sees, with their risks.
    let (code, out, err) = machine.run(&["connectors", "list", "--json"]).await;
    outputs.push_str(&out);
    outputs.push_str(&err);
    assert_eq!(code, 0, "{out}{err}");
    let list: Value = serde_json::from_str(&out).unwrap();
    let tracker = list
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "tracker")
        .unwrap_or_else(|| panic!("tracker listed: {list}"));
    assert_eq!(tracker["transport"], "stdio");
    let risks = |out: &str| -> Vec<(String, String, String)> {
        let tools: Value = serde_json::from_str(out).unwrap();
        tools
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["model_name"].as_str().unwrap_or_default().to_owned(),
                    t["risk"].as_str().unwrap().to_owned(),
                    t["claimed_risk"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let (code, out, err) = machine
        .run(&["connectors", "tools", "tracker", "--json"])
        .await;
    outputs.push_str(&out);
    outputs.push_str(&err);
    assert_eq!(code, 0, "{out}{err}");
    let tools = risks(&out);
    let delete = (
        "mcp__tracker__delete_item".to_owned(),
        "destructive".to_owned(),
        "destructive".to_owned(),
    );
    assert!(tools.contains(&delete), "{tools:?}");
    // A server's claim of read-only is not believed: only the machine's file lowers a risk.
    let lookup = (
        "mcp__tracker__lookup".to_owned(),
        "write".to_owned(),
        "read".to_owned(),
    );
    assert!(tools.contains(&lookup), "{tools:?}");

    // Tested: the real server started with the stored token (its `whoami` would echo it;
    // the test only lists tools), and stopped.
    let (code, out, err) = machine
        .run(&["connectors", "test", "tracker", "--json"])
        .await;
    outputs.push_str(&out);
    outputs.push_str(&err);
    assert_eq!(code, 0, "{out}{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["ok"], true, "{report}");

    // Edited: a risk lowered by the machine's own file; the comments survive.
    let (code, out, err) = machine
        .run(&[
            "connectors",
            "edit",
            "tracker",
            "--risk",
            "delete_item=write",
        ])
        .await;
    outputs.push_str(&out);
    outputs.push_str(&err);
    assert_eq!(code, 0, "{out}{err}");
    let (_, out, _) = machine
        .run(&["connectors", "tools", "tracker", "--json"])
        .await;
    let lowered = (
        "mcp__tracker__delete_item".to_owned(),
        "write".to_owned(),
        "destructive".to_owned(),
    );
    assert!(risks(&out).contains(&lowered), "{out}");
    assert!(
        std::fs::read_to_string(&config_file)
            .unwrap()
            .contains("# the key comes from the environment")
    );

    // Off and on again.
    let (code, out, err) = machine.run(&["connectors", "disable", "tracker"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let (_, out, _) = machine.run(&["connectors", "list", "--json"]).await;
    let list: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list[0]["enabled"], false, "{list}");
    let (code, out, err) = machine.run(&["connectors", "enable", "tracker"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let (_, out, _) = machine.run(&["connectors", "list", "--json"]).await;
    let list: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list[0]["enabled"], true, "{list}");

    // Bad input: named, and the file unchanged.
    let before = std::fs::read_to_string(&config_file).unwrap();
    for (args, named) in [
        (
            vec![
                "connectors",
                "edit",
                "tracker",
                "--transport",
                "carrier-pigeon",
            ],
            "carrier-pigeon",
        ),
        (
            vec!["connectors", "edit", "tracker", "--risk", "lookup=harmless"],
            "harmless",
        ),
        (
            vec!["connectors", "edit", "tracker", "--env", "NOEQUALS"],
            "NOEQUALS",
        ),
        (vec!["connectors", "enable", "nonesuch"], "nonesuch"),
    ] {
        let (code, out, err) = machine.run(&args).await;
        assert_ne!(code, 0, "{args:?} was refused: {out}{err}");
        assert!(
            err.contains(named),
            "{args:?}: the error names `{named}`: {err}"
        );
        assert_eq!(
            std::fs::read_to_string(&config_file).unwrap(),
            before,
            "{args:?}"
        );
    }

    // The token: in no output, and in no file but the key store's.
    assert!(!outputs.contains(TOKEN), "{outputs}");
    let holding = files_holding(machine.root.path(), TOKEN);
    assert_eq!(holding.len(), 1, "{holding:?}");
    assert!(
        holding[0].contains("state"),
        "the key store holds it: {holding:?}"
    );

    // Removed: the entry leaves the config (its comments stay), the token leaves the key
    // store, and a second removal is refused naming the connector.
    let (code, out, err) = machine.run(&["connectors", "remove", "tracker"]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("token was deleted"), "{out}");
    let text = std::fs::read_to_string(&config_file).unwrap();
    assert!(
        !text.contains("tracker") && !text.contains("[[connectors]]"),
        "{text}"
    );
    assert!(
        text.starts_with("# my machine\n") && text.contains("# the key comes from the environment"),
        "{text}"
    );
    assert_eq!(
        files_holding(machine.root.path(), TOKEN),
        Vec::<String>::new()
    );
    let (_, out, _) = machine.run(&["connectors", "list", "--json"]).await;
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        serde_json::json!([])
    );
    let (code, out, err) = machine.run(&["connectors", "remove", "tracker"]).await;
    assert_ne!(code, 0, "{out}{err}");
    assert!(err.contains("no connector `tracker`"), "{err}");
}
