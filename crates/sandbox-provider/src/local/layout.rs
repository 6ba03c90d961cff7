//! The wall's filesystem and process layout: bubblewrap's arguments and the Landlock rules that
//! mirror them, rendered from a session's request. Pure apart from reading what `/etc` and the
//! root folder hold; the result is hashed into the attestation.
//!
//! Inside the sandbox:
//! * the session's folders at their own paths, read-write or read-only;
//! * `/usr` and the `/bin`, `/sbin`, `/lib*` links or folders read-only; `/etc` entry by entry,
//!   read-only, without its secrets, with a passwd and group naming the sandbox's user;
//! * a fresh `/proc`, a minimal `/dev`, a private `/tmp` and a private home (both host folders
//!   of this wall, deleted at close);
//! * `/run/paddock`: the launcher and the runner (read-only), the wall's configuration, the
//!   proxy's socket, the runner's socket folder, and the Landlock probe folder;
//! * nothing else: the user's home and the rest of the host are absent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use paddock_wall::config::{
    BRIDGE_PORT, BridgeConfig, MIN_LANDLOCK_ABI, PathAccess, PathRule, WallConfig,
};
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

/// `/etc` entries covered and left out of the Landlock rules: password hashes, sudo rules,
/// keytabs, PAM's old passwords, backups of the user lists. (`passwd` and `group` are replaced
/// by the wall's own; `ssh/*key*` and `ssl/private` are covered too.)
pub fn etc_entry_is_secret(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "shadow",
        "shadow-",
        "gshadow",
        "gshadow-",
        "sudoers",
        "sudoers.d",
        "passwd-",
        "group-",
        "subuid-",
        "subgid-",
        "krb5.keytab",
        "security",
        "opasswd",
    ];
    NAMES.contains(&name) || name.starts_with(".pwd.lock")
}

/// `/etc/ssh` entries never mounted: the host's private (and public) keys.
pub fn ssh_entry_is_secret(name: &str) -> bool {
    name.contains("key")
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
    pub identity: Identity,
    pub dirs: &'a HostDirs,
    pub runner: &'a Path,
    pub wall: &'a Path,
    /// The host's root folder (`/` in production) and `/etc`, read to mirror their entries.
    pub host_root: &'a Path,
    /// Whether bubblewrap can forbid user namespaces inside (`--disable-userns`, 0.8+).
    pub disable_userns: bool,
    /// Environment of the enabled credential entries.
    pub credential_env: BTreeMap<String, String>,
    /// The wall's bridge token (hex), for the bridge's preambles.
    pub bridge_token: &'a str,
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
    render_etc(&mut b, input)?;
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

    // The session's folders, parents before children.
    let mut folders = input.request.folders.clone();
    folders.sort_by_key(|f| f.path.len());
    for folder in &folders {
        let path = Path::new(&folder.path);
        match folder.access {
            FolderAccess::ReadWrite => b.bind(path, &folder.path, Some(PathAccess::ReadWrite)),
            FolderAccess::ReadOnly => b.ro_bind(path, &folder.path, Some(PathAccess::ReadExec)),
        }
    }
    b.arg(&["--remount-ro", "/", "--chdir", &input.request.cwd]);

    let socket = RUNNER_SOCKET_INSIDE;
    let mut runner = vec![RUNNER_INSIDE.to_owned()];
    runner.extend(runner_args("serve", Some(socket), input.request));
    runner.push("--exit-on-stdin-eof".to_owned());
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
    };
    Ok(Rendered {
        bwrap_args: b.args,
        config,
    })
}

/// `/etc`: one read-only bind (a mount per entry costs ~0.4 ms each, ~50 ms in all), with
/// every secret covered by an empty file or folder, passwd and group replaced by the wall's
/// own, and Landlock rules for the other entries only, so a secret is refused by Landlock even
/// if the cover were missing.
fn render_etc(b: &mut Builder, input: &LayoutInput<'_>) -> std::io::Result<()> {
    let etc = input.host_root.join("etc");
    b.ro_bind(&etc, "/etc", None);
    let empty_file = input.dirs.etc().join("empty");
    let empty_dir = input.dirs.etc().join("empty.d");
    let mut entries: Vec<_> = std::fs::read_dir(&etc)?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    let cover = |b: &mut Builder, host: &Path, inside: &str| {
        let is_dir = std::fs::symlink_metadata(host).is_ok_and(|m| m.is_dir());
        b.ro_bind(if is_dir { &empty_dir } else { &empty_file }, inside, None);
    };
    for name in entries {
        let host = etc.join(&name);
        let inside = format!("/etc/{name}");
        let Ok(meta) = std::fs::symlink_metadata(&host) else {
            continue;
        };
        if matches!(name.as_str(), "passwd" | "group") {
            b.ro_bind(
                &input.dirs.etc().join(&name),
                &inside,
                Some(PathAccess::Read),
            );
        } else if etc_entry_is_secret(&name) {
            if !meta.file_type().is_symlink() {
                cover(b, &host, &inside);
            }
        } else if name == "ssh" && meta.is_dir() {
            let mut ssh: Vec<_> = std::fs::read_dir(&host)?
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            ssh.sort();
            for entry in ssh {
                let path = host.join(&entry);
                let inside = format!("/etc/ssh/{entry}");
                if ssh_entry_is_secret(&entry) {
                    cover(b, &path, &inside);
                } else if !std::fs::symlink_metadata(&path)
                    .is_ok_and(|m| m.file_type().is_symlink())
                {
                    b.rule(&inside, PathAccess::Read);
                }
            }
        } else if name == "ssl" && meta.is_dir() {
            for entry in std::fs::read_dir(&host)?.filter_map(Result::ok) {
                let entry = entry.file_name().to_string_lossy().into_owned();
                let path = host.join(&entry);
                let inside = format!("/etc/ssl/{entry}");
                if entry == "private" {
                    cover(b, &path, &inside);
                } else if !std::fs::symlink_metadata(&path)
                    .is_ok_and(|m| m.file_type().is_symlink())
                {
                    b.rule(&inside, PathAccess::Read);
                }
            }
        } else if meta.is_dir() || meta.is_file() {
            // Links are left out of the rules: what they name is covered by its own rule.
            b.rule(&inside, PathAccess::Read);
        }
    }
    Ok(())
}

/// The parts hashed into the attestation's `config_hash`.
/// The wall's own host folder is written as `<wall>`, so equal walls hash alike.
pub fn hash_parts(rendered: &Rendered, proxy_rules: &str, dirs: &HostDirs) -> Vec<String> {
    let root = dirs.root.display().to_string();
    vec![
        "local-wall v1".to_owned(),
        rendered.bwrap_args.join("\u{1f}").replace(&root, "<wall>"),
        paddock_wall::landlock_rules::summary(&rendered.config.rules),
        paddock_wall::seccomp_policy::SUMMARY.to_owned(),
        format!("{:?}", rendered.config.env),
        proxy_rules.to_owned(),
    ]
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
