//! The proxy double over real sockets: tunnels to a real listener, records what it saw,
//! refuses when told to.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::TestConnectProxy;

/// Sends `head` to the proxy and returns the connection and the proxy's answer head.
async fn ask(proxy: &TestConnectProxy, head: &str) -> (TcpStream, String) {
    let mut stream = TcpStream::connect(proxy.addr()).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut byte = [0u8; 1];
    while !answer.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.unwrap() == 0 {
            break;
        }
        answer.push(byte[0]);
    }
    (stream, String::from_utf8(answer).unwrap())
}

#[tokio::test]
async fn connect_opens_a_tunnel_and_records_the_bytes_sent_through_it() {
    let upstream = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target = upstream.local_addr().unwrap();
    let echo = tokio::spawn(async move {
        let (mut socket, _) = upstream.accept().await.unwrap();
        let mut buffer = [0u8; 5];
        socket.read_exact(&mut buffer).await.unwrap();
        socket.write_all(&buffer).await.unwrap();
    });
    let proxy = TestConnectProxy::start().await.unwrap();
    assert_eq!(proxy.url(), format!("http://{}", proxy.addr()));
    let (mut tunnel, answer) = ask(
        &proxy,
        &format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\nX-Probe: yes\r\n\r\n"),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    tunnel.write_all(b"hello").await.unwrap();
    let mut echoed = [0u8; 5];
    tunnel.read_exact(&mut echoed).await.unwrap();
    assert_eq!(&echoed, b"hello");
    echo.await.unwrap();
    let attempts = proxy.attempts();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].method, "CONNECT");
    assert_eq!(attempts[0].target, target.to_string());
    assert_eq!(attempts[0].status, 200);
    assert!(
        attempts[0]
            .headers
            .contains(&("x-probe".to_owned(), "yes".to_owned()))
    );
    assert_eq!(attempts[0].tunneled_from_client, b"hello");
}

#[tokio::test]
async fn a_refusing_proxy_answers_its_status_and_opens_nothing() {
    let proxy = TestConnectProxy::start_refusing(403, "Forbidden")
        .await
        .unwrap();
    let (_stream, answer) = ask(&proxy, "CONNECT 127.0.0.1:9 HTTP/1.1\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    let attempts = proxy.attempts();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].status, 403);
    assert!(attempts[0].tunneled_from_client.is_empty());
}

#[tokio::test]
async fn anything_but_connect_is_refused_with_405() {
    let proxy = TestConnectProxy::start().await.unwrap();
    let (_stream, answer) = ask(
        &proxy,
        "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
    assert_eq!(proxy.attempts()[0].method, "GET");
}
