use pretty_assertions::assert_eq;

use super::*;

fn of(command: &str) -> Vec<String> {
    downloads_of(command, "/p")
}

#[test]
fn curl_outputs_remote_names_and_output_dir() {
    let cases: &[(&str, &[&str])] = &[
        ("curl -fsSL -o x https://e.example/x", &["/p/x"]),
        ("curl -sSLo bin/x https://e.example/x", &["/p/bin/x"]),
        (
            "curl --output=/tmp/x.py https://e.example/x",
            &["/tmp/x.py"],
        ),
        ("curl --output sub/../y https://e.example/x", &["/p/y"]),
        ("curl -O https://e.example/dl/tool.sh", &["/p/tool.sh"]),
        (
            "curl -sSLO 'https://e.example/get.sh?v=2#top'",
            &["/p/get.sh", "/p/get.sh?v=2"],
        ),
        (
            "curl --remote-name-all https://e.example/a https://e.example/b",
            &["/p/a", "/p/b"],
        ),
        (
            "curl --output-dir /opt/dl -O https://e.example/t",
            &["/opt/dl/t"],
        ),
        (
            "curl --output-dir=dl -o t https://e.example/t",
            &["/p/dl/t"],
        ),
        ("curl -o - https://e.example/x", &[]),
        ("curl https://e.example/x", &[]),
        ("curl -O https://e.example/", &[]),
    ];
    for (command, want) in cases {
        assert_eq!(of(command), *want, "{command}");
    }
}

#[test]
fn wget_documents_prefixes_and_url_names() {
    let cases: &[(&str, &[&str])] = &[
        ("wget -O x https://e.example/x", &["/p/x"]),
        ("wget -qO /tmp/y https://e.example/x", &["/tmp/y"]),
        ("wget --output-document=z https://e.example/x", &["/p/z"]),
        ("wget -qO- https://e.example/x", &[]),
        ("wget https://e.example/tools/tool", &["/p/tool"]),
        ("wget -P /opt https://e.example/tool", &["/opt/tool"]),
        (
            "wget --directory-prefix=dl https://e.example/t",
            &["/p/dl/t"],
        ),
        ("wget https://e.example/", &["/p/index.html"]),
    ];
    for (command, want) in cases {
        assert_eq!(of(command), *want, "{command}");
    }
}

#[test]
fn redirections_and_tee_of_a_download_are_downloads() {
    let cases: &[(&str, &[&str])] = &[
        ("curl -fsSL https://e.example/i.sh > i.sh", &["/p/i.sh"]),
        (
            "sudo curl -s https://e.example/i.sh >> /tmp/i.sh",
            &["/tmp/i.sh"],
        ),
        ("wget -qO- https://e.example/i.sh &> i.sh", &["/p/i.sh"]),
        ("curl https://e.example/i.sh 2> err.log", &[]),
        ("curl -s https://e.example/i.sh | tee -a i.sh", &["/p/i.sh"]),
        ("echo hi > notes.txt", &[]),
        ("cat x | tee y", &[]),
    ];
    for (command, want) in cases {
        assert_eq!(of(command), *want, "{command}");
    }
}

#[test]
fn git_clone_counts_the_clone_folder() {
    let cases: &[(&str, &[&str])] = &[
        ("git clone https://e.example/team/tool.git", &["/p/tool"]),
        (
            "git clone --depth 1 -b main https://e.example/t/x.git src/x",
            &["/p/src/x"],
        ),
        ("git clone git@e.example:team/lib", &["/p/lib"]),
        ("git -C /opt clone https://e.example/t/y/", &["/opt/y"]),
        ("git clone --bare https://e.example/t/z.git", &["/p/z.git"]),
        ("git clone -- https://e.example/t/q.git .", &["/p"]),
        ("git status && git pull", &[]),
        ("git -C /opt status", &[]),
    ];
    for (command, want) in cases {
        assert_eq!(of(command), *want, "{command}");
    }
}

#[test]
fn names_known_only_at_run_time_are_not_listed() {
    assert_eq!(
        of("curl -o \"$OUT\" https://e.example/x"),
        Vec::<String>::new()
    );
    assert_eq!(
        of("cd /tmp && curl -o x https://e.example/x"),
        Vec::<String>::new()
    );
    assert_eq!(of("curl -o x 'unterminated"), Vec::<String>::new());
    assert_eq!(
        downloads_of("curl -o x https://e.example/x", "relative"),
        Vec::<String>::new()
    );
    let analysis = analyze(
        &shell::parse("curl -O -J https://e.example/x").unwrap(),
        "/p",
    );
    assert!(downloads(&analysis, "/p").unknown_names);
    let analysis = analyze(&shell::parse("git -C \"$D\" status").unwrap(), "/p");
    assert!(
        !downloads(&analysis, "/p").unknown_names,
        "a git command that is not a clone downloads nothing"
    );
}

#[test]
fn a_folder_covers_what_is_under_it_and_nothing_beside_it() {
    assert!(covers("/p/tool", "/p/tool"));
    assert!(covers("/p/repo", "/p/repo/scripts/install.sh"));
    assert!(!covers("/p/tool", "/p/toolbox"));
    assert!(!covers("/", "/p/x"), "the root is never a download");
}

#[test]
fn writes_are_the_redirections_and_tee_files_a_command_names() {
    assert_eq!(
        writes_of(
            "printf 'x' > s.sh && echo y >> /p/sub/b.sh 2>/dev/null",
            "/p"
        ),
        ["/p/s.sh", "/p/sub/b.sh"]
    );
    assert_eq!(
        writes_of("d=tools; echo x | tee -a $d/run.sh", "/p"),
        ["/p/tools/run.sh"]
    );
    assert!(writes_of("echo x > \"$OUT\"", "/p").is_empty());
    assert!(writes_of("echo 'unterminated", "/p").is_empty());
    assert!(writes_of("echo x > a", "relative").is_empty());
}
