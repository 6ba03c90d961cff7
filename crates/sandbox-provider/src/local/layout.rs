//! The wall's filesystem and process layout: bubblewrap's arguments and the Landlock rules that
//! mirror them, rendered from a session's request. Pure apart from reading what the
//! root folder holds (`/etc` is read by `super::etc`); the result is hashed into the attestation.
//!
//! Inside the sandbox:
//! * the session's folders at their own paths, read-write or read-only, mounted by the handles
//!   the host pinned (`--bind-fd`), with their identities for the launcher to check from inside;
//! * `/usr` and the `/bin`, `/sbin`, `/lib*` links or folders read-only; a synthesized `/etc`
//!   of the allowed entries only (`super::etc`), with a passwd and group naming the sandbox's
//!   user;
//! * a fresh `/proc`, a minimal `/dev`, a private `/tmp` and a private home (both host folders
//!   of this wall, deleted at close);
//! * `/run/paddock`: the launcher and the runner (read-only), the wall's configuration, the
//!   proxy's socket, the runner's socket folder, and the Landlock probe folder;
//! * nothing else: the user's home and the rest of the host are absent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use paddock_wall::config::{
    BRIDGE_PORT, BridgeConfig, GrantIdentity, MIN_LANDLOCK_ABI, PathAccess, PathRule,
    ProtectedIdentity, WallConfig,
};
use paddock_wall::pinned::FolderIdentity;
use protocol::FolderAccess;

use crate::local::identity::Identity;
use crate::sandbox::SandboxRequest;
use crate::spawn::runner_args;

/// Paths inside the sandbox.
pub const BIN_DIR: &str = "/run/paddock/bin";
pub const WALL_INSIDE: &str = "/run/paddock/bin/paddock-wall";
pub const RUNNER_INSIDE: &str = "/run/paddock/bin/tool-runner";
pub const CONFIG_INSIDE: &str = "/run/paddock/wall.json";
pub const PROXY_DIR_INSIDE: &str = "/run/paddock/proxy";
pub const RUNNER_DIR_INSIDE: &str = "/run/paddock/runner";
pub const RUNNER_SOCKET_INSIDE: &str = "/run/paddock/runner/runner.sock";
/// Mounted read-write but given no Landlock rule: writing there proves Landlock is enforced.
pub const LANDLOCK_PROBE_INSIDE: &str = "/run/paddock/landlock-probe";
pub const HOME_INSIDE: &str = "/home/paddock";
pub const PROXY_SOCKET_NAME: &str = "proxy.sock";
pub const RUNNER_SOCKET_NAME: &str = "runner.sock";

/// One granted folder as the layout mounts it: by descriptor `fd`, where the launcher's `outer`
/// stage puts the folder after checking it is the one the host pinned (`identity`, checked
/// again from inside).
#[derive(Debug, Clone)]
pub struct GrantMount {
    pub path: String,
    pub access: FolderAccess,
    pub fd: i32,
    pub identity: FolderIdentity,
}

/// One protected path over a read-write grant as the layout mounts it: by descriptor `fd`,
/// where the launcher's `outer` stage puts what it finds at `path` after checking it has the
/// identity the host pinned (checked again from inside, with the mount read-only unless it is
/// a git directory bound onto itself).
#[derive(Debug, Clone)]
pub struct ProtectedBind {
    pub path: String,
    pub read_only: bool,
    pub fd: i32,
    pub identity: FolderIdentity,
}

/// Folders of this wall on the host.
#[derive(Debug, Clone)]
pub struct HostDirs {
    pub root: PathBuf,
}

impl HostDirs {
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }
    pub fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }
    pub fn proxy(&self) -> PathBuf {
        self.root.join("proxy")
    }
    pub fn proxy_socket(&self) -> PathBuf {
        self.proxy().join(PROXY_SOCKET_NAME)
    }
    pub fn runner(&self) -> PathBuf {
        self.root.join("runner")
    }
    pub fn runner_socket(&self) -> PathBuf {
        self.runner().join(RUNNER_SOCKET_NAME)
    }
    pub fn probe(&self) -> PathBuf {
        self.root.join("landlock-probe")
    }
    pub fn etc(&self) -> PathBuf {
        self.root.join("etc")
    }
    pub fn config(&self) -> PathBuf {
        self.root.join("wall.json")
    }
    /// A file outside every grant that the attestation tries to read from inside.
    pub fn sentinel(&self) -> PathBuf {
        self.root.join("sentinel")
    }
}

