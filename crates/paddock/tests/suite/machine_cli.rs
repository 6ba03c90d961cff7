//! The machine commands through the built binary, as a script drives them: `machine sandbox
//! setup --json` (nothing applied without `--yes`, exit 1; applied with it, exit 0, the config
//! backed up; a second run changing nothing), and `machine service install|status|uninstall`
//! against this machine's real `systemctl --user` and `systemd-analyze` in a throwaway HOME
//! (no user manager runs here, as in CI: install exits 2 and says what is left; status exits 1
//! until it runs; uninstall leaves the user's systemd folder as it was).

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::cli_support::Machine;
use serde_json::Value;

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setup_json_reports_the_plan_applies_with_yes_and_then_has_nothing_to_do() {
    let machine = Machine::new("# my machine\n");
    let config = machine.root.path().join("config/paddock/config.toml");
    let setup = [
        "machine",
        "sandbox",
        "setup",
        "--provider",
        "direct",
        "--json",
    ];

    // Without --yes nothing is applied: exit 1, and the plan says what would change.
    let (code, stdout, stderr) = machine.run(&setup).await;
    assert_eq!(code, 1, "{stdout}{stderr}");
    let report = json(&stdout);
    assert_eq!(report["done"], false, "{report:#}");
    assert_eq!(report["outcomes"], Value::Array(Vec::new()));
    let steps = report["plan"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{report:#}");
    assert_eq!(steps[0]["id"], "select-provider");
    assert!(
        steps[0]["action"]["diff"]
            .as_str()
            .unwrap()
            .contains("+provider = \"direct\""),
        "{report:#}"
    );
    assert_eq!(report["after"], report["plan"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "# my machine\n");

    // With --yes: applied, backed up, done: exit 0.
    let mut yes = setup.to_vec();
    yes.push("--yes");
    let (code, stdout, stderr) = machine.run(&yes).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let report = json(&stdout);
    assert_eq!(report["done"], true, "{report:#}");
    let applied = &report["outcomes"][0]["applied"][0];
    assert_eq!(applied["id"], "select-provider", "{report:#}");
    let backup = PathBuf::from(applied["backup"].as_str().unwrap());
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), "# my machine\n");
    assert_eq!(report["after"]["selected"], true);
    assert_eq!(report["after"]["steps"], Value::Array(Vec::new()));
    let written = std::fs::read_to_string(&config).unwrap();
    assert_eq!(written, "# my machine\n[sandbox]\nprovider = \"direct\"\n");

    // Idempotent: nothing to do, nothing written, exit 0.
    let (code, stdout, stderr) = machine.run(&yes).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let report = json(&stdout);
    assert_eq!(report["done"], true);
    assert_eq!(report["outcomes"], Value::Array(Vec::new()), "{report:#}");
    assert_eq!(report["plan"]["steps"], Value::Array(Vec::new()));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), written);
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| Path::new(&dir).join(tool).is_file())
    })
}

/// Every path under `dir`.
fn tree(dir: &Path) -> BTreeSet<PathBuf> {
    let mut paths = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                todo.push(path.clone());
            }
            paths.insert(path);
        }
    }
    paths
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_service_is_installed_reported_and_removed_through_the_binary() {
    let missing: Vec<&str> = ["systemctl", "systemd-analyze"]
        .into_iter()
        .filter(|t| !on_path(t))
        .collect();
    assert!(
        missing.is_empty(),
        "this test needs {missing:?}: install the Debian package systemd (`cargo xtask setup` \
         does)"
    );
    let machine = Machine::new("");
    let runtime = machine.root.path().join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    let run = |args: &'static [&'static str]| {
        let mut command = machine.command(args);
        command
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("USER", "paddock-test");
        async move {
            let output = command.output().await.unwrap();
            (
                output.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&output.stdout).into_owned(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        }
    };
    let config = machine.root.path().join("config");
    std::fs::create_dir_all(config.join("mine")).unwrap();
    let before = tree(&config);
    let unit = config.join("systemd/user/paddock.service");

    // Not installed: status exits 1.
    let (code, stdout, _) = run(&["machine", "service", "status", "--json"]).await;
    assert_eq!(code, 1, "{stdout}");
    let status = json(&stdout);
    assert_eq!(status["installed"], false, "{status:#}");
    assert_eq!(status["unit_file"], unit.display().to_string());

    // Install: written and enabled; starting and lingering are left to the user (exit 2).
    let (code, stdout, stderr) = run(&["machine", "service", "install", "--json"]).await;
    assert_eq!(code, 2, "{stdout}{stderr}");
    let change = json(&stdout);
    let done: Vec<&str> = change["done"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert!(done.iter().any(|d| d.starts_with("wrote ")), "{change:#}");
    assert!(
        done.iter().any(|d| d.starts_with("enabled it")),
        "{change:#}"
    );
    let left = change["left"].to_string();
    assert!(
        left.contains("loginctl enable-linger paddock-test"),
        "{left}"
    );
    assert!(
        left.contains("systemctl --user start paddock.service"),
        "{left}"
    );
    let text = std::fs::read_to_string(&unit).unwrap();
    let paddock = Path::new(env!("CARGO_BIN_EXE_paddock"))
        .canonicalize()
        .unwrap();
    assert!(
        text.contains(&format!("ExecStart={} up\n", paddock.display())),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Environment=\"XDG_STATE_HOME={}/state\"",
            machine.root.path().display()
        )),
        "{text}"
    );
    let verify = std::process::Command::new("systemd-analyze")
        .args(["--user", "verify", "--man=no"])
        .arg(&unit)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", machine.root.path().join("home"))
        .env("XDG_CONFIG_HOME", &config)
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
    assert!(
        verify.status.success() && said.trim().is_empty(),
        "systemd-analyze: {said}"
    );

    // A second install changes nothing and says so, still leaving the same to the user.
    let modified = std::fs::metadata(&unit).unwrap().modified().unwrap();
    let (code, stdout, _) = run(&["machine", "service", "install"]).await;
    assert_eq!(code, 2, "{stdout}");
    assert!(
        stdout.starts_with("nothing to change: the service is installed and enabled\n"),
        "{stdout}"
    );
    assert!(stdout.contains("for you: "), "{stdout}");
    assert_eq!(
        std::fs::metadata(&unit).unwrap().modified().unwrap(),
        modified
    );

    // Installed and enabled but not running (no user manager): status exits 1, and says why.
    let (code, stdout, _) = run(&["machine", "service", "status"]).await;
    assert_eq!(code, 1, "{stdout}");
    for line in [
        "installed: yes\n",
        "enabled: yes\n",
        "running: unknown (",
        "runs after logout: no (turn it on with: loginctl enable-linger paddock-test)",
    ] {
        assert!(stdout.contains(line), "`{line}` in:\n{stdout}");
    }

    // Uninstall: nothing of it is left; a second one has nothing to remove. Both exit 0.
    let (code, stdout, stderr) = run(&["machine", "service", "uninstall", "--json"]).await;
    assert_eq!(code, 0, "{stdout}{stderr}");
    let change = json(&stdout);
    assert_eq!(change["status"]["installed"], false, "{change:#}");
    assert_eq!(change["status"]["enabled"], false, "{change:#}");
    assert_eq!(tree(&config), before, "uninstall left something behind");
    let (code, stdout, _) = run(&["machine", "service", "uninstall"]).await;
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(
        stdout, "nothing to remove: the service is not installed\n",
        "{stdout}"
    );
    let (code, _, _) = run(&["machine", "service", "status"]).await;
    assert_eq!(code, 1);
}
