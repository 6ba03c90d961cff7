//! The golden frames of `tool-protocol`: the runner accepts every host line and answers the
//! deterministic ones with the runner lines byte for byte (paths mapped onto a fixture tree).

use std::fs;
use std::os::unix::fs::symlink;

use tool_protocol::{Line, RunnerFrame};

use super::harness::{Fixture, RawRunner};

const HOST: &str = include_str!("../../../tool-protocol/tests/golden/host.jsonl");
const RUNNER: &str = include_str!("../../../tool-protocol/tests/golden/runner.jsonl");

/// The golden runner line that answers call `id` with `kind` (`result`, `output`, `error`).
fn golden(kind: &str, id: &str) -> Vec<String> {
    RUNNER
        .lines()
        .filter(|l| l.starts_with(&format!("{{\"type\":\"{kind}\",\"id\":\"{id}\"")))
        .map(str::to_owned)
        .collect()
}

/// Replaces a member's number value with `0`, for the fields that depend on time.
fn mask(line: &str, member: &str) -> String {
    let key = format!("\"{member}\":");
    let Some(start) = line.find(&key) else {
        return line.to_owned();
    };
    let value = start + key.len();
    let end = line[value..]
        .find(|c: char| !c.is_ascii_digit() && c != '-')
        .map_or(line.len(), |n| value + n);
    format!("{}0{}", &line[..value], &line[end..])
}

/// The fixture the golden lines assume, under `root` instead of `/work/p`.
fn golden_tree(fx: &Fixture) {
    let w = &fx.work;
    // 120 bytes and 11 lines; lines 9-11 are the ones the golden answers quote.
    let mut main = format!("{}\n", "x".repeat(82));
    main.push_str(&"x\n".repeat(7));
    main.push_str("// entry\nfn main() {\n}\n");
    assert_eq!(main.len(), 120);
    fs::create_dir(w.join("src")).unwrap();
    fs::write(w.join("src/main.rs"), &main).unwrap();
    fs::write(w.join("blob.bin"), [0u8, 1, 2, 3]).unwrap();
    fs::write(w.join("a.txt"), "foo foo foo\n").unwrap();
    fs::create_dir(w.join("build")).unwrap();
    for i in 0..11 {
        fs::write(w.join(format!("build/f{i}")), "").unwrap();
    }
    symlink("a.txt", w.join("link")).unwrap();
}

#[test]
fn golden_requests_get_golden_answers() {
    let fx = Fixture::new();
    golden_tree(&fx);
    let root = fx.work.display().to_string();
    let mut raw = RawRunner::start(&fx);
    let host: Vec<String> = HOST.lines().map(|l| l.replace("/work/p", &root)).collect();
    let expect = |kind: &str, id: &str| -> Vec<String> {
        golden(kind, id)
            .iter()
            .map(|l| l.replace("/work/p", &root))
            .collect()
    };

    // Call 1 (run_bash `echo hi`): the output frame byte for byte, the result but its duration.
    raw.send_line(&host[0]);
    assert_eq!(raw.next_line(), expect("output", "1")[0]);
    assert_eq!(
        mask(&raw.next_line(), "duration_ms"),
        mask(&expect("result", "1")[0], "duration_ms")
    );

    // Calls whose answers are fully determined by the fixture.
    for (index, id) in [(1, "2"), (2, "3"), (3, "4"), (5, "6"), (6, "7"), (11, "12")] {
        raw.send_line(&host[index]);
        assert_eq!(raw.next_line(), expect("result", id)[0], "call {id}");
    }
    // The upload of call 12 is downloaded by call 13: one data frame and the checksum.
    raw.send_line(&host[12]);
    assert_eq!(raw.next_line(), expect("output", "13")[0]);
    assert_eq!(raw.next_line(), expect("result", "13")[0]);

    // Calls that depend on the tree's times or the search engines: accepted, answered with
    // a result of the same tool.
    for (index, id, tool) in [
        (4, "5", "write_file"),
        (7, "8", "list_directory"),
        (8, "9", "stat"),
        (9, "10", "glob"),
        (10, "11", "grep"),
        (13, "14", "list_directory"),
    ] {
        raw.send_line(&host[index]);
        let line = raw.next_line();
        let prefix = format!("{{\"type\":\"result\",\"id\":\"{id}\",\"tool\":\"{tool}\"");
        assert!(line.starts_with(&prefix), "call {id}: {line}");
    }
    let stat = expect("result", "9")[0].clone();
    raw.send_line(&host[8]);
    // Times and the file's identity differ from machine to machine.
    let unstable = |line: &str| {
        ["modified_ms", "device", "inode"]
            .iter()
            .fold(line.to_owned(), |line, member| mask(&line, member))
    };
    assert_eq!(unstable(&raw.next_line()), unstable(&stat));

    // The golden error lines.
    raw.send_line(r#"{"type":"call","id":"2","tool":"read_file","args":{"path":"/etc/passwd"}}"#);
    let errors: Vec<&str> = RUNNER
        .lines()
        .filter(|l| l.starts_with("{\"type\":\"error\""))
        .collect();
    assert_eq!(raw.next_line(), errors[0]);
    raw.send_line("x");
    assert_eq!(raw.next_line(), errors[1]);

    // `cancel` for a call not in flight is ignored; `shutdown` ends the runner.
    raw.send_line(&host[14]);
    raw.send_line(&host[15]);
    raw.close_input();
    assert!(raw.child.wait().unwrap().success());
    let rest = raw.rest();
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn the_hello_frame_has_the_golden_shape() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let hello = RunnerFrame::Hello(runner.hello().clone()).encode();
    let golden = RUNNER.lines().next().unwrap();
    // Same members in the same order; the values are this runner's.
    let members = |line: &str| -> Vec<String> {
        match tool_protocol::json::Value::parse(line).unwrap() {
            tool_protocol::json::Value::Object(members) => {
                members.into_iter().map(|(k, _)| k).collect()
            }
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(members(&hello), members(golden));
    let RunnerFrame::Hello(h) =
        RunnerFrame::decode(&Line::Text(hello.trim_end().to_owned())).unwrap()
    else {
        panic!()
    };
    // The build id is the protocol checksum of the runner executable.
    let exe = fs::read(super::harness::exe()).unwrap();
    assert_eq!(h.build_id, tool_protocol::checksum::checksum(&exe));
}