/// The rendered wall: bubblewrap's arguments (the command included) and the launcher's config.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub bwrap_args: Vec<String>,
    pub config: WallConfig,
}

struct Builder {
    args: Vec<String>,
    rules: Vec<PathRule>,
}

impl Builder {
    fn arg(&mut self, parts: &[&str]) {
        self.args.extend(parts.iter().map(|s| (*s).to_owned()));
    }
    fn rule(&mut self, path: &str, access: PathAccess) {
        self.rules.push(PathRule {
            path: path.to_owned(),
            access,
        });
    }
    fn ro_bind(&mut self, host: &Path, inside: &str, access: Option<PathAccess>) {
        let host = host.display().to_string();
        self.arg(&["--ro-bind", &host, inside]);
        if let Some(access) = access {
            self.rule(inside, access);
        }
    }
    fn bind(&mut self, host: &Path, inside: &str, access: Option<PathAccess>) {
        let host = host.display().to_string();
        self.arg(&["--bind", &host, inside]);
        if let Some(access) = access {
            self.rule(inside, access);
        }
    }
}

/// What the layout needs besides the request.
pub struct LayoutInput<'a> {
    pub request: &'a SandboxRequest,
    /// The request's folders, pinned.
    pub grants: &'a [GrantMount],
    pub identity: Identity,
    pub dirs: &'a HostDirs,
    pub runner: &'a Path,
    pub wall: &'a Path,
    /// The host's root folder (`/` in production), read to mirror its entries.
    pub host_root: &'a Path,
    /// The synthesized `/etc` ([`super::etc::cached`]).
    pub etc: &'a Path,
    /// Whether bubblewrap can forbid user namespaces inside (`--disable-userns`, 0.8+).
    pub disable_userns: bool,
    /// Environment of the enabled credential entries.
    pub credential_env: BTreeMap<String, String>,
    /// The wall's bridge token (hex), for the bridge's preambles.
    pub bridge_token: &'a str,
    /// Files the host runs later, inside the read-write folders (parents first), pinned.
    pub protected: &'a [ProtectedBind],
    /// Tests only ([`super::LocalConfig::test_unscoped_signals`]).
    pub unscoped_signals: bool,
}

/// The environment of the sandbox's main process (and so of every command it runs).
pub fn environment(extra: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let proxy = format!("http://127.0.0.1:{BRIDGE_PORT}");
    let mut env = BTreeMap::from([
        (
            "PATH".to_owned(),
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_owned(),
        ),
        ("HOME".to_owned(), HOME_INSIDE.to_owned()),
        (
            "USER".to_owned(),
            crate::local::identity::USER_NAME.to_owned(),
        ),
        (
            "LOGNAME".to_owned(),
            crate::local::identity::USER_NAME.to_owned(),
        ),
        ("SHELL".to_owned(), "/bin/bash".to_owned()),
        ("TMPDIR".to_owned(), "/tmp".to_owned()),
        ("LANG".to_owned(), "C.UTF-8".to_owned()),
        ("TERM".to_owned(), "dumb".to_owned()),
        ("PADDOCK_SANDBOX".to_owned(), "local".to_owned()),
    ]);
    for name in ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"] {
        env.insert(name.to_owned(), proxy.clone());
        env.insert(name.to_ascii_lowercase(), proxy.clone());
    }
    let no_proxy = "localhost,127.0.0.1,::1".to_owned();
    env.insert("NO_PROXY".to_owned(), no_proxy.clone());
    env.insert("no_proxy".to_owned(), no_proxy);
    env.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}

