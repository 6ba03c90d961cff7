//! Time-of-check/time-of-use: a thread flips a symlink between a folder inside the root and
//! one outside while calls run. No call may ever read outside content or write outside.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use tool_protocol::{Data, ErrorCode, ReadFile, ToolResult, WriteFile};

use super::harness::{Fixture, SECRET};

/// Flips `link` between pointing at `inside` and at `outside` until told to stop.
fn flipper(
    link: &Path,
    inside: &Path,
    outside: &Path,
    stop: Arc<AtomicBool>,
) -> thread::JoinHandle<u64> {
    let (link, inside, outside) = (
        link.to_path_buf(),
        inside.to_path_buf(),
        outside.to_path_buf(),
    );
    thread::spawn(move || {
        let staging = link.with_extension("next");
        let mut flips = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let target = if flips.is_multiple_of(2) {
                &outside
            } else {
                &inside
            };
            let _ = fs::remove_file(&staging);
            symlink(target, &staging).unwrap();
            // rename(2) swaps the link atomically: the name always exists.
            fs::rename(&staging, &link).unwrap();
            flips += 1;
        }
        flips
    })
}

#[test]
fn a_symlink_swapped_during_reads_never_yields_outside_content() {
    let fx = Fixture::new();
    let inside = fx.work.join("inside");
    fs::create_dir(&inside).unwrap();
    fs::write(inside.join("secret.txt"), "harmless\n").unwrap();
    // Also swap a parent folder two levels up, to race the component walk itself.
    fs::create_dir_all(inside.join("deeper")).unwrap();
    fs::write(inside.join("deeper/secret.txt"), "harmless\n").unwrap();
    fs::create_dir_all(fx.outside.join("deeper")).unwrap();
    fs::write(fx.outside.join("deeper/secret.txt"), SECRET).unwrap();
    let link = fx.work.join("flip");
    symlink(&inside, &link).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flips = flipper(&link, &inside, &fx.outside, Arc::clone(&stop));

    let runner = fx.runner();
    let (mut inside_reads, mut refusals) = (0, 0);
    for i in 0..600 {
        let path = if i % 2 == 0 {
            "flip/secret.txt"
        } else {
            "flip/deeper/secret.txt"
        };
        let reply = runner
            .call(ReadFile {
                path: path.into(),
                offset: None,
                limit: None,
            })
            .unwrap();
        match reply.outcome {
            Ok(ToolResult::ReadFile(r)) => {
                assert!(
                    !r.content.contains("SECRET"),
                    "outside content leaked: {r:?}"
                );
                assert!(
                    r.path.starts_with(&fx.work.display().to_string()),
                    "{}",
                    r.path
                );
                inside_reads += 1;
            }
            Ok(other) => panic!("{other:?}"),
            Err(e) => {
                assert_eq!(e.code, ErrorCode::OutsideRoots, "{}", e.message);
                refusals += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flips.join().unwrap();
    assert!(flips > 100, "the flipper barely ran ({flips} flips)");
    // Both outcomes happened, so the race was real.
    assert!(
        inside_reads > 0 && refusals > 0,
        "{inside_reads} reads, {refusals} refusals"
    );
}

#[test]
fn a_symlink_swapped_during_writes_never_writes_outside() {
    let fx = Fixture::new();
    let inside = fx.work.join("inside");
    fs::create_dir(&inside).unwrap();
    let link = fx.work.join("flip");
    symlink(&inside, &link).unwrap();
    let before = fx.outside_snapshot();
    let stop = Arc::new(AtomicBool::new(false));
    let flips = flipper(&link, &inside, &fx.outside, Arc::clone(&stop));

    let runner = fx.runner();
    let mut written = 0;
    for i in 0..400 {
        let reply = runner
            .call(WriteFile {
                path: format!("flip/new-{i}/file.txt"),
                content: Data::from("written\n"),
                create_parents: Some(true),
            })
            .unwrap();
        match reply.outcome {
            Ok(_) => written += 1,
            Err(e) => assert_eq!(e.code, ErrorCode::OutsideRoots, "{}", e.message),
        }
    }
    stop.store(true, Ordering::Relaxed);
    flips.join().unwrap();
    assert_eq!(fx.outside_snapshot(), before, "a write landed outside");
    assert!(written > 0, "no write went through at all");
}
