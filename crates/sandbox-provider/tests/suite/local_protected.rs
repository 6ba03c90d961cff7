//! Files the host runs later, attacked inside the real local wall with no approvals in the
//! way: every command below runs. What existed when the wall started is read-only (mounted
//! over the read-write grant); what is created is caught by the sweep after the call (or at
//! close, for a process left behind) and moved to quarantine; ordinary git work still works.
//! Afterwards real git runs on the host: a planted hook or `core.fsmonitor` would create a
//! marker in a folder the sandbox never sees.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failed test"
)]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use protocol::ProtectedAction;
use sandbox_provider::Sandbox;
use support::{bash, exists, stderr, stdout, world};
use tokio_util::sync::CancellationToken;
use tool_protocol::{Data, ToolRequest, WriteFile};

/// Git as the user runs it on the host, without their own configuration.
fn host_git(repo: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "User")
        .env("GIT_AUTHOR_EMAIL", "user@example.com")
        .env("GIT_COMMITTER_NAME", "User")
        .env("GIT_COMMITTER_EMAIL", "user@example.com")
        .output()
        .unwrap()
}

fn repository(path: &Path) {
    std::fs::create_dir_all(path).unwrap();
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["commit", "-q", "--allow-empty", "-m", "first"],
    ] {
        let out = host_git(path, args);
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }
}

/// The user's everyday commands; none may run anything planted.
fn everyday_git(repo: &Path) {
    for args in [
        &["status"][..],
        &["commit", "-q", "--allow-empty", "-m", "next"],
        &["checkout", "-q", "-b", "feature"],
        &["checkout", "-q", "main"],
    ] {
        host_git(repo, args);
    }
}

fn hook_script(marker: &Path) -> String {
    format!("#!/bin/sh\\ntouch {}\\n", marker.display())
}

