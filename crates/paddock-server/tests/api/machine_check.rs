//! The sandbox check through the API, as Settings ▸ Sandbox runs it: a throwaway local wall
//! built on an empty folder, attested from inside (every canary of the real wall), one command
//! run through it, torn down with nothing left; a wall that cannot be built answered as a
//! check that did not pass, with the reason; a provider that does not exist refused.

use crate::common;

use common::TestServer;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_check_builds_attests_runs_and_removes_a_local_wall() {
    let server = TestServer::start().await;
    let check = server
        .call(server.post("/v1/machine/sandbox/check", &Value::Null), 200)
        .await;
    assert_eq!(check["provider"], "local", "{check:#}");
    assert_eq!(check["passed"], true, "{check:#}");
    assert_eq!(check["refused"], Value::Null);
    assert_eq!(check["teardown_error"], Value::Null);
    let attestation = &check["attestation"];
    assert_eq!(attestation["enforcement"], "local");
    let canaries = attestation["canaries"].as_array().unwrap();
    for name in [
        "home_absent",
        "outside_read_refused",
        "outside_write_refused",
        "landlock_enforced",
        "proxy_refuses_unlisted_host",
        "no_new_privs",
        "seccomp_filter",
    ] {
        let canary = canaries
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing: {check:#}"));
        assert_eq!(canary["passed"], true, "{canary}");
    }
    let output = check["call"]["output"].as_array().unwrap();
    let folder = check["folder"].as_str().unwrap();
    assert!(
        output[0]
            .as_str()
            .unwrap()
            .ends_with(&format!("working in {folder}")),
        "{output:?}"
    );
    assert_eq!(output[1], "the granted folder takes writes");
    assert!(check["build_ms"].as_u64().is_some());
    let steps = check["steps"].as_array().unwrap();
    assert!(
        steps[0]
            .as_str()
            .unwrap()
            .starts_with("building a local sandbox on an empty folder"),
        "{steps:?}"
    );
    // Nothing of the throwaway sandbox is left: its folder, its wall; its lease is released.
    assert!(!std::path::Path::new(folder).exists());
    let leases = paddock_host::lease::Leases::new(server.paths.leases_dir());
    let session = std::path::Path::new(folder)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    assert!(session.starts_with("check-"), "{folder}");
    assert!(!leases.is_held(session), "the check's lease is still held");
    for dir in ["checks", "walls"] {
        let left: Vec<_> = std::fs::read_dir(server.paths.state_dir.join(dir))
            .map(|entries| entries.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        let left: Vec<_> = left
            .iter()
            .filter(|name| {
                let name = name.to_string_lossy();
                name.starts_with("check-") || name.starts_with("wall-")
            })
            .collect();
        assert!(left.is_empty(), "{dir}: {left:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wall_that_cannot_be_built_is_a_failed_check_with_its_reason() {
    // No OpenShell gateway is registered for this process: the wall is refused.
    let root = common::temp_dir();
    // SAFETY: set first in the test, before threads that read the environment.
    unsafe {
        std::env::set_var("XDG_CONFIG_HOME", root.path().join("xdg"));
        std::env::set_var("OPENSHELL_SYSTEM_GATEWAY_DIR", root.path().join("none"));
        std::env::set_var("HOME", root.path());
    }
    let server = TestServer::start_with_config(&format!(
        "[openshell]\nimage = \"{}\"\n",
        common::OPENSHELL_IMAGE
    ))
    .await;
    let check = server
        .call(
            server.post("/v1/machine/sandbox/check?provider=openshell", &Value::Null),
            200,
        )
        .await;
    assert_eq!(check["provider"], "openshell");
    assert_eq!(check["passed"], false, "{check:#}");
    let reason = check["refused"].as_str().unwrap();
    assert!(
        reason.contains("paddock machine sandbox status"),
        "{reason}"
    );
    assert_eq!(check["attestation"], Value::Null);
    assert_eq!(check["call"], Value::Null);

    let bad = server
        .call(
            server.post("/v1/machine/sandbox/check?provider=docker", &json!(null)),
            400,
        )
        .await;
    assert_eq!(bad["code"], "invalid_query", "{bad}");
}