/// Renders the wall for one session.
pub fn render(input: &LayoutInput<'_>) -> std::io::Result<Rendered> {
    let mut b = Builder {
        args: Vec::new(),
        rules: Vec::new(),
    };
    let id = input.identity;
    b.arg(&["--die-with-parent", "--new-session"]);
    // Every namespace, the user namespace explicitly (root does not get one implicitly).
    b.arg(&[
        "--unshare-user",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
    ]);
    b.arg(&["--unshare-cgroup-try"]);
    // The launcher, and so the runner it becomes, is the PID namespace's first process (no
    // reaper of bubblewrap's): the kernel delivers it no signal from the commands, whichever
    // of its threads they aim at, on every kernel (Landlock scopes signals only from 6.12).
    // The runner reaps what its commands leave behind.
    b.arg(&["--as-pid-1"]);
    b.arg(&["--uid", &id.uid.to_string(), "--gid", &id.gid.to_string()]);
    if input.disable_userns {
        b.arg(&["--disable-userns"]);
    }
    b.arg(&["--hostname", "paddock", "--clearenv"]);

    // System folders.
    b.ro_bind(
        &input.host_root.join("usr"),
        "/usr",
        Some(PathAccess::ReadExec),
    );
    for name in ["bin", "sbin", "lib", "lib32", "lib64", "libx32"] {
        let host = input.host_root.join(name);
        let inside = format!("/{name}");
        match std::fs::symlink_metadata(&host) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&host)?.display().to_string();
                b.arg(&["--symlink", &target, &inside]);
            }
            Ok(meta) if meta.is_dir() => b.ro_bind(&host, &inside, Some(PathAccess::ReadExec)),
            _ => {}
        }
    }
    render_etc(&mut b, input);
    b.arg(&["--proc", "/proc"]);
    b.rule("/proc", PathAccess::Read);
    b.arg(&["--dev", "/dev"]);
    b.rule("/dev", PathAccess::Device);
    b.rule("/dev/shm", PathAccess::ReadWrite);

    // The wall's own folders.
    b.bind(&input.dirs.tmp(), "/tmp", Some(PathAccess::ReadWrite));
    b.bind(&input.dirs.home(), HOME_INSIDE, Some(PathAccess::ReadWrite));
    b.ro_bind(input.wall, WALL_INSIDE, None);
    b.ro_bind(input.runner, RUNNER_INSIDE, None);
    b.rule(BIN_DIR, PathAccess::ReadExec);
    b.ro_bind(&input.dirs.config(), CONFIG_INSIDE, None);
    b.ro_bind(&input.dirs.proxy(), PROXY_DIR_INSIDE, None);
    b.bind(
        &input.dirs.runner(),
        RUNNER_DIR_INSIDE,
        Some(PathAccess::ReadWrite),
    );
    b.bind(&input.dirs.probe(), LANDLOCK_PROBE_INSIDE, None);

    // The skeleton above grants that lie in the wall's own writable folders (a grant under
    // `/tmp`): its top folder is a tmpfs of its own, made read-only once the grants are mounted,
    // so the folders leading to a grant can be neither renamed nor removed.
    let skeletons = writable_skeletons(input.grants);
    for top in &skeletons {
        b.arg(&["--tmpfs", top]);
    }
    // The session's folders, parents before children, each mounted by its pinned handle.
    let mut grants: Vec<&GrantMount> = input.grants.iter().collect();
    grants.sort_by_key(|g| g.path.len());
    for grant in grants {
        let fd = grant.fd.to_string();
        let (option, access) = match grant.access {
            FolderAccess::ReadWrite => ("--bind-fd", PathAccess::ReadWrite),
            FolderAccess::ReadOnly => ("--ro-bind-fd", PathAccess::ReadExec),
        };
        b.arg(&[option, &fd, &grant.path]);
        b.rule(&grant.path, access);
    }
    for top in &skeletons {
        b.arg(&["--remount-ro", top]);
    }
    // Over them, what the host runs later: read-only (Landlock cannot take a right away from
    // inside a read-write rule; the mount can), git directories bound onto themselves so
    // they cannot be renamed away and replaced. The folder's rule covers both. Each by its
    // pinned handle, like the grants: a path swapped for a link meanwhile is never followed.
    for mount in input.protected {
        let option = if mount.read_only {
            "--ro-bind-fd"
        } else {
            "--bind-fd"
        };
        b.arg(&[option, &mount.fd.to_string(), &mount.path]);
    }
    b.arg(&["--remount-ro", "/", "--chdir", &input.request.cwd]);

    let socket = RUNNER_SOCKET_INSIDE;
    let mut runner = vec![RUNNER_INSIDE.to_owned()];
    runner.extend(runner_args("serve", Some(socket), input.request));
    runner.push("--exit-on-stdin-eof".to_owned());
    // The folders commands may change, all but the runner's socket folder: a command cannot
    // replace the socket (tool-runner's `confine`).
    for rule in &b.rules {
        if rule.access == PathAccess::ReadWrite && rule.path != RUNNER_DIR_INSIDE {
            runner.push("--writable".to_owned());
            runner.push(rule.path.clone());
        }
    }
    if input.unscoped_signals {
        runner.push("--test-unscoped-signals".to_owned());
    }
    b.arg(&["--", WALL_INSIDE, "inner", "--config", CONFIG_INSIDE, "--"]);
    b.args.extend(runner);

    let config = WallConfig {
        min_landlock_abi: MIN_LANDLOCK_ABI,
        rules: b.rules,
        bridge: Some(BridgeConfig {
            port: BRIDGE_PORT,
            proxy_socket: format!("{PROXY_DIR_INSIDE}/{PROXY_SOCKET_NAME}"),
            token: input.bridge_token.to_owned(),
        }),
        env: environment(&input.credential_env),
        cwd: input.request.cwd.clone(),
        rlimits: Vec::new(),
        grants: input
            .grants
            .iter()
            .map(|g| GrantIdentity {
                path: g.path.clone(),
                device: g.identity.device,
                inode: g.identity.inode,
                read_only: g.access == FolderAccess::ReadOnly,
            })
            .collect(),
        protected: input
            .protected
            .iter()
            .map(|p| ProtectedIdentity {
                path: p.path.clone(),
                device: p.identity.device,
                inode: p.identity.inode,
                read_only: p.read_only,
            })
            .collect(),
    };
    Ok(Rendered {
        bwrap_args: b.args,
        config,
    })
}

