//! `upload` and `download`: chunked, in order, integrity-checked.

use std::fs;

use tool_protocol::checksum::checksum;
use tool_protocol::{Data, Download, ErrorCode, Stream, ToolResult, Upload};

use super::harness::{Fixture, Runner};

fn chunk(path: &str, transfer: &str, offset: usize, data: &[u8], last: Option<&[u8]>) -> Upload {
    Upload {
        path: path.into(),
        transfer: transfer.into(),
        offset: offset as u64,
        data: Data::binary(data.to_vec()),
        last: last.is_some(),
        size: last.map(|all| all.len() as u64),
        checksum: last.map(checksum),
    }
}

fn upload_all(runner: &Runner, path: &str, transfer: &str, bytes: &[u8], piece: usize) {
    let mut offset = 0;
    for part in bytes.chunks(piece) {
        let last = offset + part.len() == bytes.len();
        let ToolResult::Upload(r) =
            runner.ok(chunk(path, transfer, offset, part, last.then_some(bytes)))
        else {
            panic!()
        };
        offset += part.len();
        assert_eq!((r.received, r.complete), (offset as u64, last));
    }
}

#[test]
fn upload_then_download_round_trips_byte_for_byte() {
    let fx = Fixture::new();
    let runner = fx.runner();
    let bytes: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    upload_all(&runner, "data/blob.bin", "t1", &bytes, 700_000);
    assert_eq!(fs::read(fx.work.join("data/blob.bin")).unwrap(), bytes);
    let reply = runner
        .call(Download {
            path: "data/blob.bin".into(),
            chunk_bytes: Some(1 << 20),
        })
        .unwrap();
    assert_eq!(reply.outputs.len(), 3);
    assert!(
        reply
            .outputs
            .iter()
            .all(|(s, d)| *s == Stream::Data && matches!(d, Data::Bytes(_)))
    );
    assert_eq!(reply.output_bytes(Stream::Data), bytes);
    let Ok(ToolResult::Download(d)) = reply.outcome else {
        panic!()
    };
    assert_eq!((d.size, d.checksum), (bytes.len() as u64, checksum(&bytes)));
}

#[test]
fn an_empty_file_downloads_as_no_frames() {
    let fx = Fixture::new();
    fs::write(fx.work.join("empty"), "").unwrap();
    let runner = fx.runner();
    let reply = runner
        .call(Download {
            path: "empty".into(),
            chunk_bytes: None,
        })
        .unwrap();
    assert!(reply.outputs.is_empty());
    assert!(
        matches!(reply.outcome, Ok(ToolResult::Download(d)) if d.size == 0 && d.checksum == "crc32c:00000000")
    );
}

#[test]
fn a_wrong_checksum_or_size_leaves_nothing_behind() {
    let fx = Fixture::new();
    fs::write(fx.work.join("keep.bin"), "original").unwrap();
    let runner = fx.runner();
    let mut bad = chunk("keep.bin", "t", 0, b"new bytes", Some(b"new bytes"));
    bad.checksum = Some(checksum(b"other bytes"));
    let message = runner.refused(bad, ErrorCode::ChecksumMismatch);
    assert!(message.contains("nothing was written"), "{message}");
    let mut short = chunk("keep.bin", "t", 0, b"new bytes", Some(b"new bytes"));
    short.size = Some(100);
    runner.refused(short, ErrorCode::ChecksumMismatch);
    assert_eq!(
        fs::read_to_string(fx.work.join("keep.bin")).unwrap(),
        "original"
    );
    let names: Vec<_> = fs::read_dir(&fx.work)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.to_string_lossy().contains(".paddock-")),
        "{names:?}"
    );
}

#[test]
fn chunks_out_of_order_or_unknown_transfers_are_refused() {
    let fx = Fixture::new();
    let runner = fx.runner();
    runner.refused(
        chunk("x.bin", "nope", 10, b"abc", None),
        ErrorCode::BadTransfer,
    );
    runner.ok(chunk("x.bin", "t", 0, b"abc", None));
    let message = runner.refused(chunk("x.bin", "t", 5, b"def", None), ErrorCode::BadTransfer);
    assert_eq!(
        message,
        "transfer `t`: chunk at offset 5, but 3 bytes have arrived"
    );
    // The refusal ended the transfer.
    runner.refused(chunk("x.bin", "t", 3, b"def", None), ErrorCode::BadTransfer);
    assert!(!fx.work.join("x.bin").exists());
    let mut missing = chunk("y.bin", "u", 0, b"abc", Some(b"abc"));
    missing.checksum = None;
    runner.refused(missing, ErrorCode::BadArgs);
}

#[test]
fn unfinished_uploads_are_cleaned_up_when_the_connection_ends() {
    let fx = Fixture::new();
    {
        let runner = fx.runner();
        runner.ok(chunk("half.bin", "t", 0, b"half", None));
        runner.shutdown().unwrap();
        let mut runner = runner;
        runner.child.wait().unwrap();
    }
    let names: Vec<_> = fs::read_dir(&fx.work)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        names.iter().all(|n| !n.to_string_lossy().contains("half")),
        "{names:?}"
    );
}

#[test]
fn download_refusals() {
    let fx = Fixture::new();
    let runner = fx.runner();
    runner.refused(
        Download {
            path: "sub".into(),
            chunk_bytes: None,
        },
        ErrorCode::IsADirectory,
    );
    runner.refused(
        Download {
            path: "a.txt".into(),
            chunk_bytes: Some(0),
        },
        ErrorCode::BadArgs,
    );
    runner.refused(
        Download {
            path: "gone".into(),
            chunk_bytes: None,
        },
        ErrorCode::NotFound,
    );
}
