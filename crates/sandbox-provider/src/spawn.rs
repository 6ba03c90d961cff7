//! Starting a tool-runner: its arguments, and checks on the request every provider shares.

use std::path::Path;

use protocol::FolderAccess;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

use crate::error::ProviderError;
use crate::sandbox::SandboxRequest;

/// The runner's arguments for `mode` (`stdio` or `serve`), serving the request's folders.
pub fn runner_args(mode: &str, socket: Option<&str>, request: &SandboxRequest) -> Vec<String> {
    let mut args = vec![mode.to_owned()];
    if let Some(socket) = socket {
        args.push("--socket".into());
        args.push(socket.to_owned());
    }
    for folder in &request.folders {
        let access = match folder.access {
            FolderAccess::ReadWrite => "rw",
            FolderAccess::ReadOnly => "ro",
        };
        args.push("--root".into());
        args.push(format!("{}:{access}", folder.path));
    }
    args.push("--cwd".into());
    args.push(request.cwd.clone());
    args
}

/// Refuses a request whose folders are not absolute, existing folders, or whose working folder
/// lies outside them.
pub fn check_folders(request: &SandboxRequest) -> Result<(), ProviderError> {
    if request.folders.is_empty() {
        return Err(ProviderError::InvalidRequest(
            "the session has no folders; grant at least one".into(),
        ));
    }
    for folder in &request.folders {
        let path = Path::new(&folder.path);
        if !path.is_absolute() {
            return Err(ProviderError::InvalidRequest(format!(
                "{}: folder grants must be absolute paths",
                folder.path
            )));
        }
        if !path.is_dir() {
            return Err(ProviderError::InvalidRequest(format!(
                "{}: not an existing folder",
                folder.path
            )));
        }
    }
    let cwd = Path::new(&request.cwd);
    if !request
        .folders
        .iter()
        .any(|f| cwd.starts_with(Path::new(&f.path)))
    {
        return Err(ProviderError::InvalidRequest(format!(
            "{}: the working folder must be inside one of the session's folders",
            request.cwd
        )));
    }
    Ok(())
}

/// Sends the runner's stderr (its diagnostics) to the host's log.
pub fn forward_stderr(child: &mut Child, label: &'static str) {
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "tool_runner", sandbox = label, "{line}");
            }
        });
    }
}
