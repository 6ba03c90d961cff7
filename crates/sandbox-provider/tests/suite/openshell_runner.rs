//! The runner's socket on the OpenShell wall (the gateway double): a command must not take the
//! place of the runner that the host reaches through `tool-runner attach`. After a lost attach
//! stream the host attaches anew, by the socket's path; a command that moved the runner's
//! socket away and listened there itself would answer that attach, with the genuine runner's
//! hello copied and forged results after it. The runner's socket folder is not writable by
//! its commands, so the forger never gets the path, and the re-attached call is the genuine
//! runner's; everywhere else the policy lets them write, they still can.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers: a panic is a failed test with a line number"
)]

use crate::openshell_support;

use std::time::Duration;

use openshell_support::{Auth, Harness, bash, bash_result};
use sandbox_provider::{CallError, SandboxProvider};
use test_support::hostile::launch_forger;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cannot_take_the_runner_s_place_for_the_next_attach() {
    let h = Harness::start(Auth::Mtls).await;
    let provider = h.provider();
    let sandbox = provider.start(&h.request(false), &|_| {}).await.unwrap();
    let log = h.rw.join("forger.log").display().to_string();
    let planted = sandbox
        .call(
            bash(&launch_forger(&log, "/run/paddock/runner.sock")),
            None,
            &CancellationToken::new(),
        )
        .await;
    let (said, _) = bash_result(&planted);
    assert!(
        said.contains("ready") || said.contains("refused bind"),
        "the forger did not run: {said}"
    );

    // The stream is lost (a gateway restart, a network cut): once the host noticed (a call
    // on the lost stream fails), the next call attaches anew.
    assert!(
        h.double.drop_attach_streams() >= 1,
        "an attach stream was open"
    );
    let mut outcome = None;
    for _ in 0..5 {
        let tried = sandbox
            .call(bash("echo genuine"), None, &CancellationToken::new())
            .await;
        if !matches!(tried.result, Err(CallError::Disconnected(_))) {
            outcome = Some(tried);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let outcome = outcome.expect("no call was answered after the stream was lost");
    let answered = format!("{:?}", outcome.result);
    assert!(
        !answered.contains("FORGED"),
        "the host took a command's forged runner for the runner (forger: {said}): {answered}"
    );
    let (out, code) = bash_result(&outcome);
    assert_eq!((out.trim(), code), ("genuine", Some(0)), "forger: {said}");
    // The forger got nowhere: the runner's socket could be neither moved nor replaced.
    for refused in ["refused rename", "refused unlink", "refused bind"] {
        assert!(said.contains(refused), "{refused} missing: {said}");
    }
    sandbox.close().await.unwrap();
}

/// Fixing the socket's folder takes nothing else from the commands: they make, move, link and
/// remove entries where the policy lets them write (the workdir `/sandbox`, `/tmp`, the
/// read-write grant), across those folders too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_commands_still_change_what_the_policy_lets_them_write() {
    let h = Harness::start(Auth::Mtls).await;
    let provider = h.provider();
    let sandbox = provider.start(&h.request(false), &|_| {}).await.unwrap();
    let rw = h.rw.display();
    let outcome = sandbox
        .call(
            bash(&format!(
                "set -e; cd /sandbox; mkdir -p a/b; : > a/b/f; mv a/b/f a/g; ln -s g a/h; \
                 mv a /tmp/a; mv /tmp/a {rw}/a; rm -r {rw}/a; : > /tmp/t; ln /tmp/t /tmp/u; \
                 rm /tmp/t /tmp/u; echo ok"
            )),
            None,
            &CancellationToken::new(),
        )
        .await;
    let (out, code) = bash_result(&outcome);
    assert_eq!((out.as_str(), code), ("ok\n", Some(0)));
    sandbox.close().await.unwrap();
}
