use super::*;

#[test]
fn parses_connect() {
    let r = parse(
        "CONNECT Example.COM:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
        None,
    )
    .unwrap();
    assert_eq!(
        (r.host.as_str(), r.port, r.target),
        ("example.com", 443, Target::Connect)
    );
    let r = parse("CONNECT [::1]:22 HTTP/1.1\r\n\r\n", None).unwrap();
    assert_eq!((r.host.as_str(), r.port), ("::1", 22));
}

#[test]
fn rewrites_absolute_form_to_origin_form() {
    let head = "GET http://example.com:8080/a?b=1 HTTP/1.1\r\nHost: example.com:8080\r\n\
                Proxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n";
    let r = parse(head, Some("/usr/bin/curl".into())).unwrap();
    assert_eq!((r.host.as_str(), r.port), ("example.com", 8080));
    let Target::Forward { origin_head } = r.target else {
        panic!("not a forward")
    };
    assert!(
        origin_head.starts_with("GET /a?b=1 HTTP/1.1\r\n"),
        "{origin_head}"
    );
    assert!(!origin_head.to_lowercase().contains("proxy-connection"));
    assert!(origin_head.ends_with("Connection: close\r\n\r\n"));
    assert_eq!(r.program.as_deref(), Some("/usr/bin/curl"));
}

#[test]
fn refuses_a_host_header_that_names_another_host() {
    let head = "GET http://allowed.test/ HTTP/1.1\r\nHost: blocked.test\r\n\r\n";
    assert_eq!(
        parse(head, None),
        Err(BadRequest::HostMismatch {
            host: "allowed.test".into(),
            port: 80,
            header: "blocked.test".into()
        })
    );
    let two = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n";
    assert!(matches!(parse(two, None), Err(BadRequest::Malformed(_))));
}

#[test]
fn refuses_origin_form_https_and_junk() {
    for head in [
        "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
        "GET https://a.test/ HTTP/1.1\r\n\r\n",
        "CONNECT a.test HTTP/1.1\r\n\r\n",
        "CONNECT a.test:0 HTTP/1.1\r\n\r\n",
        "CONNECT user@a.test:443 HTTP/1.1\r\n\r\n",
        "CONNECT a test:443 HTTP/1.1\r\n\r\n",
        "CONNECT a.test:443 SPDY/3\r\n\r\n",
    ] {
        assert!(
            matches!(parse(head, None), Err(BadRequest::Malformed(_))),
            "{head:?}"
        );
    }
}

#[tokio::test]
async fn reads_preamble_head_and_leftover() {
    let token = BridgeToken::from_hex_for_tests("00112233445566778899aabbccddeeff");
    let input = b"PADDOCK-BRIDGE token=00112233445566778899aabbccddeeff program=/usr/bin/python3\n\
                  CONNECT a.test:443 HTTP/1.1\r\n\r\nHELLO";
    let (preamble, head, rest) = read_head(&mut &input[..], Some(&token)).await.unwrap();
    assert_eq!(
        preamble,
        Preamble::Bridge(Some("/usr/bin/python3".to_owned()))
    );
    assert_eq!(head, "CONNECT a.test:443 HTTP/1.1\r\n\r\n");
    assert_eq!(rest, b"HELLO");
    let unknown = b"PADDOCK-BRIDGE token=00112233445566778899aabbccddeeff program=-\n\
                    CONNECT a.test:443 HTTP/1.1\r\n\r\n";
    let (preamble, _, _) = read_head(&mut &unknown[..], Some(&token)).await.unwrap();
    assert_eq!(preamble, Preamble::Bridge(None));
    // Without a token to compare, every preamble is forged.
    let (preamble, head, _) = read_head(&mut &input[..], None).await.unwrap();
    assert_eq!((preamble.program(), preamble), (None, Preamble::Forged));
    assert_eq!(head, "CONNECT a.test:443 HTTP/1.1\r\n\r\n");
    let plain = b"CONNECT a.test:443 HTTP/1.1\r\n\r\n";
    let (preamble, _, _) = read_head(&mut &plain[..], Some(&token)).await.unwrap();
    assert_eq!(preamble, Preamble::Absent);
}

#[tokio::test]
async fn refuses_an_endless_head() {
    let input = vec![b'a'; MAX_HEAD_BYTES + 10];
    let err = read_head(&mut &input[..], None).await.unwrap_err();
    assert!(err.to_string().contains("longer than"), "{err}");
}
