//! The SSE parser on a realistic Anthropic stream, against a baseline measured in the same
//! run: parsing each event's JSON, which every client must do anyway.
//!
//! `cargo bench -p model-client --bench sse`

#![allow(clippy::unwrap_used, reason = "bench setup: a panic is a failed bench")]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use model_client::sse::{SseEvent, SseParser};

/// 2,000 text deltas of a few tokens each, framed as the Messages API frames them.
fn stream() -> String {
    let mut out = String::from(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n\
         event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    );
    for i in 0..2000 {
        out.push_str(&format!(
            "event: content_block_delta\r\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"token {i} of the answer, caf\u{e9} \"}}}}\r\n\r\n"
        ));
    }
    out.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    out
}

fn parse(bytes: &[u8], chunk: usize) -> usize {
    let mut parser = SseParser::new();
    let mut events: Vec<SseEvent> = Vec::new();
    for piece in bytes.chunks(chunk) {
        parser.push(piece, &mut events).unwrap();
    }
    events.len()
}

fn bench(c: &mut Criterion) {
    let text = stream();
    let bytes = text.as_bytes();
    let events = {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        parser.push(bytes, &mut events).unwrap();
        events
    };
    let mut group = c.benchmark_group("sse");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("baseline: serde_json of every event's data", |b| {
        b.iter(|| {
            for event in &events {
                black_box(serde_json::from_str::<serde_json::Value>(&event.data).unwrap());
            }
        });
    });
    group.bench_function("parse, whole body in one chunk", |b| {
        b.iter(|| black_box(parse(black_box(bytes), bytes.len())));
    });
    group.bench_function("parse, 1460-byte chunks (one TCP segment)", |b| {
        b.iter(|| black_box(parse(black_box(bytes), 1460)));
    });
    group.bench_function("parse, 16-byte chunks", |b| {
        b.iter(|| black_box(parse(black_box(bytes), 16)));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
