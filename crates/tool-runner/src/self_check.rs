//! `self-check`: starts this executable in `stdio` mode on a temporary folder, calls every
//! tool through the real protocol, tries the refusals that must hold, and prints what each
//! call answered. `cargo xtask up` runs it.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tool_protocol::checksum::checksum;
use tool_protocol::{
    Data, Delete, Download, EditFile, ErrorCode, Glob, Grep, ListDirectory, ReadBytes, ReadFile,
    RunBash, Stat, Stream, ToolRequest, ToolResult, Upload, WriteFile,
};
use tool_runner::client::{Client, Reply};

use crate::modes::ModeError;

/// One line of the report: the tool, and what happened or what went wrong.
type Outcome = Result<String, String>;

struct Check {
    tool: &'static str,
    outcome: Outcome,
}

#[allow(
    clippy::print_stdout,
    reason = "self-check is a human report on stdout"
)]
pub fn run(keep: bool) -> Result<ExitCode, ModeError> {
    let folder = TempFolder::create()?;
    let work = folder.path.join("work");
    let reference = folder.path.join("reference");
    let outside = folder.path.join("outside");
    for dir in [&work, &reference, &outside] {
        fs::create_dir(dir).map_err(|e| ModeError(format!("{}: {e}", dir.display())))?;
    }
    let setup = || -> std::io::Result<()> {
        fs::write(reference.join("guide.md"), "# Guide\nread-only reference\n")?;
        fs::write(outside.join("secret.txt"), "not for the agent\n")?;
        symlink(&outside, work.join("escape"))?;
        fs::set_permissions(&reference, fs::Permissions::from_mode(0o755))
    };
    setup().map_err(|e| ModeError(format!("preparing {}: {e}", folder.path.display())))?;

    let exe = std::env::current_exe().map_err(|e| ModeError(format!("finding myself: {e}")))?;
    let args = vec![
        "--root".to_owned(),
        format!("{}:rw", work.display()),
        "--root".to_owned(),
        format!("{}:ro", reference.display()),
    ];
    let started = Instant::now();
    let (client, mut child) =
        Client::spawn_stdio(&exe, &args).map_err(|e| ModeError(e.to_string()))?;
    let hello_after = started.elapsed();
    let hello = client.hello().clone();

    println!("tool-runner self-check");
    println!(
        "  runner   {} · protocol {} · pid {} · hello after {:.1} ms",
        hello.build_id,
        hello.protocol,
        hello.pid,
        hello_after.as_secs_f64() * 1000.0
    );
    for root in &hello.roots {
        println!("  folder   {} ({})", root.path, root.mode);
    }
    println!();

    let checks_started = Instant::now();
    let checks = run_checks(&client, &work, &reference, &outside);
    let elapsed = checks_started.elapsed();
    let _ = client.shutdown();
    let _ = child.wait();

    let passed = checks.iter().filter(|c| c.outcome.is_ok()).count();
    for check in &checks {
        match &check.outcome {
            Ok(detail) => println!("  ok    {:<17} {detail}", check.tool),
            Err(problem) => println!("  FAIL  {:<17} {problem}", check.tool),
        }
    }
    println!();
    println!(
        "{passed} of {} checks passed in {} ms.",
        checks.len(),
        elapsed.as_millis()
    );
    if keep {
        println!("The folder is kept: {}", folder.path.display());
        folder.keep();
    }
    Ok(if passed == checks.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn run_checks(client: &Client, work: &Path, reference: &Path, outside: &Path) -> Vec<Check> {
    let mut checks = Vec::new();
    let mut check = |tool: &'static str, outcome: Outcome| checks.push(Check { tool, outcome });
    let text = "Hello from the self-check.\nSecond line.\nThird line.\n";

    check(
        "write_file",
        expect(
            client,
            WriteFile {
                path: "notes/hello.txt".into(),
                content: Data::from(text),
                create_parents: None,
            },
            |r| match r {
                ToolResult::WriteFile(w) => Some(format!(
                    "notes/hello.txt, {} bytes, created={}",
                    w.bytes_written, w.created
                )),
                _ => None,
            },
        ),
    );
    check(
        "read_file",
        expect(
            client,
            ReadFile {
                path: "notes/hello.txt".into(),
                offset: Some(2),
                limit: Some(1),
            },
            |r| match r {
                ToolResult::ReadFile(f) if f.content == "     2\tSecond line.\n" => Some(format!(
                    "line 2 of {}: {:?}",
                    f.total_lines,
                    f.content.trim_end()
                )),
                _ => None,
            },
        ),
    );
    check(
        "edit_file",
        expect(
            client,
            EditFile {
                path: "notes/hello.txt".into(),
                old_string: "Second".into(),
                new_string: "2nd".into(),
                replace_all: None,
            },
            |r| match r {
                ToolResult::EditFile(e) => {
                    Some(format!("{} replacement, atomic rename", e.replacements))
                }
                _ => None,
            },
        ),
    );
    check(
        "read_bytes",
        expect(
            client,
            ReadBytes {
                path: "notes/hello.txt".into(),
                offset: Some(0),
                length: Some(5),
            },
            |r| match r {
                ToolResult::ReadBytes(b) if b.data.as_bytes() == b"Hello" => {
                    Some(format!("bytes 0..5 of {}: \"Hello\"", b.size))
                }
                _ => None,
            },
        ),
    );
    check(
        "stat",
        expect(
            client,
            Stat {
                path: "escape".into(),
            },
            |r| match r {
                ToolResult::Stat(s) => Some(format!(
                    "escape is a {} → {}",
                    s.kind,
                    s.link_target.clone().unwrap_or_default()
                )),
                _ => None,
            },
        ),
    );
    check(
        "list_directory",
        expect(
            client,
            ListDirectory {
                path: None,
                depth: Some(2),
                limit: None,
            },
            |r| match r {
                ToolResult::ListDirectory(l) => Some(format!(
                    "{} entries: {}",
                    l.entries.len(),
                    l.entries
                        .iter()
                        .map(|e| e.path.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                _ => None,
            },
        ),
    );
    check("run_bash", run_bash_check(client));
    check("run_bash timeout", timeout_check(client, work));
    check("upload+download", transfer_check(client));
    check(
        "glob",
        expect(
            client,
            Glob {
                pattern: "**/*.txt".into(),
                path: None,
                limit: None,
            },
            |r| match r {
                ToolResult::Glob(g) => {
                    Some(format!("**/*.txt matched {} file(s)", g.matches.len()))
                }
                _ => None,
            },
        ),
    );
    check(
        "grep",
        expect(
            client,
            Grep {
                pattern: "2nd|Third".into(),
                path: None,
                include: None,
                exclude: None,
                case_insensitive: None,
                context: None,
                max_matches: None,
            },
            |r| match r {
                ToolResult::Grep(g) => Some(format!(
                    "{} matching line(s) in {} file(s) searched",
                    g.matches.len(),
                    g.files_searched
                )),
                _ => None,
            },
        ),
    );
    check("cancel", cancel_check(client));
    check(
        "delete",
        expect(
            client,
            Delete {
                path: "notes".into(),
                recursive: Some(true),
            },
            |r| match r {
                ToolResult::Delete(d) => Some(format!(
                    "notes/ and everything in it, {} entries",
                    d.removed
                )),
                _ => None,
            },
        ),
    );
    let secret = outside.join("secret.txt").display().to_string();
    check(
        "refuse outside",
        refusal(
            client,
            ReadFile {
                path: secret,
                offset: None,
                limit: None,
            },
            ErrorCode::OutsideRoots,
        ),
    );
    check(
        "refuse symlink",
        refusal(
            client,
            ReadFile {
                path: "escape/secret.txt".into(),
                offset: None,
                limit: None,
            },
            ErrorCode::OutsideRoots,
        ),
    );
    check(
        "refuse read-only",
        refusal(
            client,
            WriteFile {
                path: reference.join("guide.md").display().to_string(),
                content: Data::from("overwritten"),
                create_parents: None,
            },
            ErrorCode::ReadOnly,
        ),
    );
    checks
}

/// Calls `request` and describes the result with `describe`, which returns `None` for a
/// result that is not what the check expects.
fn expect(
    client: &Client,
    request: impl Into<ToolRequest>,
    describe: impl Fn(&ToolResult) -> Option<String>,
) -> Outcome {
    let reply = client.call(request).map_err(|e| e.to_string())?;
    match reply.outcome {
        Ok(result) => describe(&result).ok_or_else(|| format!("unexpected result: {result:?}")),
        Err(e) => Err(format!("{}: {}", e.code, e.message)),
    }
}

fn refusal(client: &Client, request: impl Into<ToolRequest>, code: ErrorCode) -> Outcome {
    let reply = client.call(request).map_err(|e| e.to_string())?;
    match reply.outcome {
        Err(e) if e.code == code => Ok(format!("{}: {}", e.code, e.message)),
        Err(e) => Err(format!("refused, but with {}: {}", e.code, e.message)),
        Ok(result) => Err(format!("NOT refused: {result:?}")),
    }
}

fn bash(command: &str, timeout_ms: Option<u64>) -> RunBash {
    RunBash {
        command: command.into(),
        cwd: None,
        env: None,
        stdin: None,
        timeout_ms,
        max_output_bytes: None,
    }
}

fn run_bash_check(client: &Client) -> Outcome {
    let reply = client
        .call(bash("echo streamed; echo to stderr >&2; exit 3", None))
        .map_err(|e| e.to_string())?;
    let streamed = String::from_utf8_lossy(&reply.output_bytes(Stream::Stdout)).into_owned();
    match &reply.outcome {
        Ok(ToolResult::RunBash(r)) if r.exit_code == Some(3) && streamed == "streamed\n" => {
            Ok(format!(
                "exit 3 in {} ms; output streamed in {} frame(s) as it came; stderr {:?}",
                r.duration_ms,
                reply.outputs.len(),
                r.stderr.to_text_lossy().trim_end()
            ))
        }
        other => Err(format!("unexpected: {other:?}")),
    }
}

fn timeout_check(client: &Client, work: &Path) -> Outcome {
    let marker = work.join("grandchild-was-here");
    let command = format!("(sleep 1; touch '{}') & sleep 30", marker.display());
    let reply = client
        .call(bash(&command, Some(300)))
        .map_err(|e| e.to_string())?;
    let Ok(ToolResult::RunBash(r)) = &reply.outcome else {
        return Err(format!("unexpected: {:?}", reply.outcome));
    };
    if !r.timed_out {
        return Err("the command was not reported as timed out".into());
    }
    std::thread::sleep(Duration::from_millis(1200));
    if marker.exists() {
        return Err("a grandchild survived the timeout".into());
    }
    Ok(format!(
        "killed after {} ms (signal {}), grandchild gone too",
        r.duration_ms,
        r.signal.unwrap_or_default()
    ))
}

fn transfer_check(client: &Client) -> Outcome {
    let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let (first, second) = bytes.split_at(120_000);
    for (offset, chunk, last) in [(0, first, false), (first.len(), second, true)] {
        let reply = client
            .call(Upload {
                path: "blob.bin".into(),
                transfer: "self-check".into(),
                offset: offset as u64,
                data: Data::binary(chunk.to_vec()),
                last,
                size: last.then_some(bytes.len() as u64),
                checksum: last.then(|| checksum(&bytes)),
            })
            .map_err(|e| e.to_string())?;
        if let Err(e) = reply.outcome {
            return Err(format!("upload: {}: {}", e.code, e.message));
        }
    }
    let reply: Reply = client
        .call(Download {
            path: "blob.bin".into(),
            chunk_bytes: Some(65_536),
        })
        .map_err(|e| e.to_string())?;
    let received = reply.output_bytes(Stream::Data);
    match &reply.outcome {
        Ok(ToolResult::Download(d)) if received == bytes && d.checksum == checksum(&bytes) => {
            Ok(format!(
                "{} bytes up in 2 chunks and down in {} frames, {} matches",
                d.size,
                reply.outputs.len(),
                d.checksum
            ))
        }
        other => Err(format!("download did not match: {other:?}")),
    }
}

fn cancel_check(client: &Client) -> Outcome {
    let started = Instant::now();
    let pending = client
        .start(bash("sleep 30", None))
        .map_err(|e| e.to_string())?;
    std::thread::sleep(Duration::from_millis(100));
    client.cancel(&pending.id).map_err(|e| e.to_string())?;
    let reply = pending
        .wait_at_most(Duration::from_secs(10))
        .map_err(|e| e.to_string())?;
    match reply.outcome {
        Err(e) if e.code == ErrorCode::Cancelled => Ok(format!(
            "`sleep 30` cancelled after {} ms",
            started.elapsed().as_millis()
        )),
        other => Err(format!("unexpected: {other:?}")),
    }
}

/// A private temporary folder, removed on drop unless kept.
struct TempFolder {
    path: PathBuf,
    keep: bool,
}

impl TempFolder {
    fn create() -> Result<Self, ModeError> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let path = std::env::temp_dir().join(format!(
            "paddock-self-check-{}-{nanos:08x}",
            std::process::id()
        ));
        fs::create_dir(&path).map_err(|e| ModeError(format!("{}: {e}", path.display())))?;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o700))
            .map_err(|e| ModeError(format!("{}: {e}", path.display())))?;
        // Canonical, so the runner's paths and ours compare equal.
        let path = fs::canonicalize(&path).unwrap_or(path);
        Ok(Self { path, keep: false })
    }

    fn keep(mut self) {
        self.keep = true;
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}
