//! Tests that need their own process environment (the proxy variables, `SSL_CERT_FILE`, a
//! global log subscriber) run their client half in a fresh process of this test binary:
//! the parent starts the servers, runs `<binary> --exact <test>` with the environment it
//! wants, and inspects the servers afterwards. Safe under nextest and plain `cargo test`
//! alike: nothing changes the parent's environment.

use std::path::PathBuf;

use model_client::{ClientConfig, Vendor};

use crate::common;

/// Set in the child: the test body runs the client half.
const CHILD_MARKER: &str = "MODEL_CLIENT_TEST_CHILD";
const BASE_URL: &str = "MODEL_CLIENT_TEST_BASE_URL";
const CA_FILE: &str = "MODEL_CLIENT_TEST_CA_FILE";
const VENDOR: &str = "MODEL_CLIENT_TEST_VENDOR";

/// Variables that choose a proxy; none of the parent's reach the child.
const PROXY_VARIABLES: [&str; 9] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
    "REQUEST_METHOD",
];

pub fn is_child() -> bool {
    std::env::var_os(CHILD_MARKER).is_some()
}

/// Where the child's client goes and how.
pub struct ChildTarget {
    pub base_url: String,
    pub vendor: Vendor,
    /// The CA file the child trusts through `extra_ca_file` (`None`: system roots only).
    pub ca_file: Option<PathBuf>,
}

/// What the child printed.
pub struct ChildOutput {
    pub stdout: String,
    pub stderr: String,
}

/// Runs test `test` (its path in this binary, e.g. `proxy::some_test`) alone in a child
/// process with `target` and the extra `env`; panics with its output unless it passed.
pub async fn run_child(test: &str, target: &ChildTarget, env: &[(&str, String)]) -> ChildOutput {
    let mut command = tokio::process::Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_MARKER, "1")
        .env(BASE_URL, &target.base_url)
        .env(
            VENDOR,
            match target.vendor {
                Vendor::Anthropic => "anthropic",
                Vendor::OpenAiCompatible => "openai",
            },
        )
        .env_remove(CA_FILE)
        .kill_on_drop(true);
    if let Some(ca_file) = &target.ca_file {
        command.env(CA_FILE, ca_file);
    }
    for variable in PROXY_VARIABLES {
        command.env_remove(variable);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "the child run of {test} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    ChildOutput { stdout, stderr }
}

/// In the child: the target the parent chose.
pub fn target() -> ChildTarget {
    let variable = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| panic!("the child needs {name} from its parent"))
    };
    ChildTarget {
        base_url: variable(BASE_URL),
        vendor: match variable(VENDOR).as_str() {
            "anthropic" => Vendor::Anthropic,
            _ => Vendor::OpenAiCompatible,
        },
        ca_file: std::env::var_os(CA_FILE).map(PathBuf::from),
    }
}

/// In the child: the client config for `target`.
pub fn config(target: &ChildTarget) -> ClientConfig {
    let mut config = common::config(target.base_url.clone());
    config.extra_ca_file.clone_from(&target.ca_file);
    config
}