/// Commits made inside carry an identity from the environment (the private home has no
/// git configuration).
const IDENTITY: &str = "export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com \
     GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com; ";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn git_plantings_fail_against_the_read_only_mounts() {
    let world = world();
    let work = world.work();
    repository(&work);
    let markers = world.outside();
    let marker = |name: &str| markers.join(name);
    let sandbox = world.start().await;
    let attempts = [
        format!(
            "git -C . config core.fsmonitor 'touch {} #'",
            marker("fsmonitor").display()
        ),
        format!(
            "d=.git; printf '{}' > \"$d/hooks/pre-commit\" && chmod +x \"$d/hooks/pre-commit\"",
            hook_script(&marker("pre-commit"))
        ),
        format!(
            "mkdir -p tpl/hooks && printf '{}' > tpl/hooks/post-checkout && chmod +x tpl/hooks/post-checkout && git init -q --template=tpl",
            hook_script(&marker("template"))
        ),
        format!(
            "mkdir -p planted && printf '{}' > planted/post-checkout && chmod +x planted/post-checkout && git -c color.ui=never config core.hooksPath planted",
            hook_script(&marker("hookspath"))
        ),
        "printf '[core]\\n\\tfsmonitor = x\\n' > /tmp/c && mv /tmp/c .git/config".to_owned(),
        "cp .git/config /tmp/c && mv -f /tmp/c .git/config".to_owned(),
        "rm -rf .git/hooks".to_owned(),
        "mv .git .git-old && mkdir .git".to_owned(),
        "ln -sf /tmp/evil .git/info/attributes".to_owned(),
        "printf '* filter=x\\n' >> .git/info/attributes".to_owned(),
    ];
    for command in &attempts {
        let result = bash(sandbox.as_ref(), command).await;
        let said = format!("{}{}", stdout(&result), stderr(&result));
        assert!(
            said.contains("Read-only file system")
                || said.contains("Device or resource busy")
                || said.contains("could not lock config file")
                || said.contains("cannot copy")
                || said.contains("Invalid cross-device link"),
            "{command}: exit {:?}\n{said}",
            result.exit_code
        );
    }
    // Whatever the template or the planted folder added elsewhere is caught by the sweep.
    let protected = sandbox.protected().unwrap().clone();
    tokio::task::spawn_blocking(move || protected.sweep())
        .await
        .unwrap();
    sandbox.close().await.unwrap();
    assert!(exists(&work.join(".git/config")) && !exists(&work.join(".git-old")));
    let config = std::fs::read_to_string(work.join(".git/config")).unwrap();
    assert!(
        !config.contains("fsmonitor") && !config.contains("hooksPath"),
        "{config}"
    );
    everyday_git(&work);
    let ran: Vec<String> = ["fsmonitor", "pre-commit", "template", "hookspath"]
        .iter()
        .filter(|m| marker(m).exists())
        .map(ToString::to_string)
        .collect();
    assert!(ran.is_empty(), "planted code ran on the host: {ran:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_git_work_inside_the_wall_still_works() {
    let world = world();
    let work = world.work();
    repository(&work.join("project"));
    let remote = work.join("remote.git");
    let out = host_git(&work, &["clone", "-q", "--bare", "project", "remote.git"]);
    assert!(out.status.success(), "{out:?}");
    let out = host_git(
        &work.join("project"),
        &["remote", "add", "origin", &remote.display().to_string()],
    );
    assert!(out.status.success(), "{out:?}");
    let sandbox = world.start().await;
    let steps = [
        "echo one > a.txt && git add a.txt && git commit -q -m one",
        "git branch topic && git checkout -q topic && echo two > b.txt && git add b.txt && git commit -q -m two",
        "git switch -q main && echo three > c.txt && git add c.txt && git commit -q -m three",
        "echo dirty >> a.txt && git stash -q && git stash pop -q && git commit -qam four",
        "git checkout -q topic && git rebase -q main && git checkout -q main && git merge -q --ff-only topic",
        "git tag v1 && git cherry-pick --help >/dev/null 2>&1; git reset -q --hard HEAD~1 && git reset -q --hard ORIG_HEAD",
        "git fetch -q origin && git push -q origin main topic v1",
        "git gc -q && git log --oneline | wc -l",
        "git worktree add -q ../wt topic-wt 2>/dev/null || git worktree add -q -b topic-wt ../wt && git -C ../wt status --short",
        "cd .. && git clone -q remote.git copy && git -C copy log --oneline -1",
        "git init -q ../fresh && git -C ../fresh commit -q --allow-empty -m x",
    ];
    for step in steps {
        let result = bash(sandbox.as_ref(), &format!("{IDENTITY}cd project && {step}")).await;
        assert_eq!(
            result.exit_code,
            Some(0),
            "{step}\n{}{}",
            stdout(&result),
            stderr(&result)
        );
    }
    let changes = {
        let protected = sandbox.protected().unwrap().clone();
        tokio::task::spawn_blocking(move || protected.sweep())
            .await
            .unwrap()
    };
    assert!(
        changes.is_empty(),
        "ordinary work is not planting: {changes:#?}"
    );
    sandbox.close().await.unwrap();
    let log = host_git(&work.join("project"), &["log", "--oneline", "main"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 5);
    let pushed = host_git(&remote, &["log", "--oneline", "main"]);
    assert_eq!(String::from_utf8_lossy(&pushed.stdout).lines().count(), 5);
    assert!(work.join("copy/.git").is_dir() && work.join("fresh/.git").is_dir());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dotfiles_and_editor_settings_are_read_only_inside() {
    let world = world();
    let work = world.work();
    let existing = [
        ".bashrc",
        ".profile",
        ".envrc",
        ".gitconfig",
        ".gitmodules",
        ".mcp.json",
        ".vscode/settings.json",
        ".claude/settings.json",
        "sub/.zshrc",
    ];
    for name in existing {
        let path = work.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "original\n").unwrap();
    }
    let sandbox = world.start().await;
    for name in existing {
        for command in [
            format!("echo planted >> {name}"),
            format!("rm -f {name}"),
            format!("mv {name} {name}.moved"),
            format!("printf x > /tmp/x && mv -f /tmp/x {name}"),
        ] {
            bash(sandbox.as_ref(), &command).await;
        }
        let outcome = sandbox
            .call(
                ToolRequest::WriteFile(WriteFile {
                    path: work.join(name).display().to_string(),
                    content: Data::Text("planted by write_file\n".into()),
                    create_parents: None,
                }),
                None,
                &CancellationToken::new(),
            )
            .await;
        assert!(outcome.result.is_err(), "{name}: {outcome:?}");
        assert_eq!(
            std::fs::read_to_string(work.join(name)).unwrap(),
            "original\n",
            "{name}"
        );
    }
    // Inside a protected folder nothing new can appear either.
    let result = bash(sandbox.as_ref(), "echo '{}' > .vscode/tasks.json").await;
    assert!(
        stderr(&result).contains("Read-only file system"),
        "{result:?}"
    );
    sandbox.close().await.unwrap();
}

/// The protected folders no other test attacks: ssh's (`authorized_keys`, `config` with its
/// `ProxyCommand`), fish's start files, dev containers, and Codex's, Cursor's and Gemini's
/// settings (one nested a folder down). Each is written through `run_bash` (append, a new file,
/// remove, move the folder away, replace it) and through `write_file` (the file, a new one);
/// every attempt fails and the host finds the folder as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssh_fish_devcontainer_and_agent_folders_are_read_only_inside() {
    let world = world();
    let work = world.work();
    let existing = [
        ".ssh/authorized_keys",
        ".ssh/config",
        ".config/fish/config.fish",
        ".devcontainer/devcontainer.json",
        ".codex/config.toml",
        ".cursor/mcp.json",
        "sub/.gemini/settings.json",
    ];
    for name in existing {
        let path = work.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "original\n").unwrap();
    }
    let listing = |folder: &Path| {
        let mut names: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let folders: Vec<PathBuf> = existing
        .iter()
        .map(|name| work.join(name).parent().unwrap().to_path_buf())
        .collect();
    let before: Vec<Vec<String>> = folders.iter().map(|f| listing(f)).collect();
    let sandbox = world.start().await;
    for name in existing {
        let folder = Path::new(name).parent().unwrap().display().to_string();
        for command in [
            format!("echo 'ProxyCommand sh -c planted' >> {name}"),
            format!("echo planted > {folder}/planted"),
            format!("rm -f {name}"),
            format!("mv {folder} {folder}.moved"),
            format!("rm -rf {folder}"),
        ] {
            let r = bash(sandbox.as_ref(), &command).await;
            let said = stderr(&r);
            assert_ne!(r.exit_code, Some(0), "{command}: it worked ({said})");
            assert!(
                said.contains("Read-only file system") || said.contains("Device or resource busy"),
                "{command}: {said}"
            );
        }
        for target in [name.to_owned(), format!("{folder}/planted-by-write-file")] {
            let outcome = sandbox
                .call(
                    ToolRequest::WriteFile(WriteFile {
                        path: work.join(&target).display().to_string(),
                        content: Data::Text("planted by write_file\n".into()),
                        create_parents: None,
                    }),
                    None,
                    &CancellationToken::new(),
                )
                .await;
            assert!(outcome.result.is_err(), "write_file {target}: {outcome:?}");
        }
        assert_eq!(
            std::fs::read_to_string(work.join(name)).unwrap(),
            "original\n",
            "{name}"
        );
    }
    sandbox.close().await.unwrap();
    for (folder, before) in folders.iter().zip(&before) {
        assert_eq!(&listing(folder), before, "{}", folder.display());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_command_creates_is_caught_after_the_call_and_a_leftover_process_at_close() {
    let world = world();
    let work = world.work();
    let sandbox = world.start().await;
    let protected = sandbox.protected().unwrap().clone();
    let sweep = || {
        let protected = protected.clone();
        async move {
            tokio::task::spawn_blocking(move || protected.sweep())
                .await
                .unwrap()
        }
    };
    let result = bash(
        sandbox.as_ref(),
        &format!(
            "{IDENTITY}mkdir -p .vscode && echo '{{}}' > .vscode/tasks.json && git init -q fresh && \
             printf '#!/bin/sh\\ntouch /tmp/x\\n' > fresh/.git/hooks/pre-commit && \
             git -C fresh config core.hooksPath /tmp && echo ok"
        ),
    )
    .await;
    assert_eq!(stdout(&result).trim(), "ok", "{result:?}");
    let changes = sweep().await;
    let found: Vec<(PathBuf, ProtectedAction)> =
        changes.iter().map(|c| (c.path.clone(), c.action)).collect();
    assert!(
        found.contains(&(work.join(".vscode"), ProtectedAction::Quarantined)),
        "{found:?}"
    );
    assert!(found.contains(&(
        work.join("fresh/.git/hooks/pre-commit"),
        ProtectedAction::Quarantined
    )));
    assert!(found.contains(&(work.join("fresh/.git/config"), ProtectedAction::Sanitized)));
    assert!(!exists(&work.join(".vscode")) && !exists(&work.join("fresh/.git/hooks/pre-commit")));
    for change in &changes {
        let kept = change.quarantined_to.as_ref().unwrap();
        assert!(kept.starts_with(world.root.path().join("quarantine")) && exists(kept));
    }

    // A process left behind plants after its call ended (once the host says go): the next
    // sweep (here: the one at close, after the wall's processes are gone) catches it.
    let go = "/tmp/go";
    let result = bash(
        sandbox.as_ref(),
        &format!(
            "(while [ ! -e {go} ]; do sleep 0.05; done; mkdir -p .idea && echo x > .idea/workspace.xml; touch /tmp/done) \
             >/dev/null 2>&1 & echo started"
        ),
    )
    .await;
    assert_eq!(stdout(&result).trim(), "started");
    let wall_tmp = sandbox.host_dir().join("tmp");
    std::fs::write(wall_tmp.join("go"), "").unwrap();
    while !wall_tmp.join("done").exists() {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    sandbox.close().await.unwrap();
    let at_close = sweep().await;
    assert_eq!(at_close.len(), 1, "{at_close:#?}");
    assert_eq!(at_close[0].path, work.join(".idea"));
    assert!(!exists(&work.join(".idea")));
}
