//! Drafted network rules through the API, on the OpenShell provider against the gateway
//! double (real gRPC over mTLS; each sandbox's commands run inside the real local wall, so
//! the denial and the drafted rule are genuine): a denied connection drafts a rule, the API
//! lists it, approving it lets the next call through and is recorded.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use crate::common;

use common::{TestServer, openshell_config, owned_folder, registered_double, temp_dir};
use protocol::EventMsg;
use serde_json::json;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use test_support::model_server::Reply;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A web server on loopback that the double resolves `later.test` to.
async fn web_server() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                let _ = stream.read(&mut buffer).await;
                let body = "hello from later.test";
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drafted_rule_is_listed_approved_and_lets_the_next_call_through() {
    let root = temp_dir();
    let port = web_server().await;
    let _double = registered_double(root.path(), |config| {
        config.hosts = BTreeMap::from([(
            "later.test".to_owned(),
            vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
        )]);
    })
    .await;
    let server = TestServer::start_with_config(&openshell_config("")).await;
    let (_work, work_path) = owned_folder();

    let curl = json!({"command": format!("curl -sS --max-time 10 http://later.test:{port}/ 2>&1 || true")});
    for id in ["w1", "w2"] {
        server
            .model
            .push(Reply::tool_call(id, "run_bash", curl.clone()));
        server.model.push(Reply::final_text("ok"));
    }
    let session = server
        .create_session(&[(&work_path, "read_write")], "bypass")
        .await;
    let info = server
        .call(server.get(&format!("/v1/sessions/{session}")), 200)
        .await;
    assert_eq!(info["provider"], "openshell");
    let mut events = server.events(&session, 0).await;
    server.send_turn(&session, "fetch later.test").await;
    let first = events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    let denied = first.iter().any(|e| matches!(&e.msg, EventMsg::ToolCallFinished { network_denials, .. } if network_denials.iter().any(|d| d.host == "later.test")));
    assert!(denied, "the first call was denied: {first:#?}");

    let rules = server
        .call(
            server.get(&format!("/v1/sessions/{session}/network/rules")),
            200,
        )
        .await;
    let rule = rules
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["hosts"][0] == format!("later.test:{port}"))
        .unwrap_or_else(|| panic!("no drafted rule for later.test: {rules}"))
        .clone();
    assert_eq!(rule["binary"], "/usr/bin/curl");
    let decided = server
        .call(
            server.post(
                &format!(
                    "/v1/sessions/{session}/network/rules/{}",
                    rule["id"].as_str().unwrap()
                ),
                &json!({"approve": true}),
            ),
            200,
        )
        .await;
    assert_eq!(decided["id"], rule["id"]);
    let recorded = events
        .until(|m| matches!(m, EventMsg::NetworkRuleDecided { .. }))
        .await;
    assert!(matches!(
        recorded.last().unwrap().msg,
        EventMsg::NetworkRuleDecided { approved: true, .. }
    ));
    let again = server
        .call(
            server.post(
                &format!(
                    "/v1/sessions/{session}/network/rules/{}",
                    rule["id"].as_str().unwrap()
                ),
                &json!({"approve": true}),
            ),
            400,
        )
        .await;
    assert_eq!(again["code"], "invalid_request", "{again}");

    server.send_turn(&session, "fetch again").await;
    let second = events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    let output = second
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ToolCallFinished {
                output,
                network_denials,
                ..
            } => {
                assert!(network_denials.is_empty(), "{network_denials:?}");
                Some(output.clone())
            }
            _ => None,
        })
        .unwrap();
    assert!(output.contains("hello from later.test"), "{output}");
    let audit = server
        .call(
            server.get(&format!(
                "/v1/audit?session={session}&text=network_rule_decided"
            )),
            200,
        )
        .await;
    assert_eq!(audit["events"].as_array().unwrap().len(), 1, "{audit}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_drafted_rule_is_recorded_with_its_reason_and_the_host_stays_refused() {
    let root = temp_dir();
    let port = web_server().await;
    let _double = registered_double(root.path(), |config| {
        config.hosts = BTreeMap::from([(
            "later.test".to_owned(),
            vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
        )]);
    })
    .await;
    let server = TestServer::start_with_config(&openshell_config("")).await;
    let (_work, work_path) = owned_folder();
    let curl = json!({"command": format!("curl -sS --max-time 10 http://later.test:{port}/ 2>&1 || true")});
    for id in ["r1", "r2"] {
        server
            .model
            .push(Reply::tool_call(id, "run_bash", curl.clone()));
        server.model.push(Reply::final_text("ok"));
    }
    let session = server
        .create_session(&[(&work_path, "read_write")], "bypass")
        .await;
    let mut events = server.events(&session, 0).await;
    server.send_turn(&session, "fetch later.test").await;
    events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    let rules = server
        .call(
            server.get(&format!("/v1/sessions/{session}/network/rules")),
            200,
        )
        .await;
    let rule = rules
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["hosts"][0] == format!("later.test:{port}"))
        .unwrap_or_else(|| panic!("no drafted rule for later.test: {rules}"))
        .clone();
    let path = format!(
        "/v1/sessions/{session}/network/rules/{}",
        rule["id"].as_str().unwrap()
    );
    server
        .call(
            server.post(
                &path,
                &json!({"approve": false, "reason": "not a host we use"}),
            ),
            200,
        )
        .await;
    let recorded = events
        .until(|m| matches!(m, EventMsg::NetworkRuleDecided { .. }))
        .await;
    assert!(
        matches!(
            &recorded.last().unwrap().msg,
            EventMsg::NetworkRuleDecided {
                approved: false,
                ..
            }
        ),
        "{recorded:#?}"
    );
    let again = server
        .call(server.post(&path, &json!({"approve": true})), 400)
        .await;
    assert_eq!(
        again["code"], "invalid_request",
        "a decided rule is final: {again}"
    );

    server.send_turn(&session, "fetch again").await;
    let second = events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;
    assert!(
        second.iter().any(
            |e| matches!(&e.msg, EventMsg::ToolCallFinished { network_denials, .. }
            if network_denials.iter().any(|d| d.host == "later.test"))
        ),
        "the rejected host is still refused: {second:#?}"
    );
    let audit = server
        .call(
            server.get(&format!(
                "/v1/audit?session={session}&text=not%20a%20host%20we%20use"
            )),
            200,
        )
        .await;
    assert_eq!(audit["events"].as_array().unwrap().len(), 1, "{audit}");
    server.stop().await;
}