/// `/etc`: the synthesized copy of the allowed entries ([`super::etc::cached`]) with the
/// wall's own `passwd` and `group` bound on it, and one read rule over it all.
fn render_etc(b: &mut Builder, input: &LayoutInput<'_>) {
    b.ro_bind(input.etc, "/etc", None);
    for own in ["passwd", "group"] {
        b.ro_bind(&input.dirs.etc().join(own), &format!("/etc/{own}"), None);
    }
    b.rule("/etc", PathAccess::Read);
}

/// The top folders, right below the wall's own writable `/tmp` and home, of the grants that lie
/// deeper inside them (a grant at the top itself is a mount point, which cannot be renamed).
fn writable_skeletons(grants: &[GrantMount]) -> Vec<String> {
    let mut tops: Vec<String> = Vec::new();
    for grant in grants {
        for base in ["/tmp", HOME_INSIDE] {
            let Ok(rest) = Path::new(&grant.path).strip_prefix(base) else {
                continue;
            };
            let mut parts = rest.components();
            if let (Some(first), Some(_)) = (parts.next(), parts.next()) {
                let top = Path::new(base).join(first).display().to_string();
                // A top that is itself granted is a mount point already.
                if !tops.contains(&top) && !grants.iter().any(|g| g.path == top) {
                    tops.push(top);
                }
            }
        }
    }
    tops.sort();
    tops
}

/// Whether bubblewrap failed on the source of a bind it was given by descriptor: it turns a
/// descriptor into a path first, and fails on that path (or the descriptor) when it names
/// nothing, or something else, by the time it mounts, which only a folder or file swapped
/// meanwhile does. A source the layout names itself (the runner, `/usr`) keeps its own error.
pub fn swapped_source(tail: &str, bwrap_args: &[String]) -> bool {
    let named = |prefix: &str, end: &str| {
        tail.split_once(prefix)
            .and_then(|(_, rest)| rest.split_once(end))
            .map(|(source, _)| source.strip_prefix("/oldroot").unwrap_or(source).to_owned())
    };
    [
        named("Can't find source path ", ": "),
        named("Can't get type of source ", ": "),
        named("Can't bind mount ", " on "),
    ]
    .into_iter()
    .flatten()
    .any(|source| source.starts_with("/proc/self/fd/") || !bwrap_args.contains(&source))
}

/// The parts hashed into the attestation's `config_hash`.
/// The wall's own host folder is written as `<wall>`, so equal walls hash alike.
pub fn hash_parts(rendered: &Rendered, proxy_rules: &str, dirs: &HostDirs) -> Vec<String> {
    let root = dirs.root.display().to_string();
    vec![
        "local-wall v1".to_owned(),
        mask_descriptors(&rendered.bwrap_args)
            .join("\u{1f}")
            .replace(&root, "<wall>"),
        paddock_wall::landlock_rules::summary(&rendered.config.rules),
        paddock_wall::seccomp_policy::SUMMARY.to_owned(),
        format!("{:?}", rendered.config.env),
        proxy_rules.to_owned(),
    ]
}

/// The arguments with the numbers of inherited descriptors written as `<fd>` (they differ
/// from start to start).
fn mask_descriptors(args: &[String]) -> Vec<String> {
    let mut masked = args.to_vec();
    for i in 1..masked.len() {
        if matches!(masked[i - 1].as_str(), "--bind-fd" | "--ro-bind-fd") {
            masked[i] = "<fd>".to_owned();
        }
    }
    masked
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
