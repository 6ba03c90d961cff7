//! `RunnerConnection` against the real tool-runner (stdio mode, as the direct provider runs it):
//! concurrency, streamed output, cancel, transfers with checksums, and a lost connection.

#![allow(clippy::unwrap_used)]

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox_provider::{CallError, RunnerConnection};
use tempfile::TempDir;
use test_support::binaries;
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tool_protocol::{
    ErrorCode, ReadFile, RootMode, RunBash, Stream, ToolRequest, ToolResult, WriteFile,
};

async fn runner(folder: &TempDir) -> (RunnerConnection, Child) {
    let root = folder.path().to_str().unwrap();
    let mut child = Command::new(binaries::tool_runner())
        .args(["stdio", "--root", &format!("{root}:rw"), "--cwd", root])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let connection = RunnerConnection::open(stdout, stdin, Duration::from_secs(10))
        .await
        .unwrap();
    (connection, child)
}

fn bash(command: &str) -> ToolRequest {
    ToolRequest::RunBash(RunBash {
        command: command.into(),
        cwd: None,
        env: None,
        stdin: None,
        timeout_ms: None,
        max_output_bytes: None,
    })
}

#[tokio::test]
async fn hello_names_the_granted_folder() {
    let folder = TempDir::new().unwrap();
    let (connection, _child) = runner(&folder).await;
    let hello = connection.hello();
    assert_eq!(hello.roots.len(), 1);
    assert_eq!(hello.roots[0].path, folder.path().to_str().unwrap());
    assert_eq!(hello.roots[0].mode, RootMode::ReadWrite);
    assert!(hello.build_id.starts_with("crc32c:"), "{}", hello.build_id);
}

