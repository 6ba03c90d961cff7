use super::*;
use pretty_assertions::assert_eq;

fn parse_chunks(chunks: &[&[u8]]) -> Result<Vec<SseEvent>, SseError> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    for chunk in chunks {
        parser.push(chunk, &mut out)?;
    }
    Ok(out)
}

fn event(name: Option<&str>, data: &str) -> SseEvent {
    SseEvent {
        event: name.map(str::to_owned),
        data: data.to_owned(),
    }
}

/// A stream that uses every feature at once: BOM, comments, CRLF / CR / LF endings, event
/// names, multi-line data, multi-byte UTF-8, a field without a colon, and a value whose
/// leading space is data.
const MIXED: &str = "\u{feff}: keep-alive comment\r\n\
event: message_start\r\n\
data: {\"a\":1}\r\n\
\r\n\
event: content_block_delta\n\
data: h\u{e9}llo \u{1f30d}\n\
data: second line\n\
\n\
:another comment\r\
data:no-space\r\
data:  two spaces\r\
\r\
data\n\
\n\
event: ping\n\
\n\
data: [DONE]\n\
\n";

fn mixed_expected() -> Vec<SseEvent> {
    vec![
        event(Some("message_start"), "{\"a\":1}"),
        event(
            Some("content_block_delta"),
            "h\u{e9}llo \u{1f30d}\nsecond line",
        ),
        event(None, "no-space\n two spaces"),
        event(None, ""),
        event(None, "[DONE]"),
    ]
}

#[test]
fn parses_a_stream_using_every_feature() {
    assert_eq!(
        parse_chunks(&[MIXED.as_bytes()]).ok(),
        Some(mixed_expected())
    );
}

#[test]
fn a_split_at_every_byte_boundary_gives_the_same_events() {
    let bytes = MIXED.as_bytes();
    for split in 0..=bytes.len() {
        let (head, tail) = bytes.split_at(split);
        assert_eq!(
            parse_chunks(&[head, tail]).ok(),
            Some(mixed_expected()),
            "split at byte {split}"
        );
    }
}

#[test]
fn every_two_split_points_give_the_same_events() {
    let bytes = MIXED.as_bytes();
    for first in 0..=bytes.len() {
        for second in first..=bytes.len() {
            let parsed = parse_chunks(&[&bytes[..first], &bytes[first..second], &bytes[second..]]);
            assert_eq!(
                parsed.ok(),
                Some(mixed_expected()),
                "splits at {first} and {second}"
            );
        }
    }
}

#[test]
fn one_byte_at_a_time_gives_the_same_events() {
    let chunks: Vec<&[u8]> = MIXED.as_bytes().chunks(1).collect();
    assert_eq!(parse_chunks(&chunks).ok(), Some(mixed_expected()));
}

#[test]
fn a_cr_at_the_end_of_a_chunk_and_an_lf_at_the_start_of_the_next_are_one_line_end() {
    // Were the pair counted twice, the blank line would dispatch `data: a` alone and the
    // second data line would start a new event.
    let events = parse_chunks(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
    assert_eq!(events.ok(), Some(vec![event(None, "a\nb")]));
}

#[test]
fn an_event_cut_off_by_the_end_of_the_stream_is_not_dispatched() {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    let pushed = parser.push(b"data: one\n\ndata: cut", &mut out);
    assert_eq!(pushed, Ok(()));
    assert_eq!(out, vec![event(None, "one")]);
    assert!(
        parser.finish(),
        "finish must report the dropped partial event"
    );
    assert!(!parser.finish(), "a fresh parser has nothing to drop");
}

#[test]
fn an_event_name_without_data_dispatches_nothing_and_does_not_leak_into_the_next_event() {
    let events = parse_chunks(&[b"event: ping\n\ndata: x\n\n"]);
    assert_eq!(events.ok(), Some(vec![event(None, "x")]));
}

#[test]
fn unknown_fields_id_and_retry_are_ignored() {
    let events = parse_chunks(&[b"id: 7\nretry: 100\nfoo: bar\ndata: x\n\n"]);
    assert_eq!(events.ok(), Some(vec![event(None, "x")]));
}

#[test]
fn invalid_utf8_is_an_error_naming_the_line() {
    let events = parse_chunks(&[b"data: ok\n\ndata: \xff\xfe\n\n"]);
    assert_eq!(events, Err(SseError::InvalidUtf8 { line: 3 }));
    let message = SseError::InvalidUtf8 { line: 3 }.to_string();
    assert!(message.contains("line 3"), "{message}");
}

#[test]
fn a_utf8_character_split_between_chunks_is_reassembled() {
    let text = "data: \u{1f30d}\n\n".as_bytes();
    // The globe is 4 bytes starting at offset 6: split inside it.
    let events = parse_chunks(&[&text[..8], &text[8..]]);
    assert_eq!(events.ok(), Some(vec![event(None, "\u{1f30d}")]));
}

#[test]
fn a_line_longer_than_the_limit_is_refused_instead_of_buffered() {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    let chunk = vec![b'x'; 1024 * 1024];
    let mut result = Ok(());
    for _ in 0..=MAX_EVENT_BYTES / chunk.len() {
        result = parser.push(&chunk, &mut out);
        if result.is_err() {
            break;
        }
    }
    assert_eq!(result, Err(SseError::TooLong { line: 1 }));
}
