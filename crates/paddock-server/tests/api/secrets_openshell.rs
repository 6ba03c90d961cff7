//! OpenShell secrets through the host and the API, on the gateway double (real gRPC over
//! mTLS; the sandbox's commands run inside the real local wall): a machine setting names the
//! secrets a session may get, the value comes from the key store (here `env`), the session
//! asking for one gets an OpenShell provider holding it (the double records it) and a
//! placeholder in its environment; the value shows in no event, audit row or API answer. A
//! secret the setting does not name is refused, saying where to name it.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use crate::common;

use common::{
    TestServer, openshell_config, owned_folder, registered_double, temp_dir, tool_results,
};
use protocol::EventMsg;
use serde_json::{Value, json};
use test_support::model_server::Reply;

const SECRET: &str = "ghp_PLANTEDsecretValue0123456789abcdefABCD";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_asking_for_a_named_secret_gets_an_openshell_provider_and_never_the_value() {
    let root = temp_dir();
    let double = registered_double(root.path(), |_| {}).await;
    // The `env` key store reads the secret from the variable of its name.
    // SAFETY: set at the start of the test, before threads that read the environment.
    unsafe {
        std::env::set_var("GITHUB_TOKEN", SECRET);
    }
    let server =
        TestServer::start_with_config(&openshell_config("secrets = [\"GITHUB_TOKEN\"]\n")).await;
    let (_work, work_path) = owned_folder();
    let mut answers: Vec<String> = Vec::new();

    // A secret the machine setting does not name is refused, saying where to name it.
    let refused = server
        .call(
            server.post(
                "/v1/sessions",
                &json!({"folders": [{"path": work_path, "access": "read_write"}], "secrets": ["NPM_TOKEN"]}),
            ),
            400,
        )
        .await;
    assert_eq!(refused["code"], "secret_refused", "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("sandbox.secrets"),
        "{refused}"
    );
    answers.push(refused.to_string());

    server.model.push(Reply::tool_call(
        "env",
        "run_bash",
        json!({"command": "printf 'token=%s\\n' \"$GITHUB_TOKEN\""}),
    ));
    server.model.push(Reply::final_text("ok"));
    let created = server
        .call(
            server.post(
                "/v1/sessions",
                &json!({"folders": [{"path": work_path, "access": "read_write"}], "secrets": ["GITHUB_TOKEN"], "approval_mode": "bypass"}),
            ),
            201,
        )
        .await;
    answers.push(created.to_string());
    let session = created["id"].as_str().unwrap().to_owned();
    let mut events = server.events(&session, 0).await;
    server.send_turn(&session, "use the token").await;
    let seen = events
        .until(|m| matches!(m, EventMsg::TurnFinished { .. }))
        .await;

    // The double holds one provider with the value, under the secret's name.
    let providers = double.providers();
    let holding: Vec<_> = providers
        .iter()
        .filter(|p| p.credentials.get("GITHUB_TOKEN").map(String::as_str) == Some(SECRET))
        .collect();
    assert_eq!(holding.len(), 1, "{} providers", providers.len());
    // The command sees the placeholder the gateway resolves, not the value.
    let results = tool_results(&server.model.requests()[1].body);
    assert!(
        results[0].contains("token=openshell:resolve:env:GITHUB_TOKEN"),
        "{results:?}"
    );

    for path in [
        format!("/v1/sessions/{session}"),
        "/v1/sessions".to_owned(),
        "/v1/settings".to_owned(),
        format!("/v1/audit?session={session}&limit=1000"),
    ] {
        answers.push(server.call(server.get(&path), 200).await.to_string());
    }
    let export = server
        .get(&format!("/v1/audit/export?session={session}&format=jsonl"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(export.lines().count() > 3, "{export}");
    let closed = server
        .call(
            server.post(&format!("/v1/sessions/{session}/close"), &Value::Null),
            200,
        )
        .await;
    answers.push(closed.to_string());
    let seen = serde_json::to_string(&seen).unwrap();
    for (what, text) in [
        ("events", &seen),
        ("audit export", &export),
        ("API answers", &answers.join("\n")),
    ] {
        assert!(!text.contains(SECRET), "the secret shows in the {what}");
    }
    assert!(
        seen.contains("openshell:resolve:env:GITHUB_TOKEN"),
        "the events carry the placeholder"
    );
    server.stop().await;
}