#[tokio::test]
async fn fifty_calls_in_flight_each_get_their_own_answer() {
    let folder = TempDir::new().unwrap();
    for i in 0..50 {
        std::fs::write(
            folder.path().join(format!("f{i}.txt")),
            format!("content {i}\n"),
        )
        .unwrap();
    }
    let (connection, _child) = runner(&folder).await;
    let connection = Arc::new(connection);
    let mut tasks = Vec::new();
    for i in 0..50 {
        let connection = connection.clone();
        tasks.push(tokio::spawn(async move {
            let request = ToolRequest::ReadFile(ReadFile {
                path: format!("f{i}.txt"),
                offset: None,
                limit: None,
            });
            (
                i,
                connection
                    .call(request, None, &CancellationToken::new())
                    .await,
            )
        }));
    }
    for task in tasks {
        let (i, result) = task.await.unwrap();
        match result.unwrap() {
            ToolResult::ReadFile(read) => {
                assert!(read.content.contains(&format!("content {i}")), "{read:?}")
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn output_streams_before_the_result() {
    let folder = TempDir::new().unwrap();
    let (connection, _child) = runner(&folder).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = connection
        .call(
            bash("echo one; sleep 0.2; echo two >&2"),
            Some(tx),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let mut chunks = Vec::new();
    while let Ok(chunk) = rx.try_recv() {
        chunks.push(chunk);
    }
    assert!(
        chunks
            .iter()
            .any(|c| c.stream == Stream::Stdout && c.chunk.as_bytes() == b"one\n")
    );
    assert!(
        chunks
            .iter()
            .any(|c| c.stream == Stream::Stderr && c.chunk.as_bytes() == b"two\n")
    );
    let ToolResult::RunBash(done) = result else {
        panic!("{result:?}")
    };
    assert_eq!(done.exit_code, Some(0));
}

#[tokio::test]
async fn cancel_stops_the_command_and_says_so() {
    let folder = TempDir::new().unwrap();
    let (connection, _child) = runner(&folder).await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let marker = folder.path().join("late");
    let command = format!("sleep 5; touch {}", marker.display());
    let result = connection.call(bash(&command), None, &cancel).await;
    assert_eq!(result, Err(CallError::Cancelled));
    assert!(started.elapsed() < Duration::from_secs(4));
    // The connection is still usable, and the killed command never finished.
    let after = connection
        .call(bash("echo alive"), None, &CancellationToken::new())
        .await;
    assert!(matches!(after, Ok(ToolResult::RunBash(_))));
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(!marker.exists(), "the cancelled command ran to its end");
}

#[tokio::test]
async fn download_and_upload_round_trip_with_checksums() {
    let folder = TempDir::new().unwrap();
    let bytes: Vec<u8> = (0..5_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(folder.path().join("blob.bin"), &bytes).unwrap();
    let (connection, _child) = runner(&folder).await;
    let cancel = CancellationToken::new();

    let (downloaded, result) = connection.download("blob.bin", &cancel).await.unwrap();
    assert_eq!(downloaded, bytes);
    assert_eq!(result.size, bytes.len() as u64);
    assert_eq!(result.checksum, tool_protocol::checksum::checksum(&bytes));

    let uploaded = connection
        .upload("copy.bin", &bytes, 700_000, &cancel)
        .await
        .unwrap();
    assert!(uploaded.complete);
    assert_eq!(
        std::fs::read(folder.path().join("copy.bin")).unwrap(),
        bytes
    );
}

#[tokio::test]
async fn a_refusal_carries_the_runner_code_and_path() {
    let folder = TempDir::new().unwrap();
    let (connection, _child) = runner(&folder).await;
    let request = ToolRequest::WriteFile(WriteFile {
        path: "/etc/paddock-test".into(),
        content: "x".into(),
        create_parents: None,
    });
    match connection
        .call(request, None, &CancellationToken::new())
        .await
    {
        Err(CallError::Tool { code, message }) => {
            assert_eq!(code, ErrorCode::OutsideRoots);
            assert!(message.contains("/etc/paddock-test"), "{message}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_lost_runner_fails_calls_in_flight_and_later_ones() {
    let folder = TempDir::new().unwrap();
    let (connection, mut child) = runner(&folder).await;
    let connection = Arc::new(connection);
    let in_flight = {
        let connection = connection.clone();
        tokio::spawn(async move {
            connection
                .call(bash("sleep 30"), None, &CancellationToken::new())
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    child.kill().await.unwrap();
    let result = tokio::time::timeout(Duration::from_secs(5), in_flight)
        .await
        .expect("the in-flight call should end when the runner dies")
        .unwrap();
    assert!(
        matches!(result, Err(CallError::Disconnected(_))),
        "{result:?}"
    );
    connection.ended().await;
    let later = connection
        .call(bash("true"), None, &CancellationToken::new())
        .await;
    assert!(
        matches!(later, Err(CallError::Disconnected(_))),
        "{later:?}"
    );
}

/// A forged runner (a command that took over the runner's connection would be one): it greets,
/// answers the download's `stat` with `announced` bytes, then sends four bytes.
async fn forged_download(
    announced: u64,
) -> Result<(Vec<u8>, tool_protocol::DownloadResult), CallError> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tool_protocol::checksum::Crc32c;
    use tool_protocol::{DownloadResult, Encoding, FileKind, Hello, RunnerFrame, StatResult};
    let (host_side, runner_side) = tokio::io::duplex(1 << 16);
    let (runner_read, mut runner_write) = tokio::io::split(runner_side);
    tokio::spawn(async move {
        let hello = RunnerFrame::Hello(Hello {
            protocol: tool_protocol::PROTOCOL_VERSION,
            build_id: "crc32c:forged".into(),
            roots: Vec::new(),
            cwd: "/".into(),
            pid: 1,
        });
        runner_write
            .write_all(hello.encode().as_bytes())
            .await
            .unwrap();
        let mut lines = BufReader::new(runner_read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let frame: serde_json::Value = serde_json::from_str(&line).unwrap();
            let id = frame["id"].as_str().unwrap_or_default().to_owned();
            let replies = match frame["tool"].as_str() {
                Some("stat") => vec![RunnerFrame::Result {
                    id,
                    result: ToolResult::Stat(StatResult {
                        path: "big.bin".into(),
                        kind: FileKind::File,
                        size: announced,
                        modified_ms: None,
                        mode: 0o644,
                        read_only: false,
                        link_target: None,
                        device: None,
                        inode: None,
                    }),
                }],
                Some("download") => {
                    let mut crc = Crc32c::new();
                    crc.update(b"tiny");
                    let mut data = Vec::new();
                    RunnerFrame::encode_output_into(
                        &id,
                        Stream::Data,
                        b"tiny",
                        Encoding::Base64,
                        &mut data,
                    );
                    runner_write.write_all(&data).await.unwrap();
                    vec![RunnerFrame::Result {
                        id,
                        result: ToolResult::Download(DownloadResult {
                            path: "big.bin".into(),
                            size: 4,
                            checksum: crc.to_wire(),
                        }),
                    }]
                }
                _ => Vec::new(),
            };
            for reply in replies {
                runner_write
                    .write_all(reply.encode().as_bytes())
                    .await
                    .unwrap();
            }
        }
    });
    let (read, write) = tokio::io::split(host_side);
    let connection = RunnerConnection::open(read, write, Duration::from_secs(10))
        .await
        .unwrap();
    connection
        .download("big.bin", &CancellationToken::new())
        .await
}

#[tokio::test]
async fn a_forged_size_does_not_make_the_host_reserve_it() {
    let (bytes, _) = forged_download(900 << 20).await.unwrap();
    assert_eq!(bytes, b"tiny");
    assert!(
        bytes.capacity() <= 16 << 20,
        "the host reserved {} bytes for a 4-byte download",
        bytes.capacity()
    );
}

#[tokio::test]
async fn a_download_over_the_limit_is_refused_before_any_byte() {
    let err = forged_download(1 << 40).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("over the limit"), "{text}");
}
