//! The fast paths for `output` frames must be invisible: the same bytes as the general
//! encoder, the same frames and errors as the general decoder.

use tool_protocol::{Data, Encoding, Line, RunnerFrame, Stream};

fn samples() -> Vec<(String, Stream, Vec<u8>, Encoding)> {
    let ids = [
        "1",
        "call-7",
        "quote\"d",
        "back\\slash",
        "tab\there",
        "é",
        "\u{1}",
    ];
    let payloads: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"hi\n".to_vec(),
        vec![0xff],
        "héllo \"quoted\"\t\u{1}\u{7f}".as_bytes().to_vec(),
        (0..=255u8).collect(),
        (0..70_000u32).map(|i| (i * 7 % 251) as u8).collect(),
    ];
    let mut out = Vec::new();
    for id in ids {
        for stream in [Stream::Stdout, Stream::Stderr, Stream::Data] {
            for payload in &payloads {
                for encoding in [Encoding::Utf8, Encoding::Base64] {
                    out.push((id.to_owned(), stream, payload.clone(), encoding));
                }
            }
        }
    }
    out
}

#[test]
fn the_fast_encoder_writes_the_general_encoders_bytes() {
    for (id, stream, bytes, encoding) in samples() {
        let chunk = match (encoding, String::from_utf8(bytes.clone())) {
            (Encoding::Utf8, Ok(text)) => Data::Text(text),
            _ => Data::Bytes(bytes.clone()),
        };
        let general = RunnerFrame::Output {
            id: id.clone(),
            stream,
            chunk,
        }
        .encode();
        let mut fast = b"earlier frames\n".to_vec();
        RunnerFrame::encode_output_into(&id, stream, &bytes, encoding, &mut fast);
        assert_eq!(&fast[15..], general.as_bytes(), "id {id:?}, {encoding:?}");
    }
}

#[test]
fn the_fast_decoder_agrees_with_the_general_one() {
    for (id, stream, bytes, encoding) in samples() {
        let mut line = Vec::new();
        RunnerFrame::encode_output_into(&id, stream, &bytes, encoding, &mut line);
        let text = String::from_utf8(line).unwrap().trim_end().to_owned();
        // A trailing space is still JSON but never canonical: it takes the general path.
        let general = RunnerFrame::decode(&Line::Text(format!("{text} ")));
        let fast = RunnerFrame::decode(&Line::Text(text));
        assert_eq!(fast, general, "id {id:?}");
        assert!(fast.is_ok());
    }
}

#[test]
fn appending_output_bytes_matches_decoding_the_frame() {
    for (id, stream, bytes, _) in samples() {
        let mut line = Vec::new();
        RunnerFrame::encode_output_into(&id, stream, &bytes, Encoding::Base64, &mut line);
        let text = String::from_utf8(line).unwrap().trim_end().to_owned();
        let mut out = b"earlier".to_vec();
        let appended = RunnerFrame::append_output_bytes(text.as_bytes(), &mut out);
        let plain_id = !id
            .bytes()
            .any(|b| b < 0x20 || b == b'\\' || b == b'"' || b == 0x7f);
        if plain_id {
            assert_eq!(appended, Some((id.as_str(), stream)));
            assert_eq!(&out[7..], &bytes[..]);
        } else {
            // Escaped ids take the general path.
            assert_eq!(appended, None);
            assert_eq!(out, b"earlier");
        }
    }
    let text_frame =
        r#"{"type":"output","id":"1","stream":"stdout","chunk":{"encoding":"utf8","data":"hi"}}"#;
    let mut out = Vec::new();
    assert_eq!(
        RunnerFrame::append_output_bytes(text_frame.as_bytes(), &mut out),
        None
    );
    let bad = r#"{"type":"output","id":"1","stream":"data","chunk":{"encoding":"base64","data":"AAAA@@@@"}}"#;
    assert_eq!(
        RunnerFrame::append_output_bytes(bad.as_bytes(), &mut out),
        None
    );
    let not_utf8 = b"{\"type\":\"output\",\"id\":\"\xff\",\"stream\":\"data\",\"chunk\":{\"encoding\":\"base64\",\"data\":\"AAAA\"}}";
    assert_eq!(RunnerFrame::append_output_bytes(not_utf8, &mut out), None);
    assert!(out.is_empty());
}

#[test]
fn near_canonical_lines_fall_back_with_the_same_errors() {
    for line in [
        r#"{"type":"output","id":"1","stream":"data","chunk":{"encoding":"base64","data":"@@@@"}}"#,
        r#"{"type":"output","id":"1","stream":"data","chunk":{"encoding":"base64","data":"3q2+7w=="}}x"#,
        r#"{"type":"output","id":"1","stream":"river","chunk":{"encoding":"base64","data":"3q2+7w=="}}"#,
        r#"{"type":"output","id":"1","stream":"data","chunk":{"encoding":"base64","data":"3q2+7w==","x":1}}"#,
        r#"{"type":"output","id":"1","stream":"data","chunk":{"encoding":"base64","data":"3q2+"}}"#,
    ] {
        let fast = RunnerFrame::decode(&Line::Text(line.to_owned()));
        let general = RunnerFrame::decode(&Line::Text(format!("{line} ")));
        assert_eq!(fast, general, "{line}");
    }
}
