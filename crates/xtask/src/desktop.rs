//! The desktop app's tasks: build it, and the WebDriver smoke test of the real app under Xvfb
//! (tauri-driver ^2 and WebKitWebDriver, a D-Bus session bus, a keep-alive WebDriver client).

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::system;
use crate::tasks::{cargo, root, run};
use crate::ui;

/// `cargo xtask desktop [build] [--release]` or `cargo xtask desktop smoke`.
pub fn task(args: &[String]) -> Result<(), String> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let flags = match args.as_slice() {
        ["smoke"] => return smoke(),
        // The app and the fake model server as a workspace build left them (no rebuild with
        // another feature selection).
        ["smoke", "--built"] => return smoke_with(&debug_binary()),
        ["build", flags @ ..] => flags,
        flags => flags,
    };
    let release = match flags {
        [] => false,
        ["--release"] => true,
        other => {
            return Err(format!(
                "unexpected arguments `{}`: use `desktop [build] [--release]` or `desktop smoke [--built]`",
                other.join(" ")
            ));
        }
    };
    let binary = build(release)?;
    println!("{}", binary.display());
    Ok(())
}

/// The debug binary's path (where `cargo build` and the workspace's test build put it).
pub fn debug_binary() -> PathBuf {
    root().join("target").join("debug").join("paddock-desktop")
}

/// Builds the web UI, then the desktop app; returns the binary's path. A release build turns on
/// `custom-protocol`, as `tauri build` would.
pub fn build(release: bool) -> Result<PathBuf, String> {
    system::ensure(&[system::DESKTOP_BUILD_PACKAGES])?;
    ui::build()?;
    let mut command = cargo();
    command.args(["build", "--locked", "--package", "paddock-desktop"]);
    if release {
        command.args(["--release", "--features", "custom-protocol"]);
    }
    run(command)?;
    let profile = if release { "release" } else { "debug" };
    Ok(root().join("target").join(profile).join("paddock-desktop"))
}

/// The WebDriver smoke test: the real app under Xvfb, driven through tauri-driver; the
/// screenshot lands in `target/desktop-smoke/`.
pub fn smoke() -> Result<(), String> {
    system::ensure(&[
        system::DESKTOP_BUILD_PACKAGES,
        system::DESKTOP_SMOKE_PACKAGES,
    ])?;
    let binary = build(false)?;
    let mut fake_model = cargo();
    fake_model.args([
        "build",
        "--locked",
        "--package",
        "test-support",
        "--bin",
        "fake-model-server",
    ]);
    run(fake_model)?;
    smoke_with(&binary)
}

/// The smoke test against an already built binary (CI builds it once, in the test build).
pub fn smoke_with(binary: &Path) -> Result<(), String> {
    if !binary.is_file() {
        return Err(format!(
            "{} does not exist: build it with `cargo xtask desktop build`",
            binary.display()
        ));
    }
    system::ensure(&[system::DESKTOP_SMOKE_PACKAGES])?;
    let tauri_driver = ensure_tauri_driver()?;
    let artifacts = root().join("target").join("desktop-smoke");
    std::fs::create_dir_all(&artifacts).map_err(|e| format!("{}: {e}", artifacts.display()))?;
    // A fresh profile for every run: the webview keeps its storage (the sign-in token, the
    // theme) under the XDG folders, and the smoke test starts from a first launch.
    let profile = artifacts.join("profile");
    if profile.exists() {
        std::fs::remove_dir_all(&profile).map_err(|e| format!("{}: {e}", profile.display()))?;
    }
    let xdg = |name: &str| profile.join(name);

    let display = free_display()?;
    let xvfb = Guard::spawn(
        "Xvfb",
        Command::new("Xvfb").args([
            display.as_str(),
            "-screen",
            "0",
            "1280x820x24",
            "-nolisten",
            "tcp",
        ]),
    )?;
    wait_for_display(&display)?;
    let bus = SessionBus::start()?;
    let port = free_port()?;
    let native_port = free_port()?;
    let log_path = artifacts.join("tauri-driver.log");
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let log_err = log
        .try_clone()
        .map_err(|e| format!("{}: {e}", log_path.display()))?;
    // The app runs the host in its own process: it needs the wall's helpers, and the smoke
    // test's model is the fake model server (its key in the environment, `key_store = "env"`).
    let (runner, wall) = crate::tasks::built_binaries()?;
    let fake_model = root()
        .join("target")
        .join("debug")
        .join("fake-model-server");
    if !fake_model.is_file() {
        return Err(format!(
            "{} was not built (`cargo build -p test-support --bin fake-model-server`)",
            fake_model.display()
        ));
    }
    let mut driver_command = Command::new(&tauri_driver);
    driver_command
        .env("PADDOCK_TOOL_RUNNER", &runner)
        .env("PADDOCK_WALL", &wall)
        .env("ANTHROPIC_API_KEY", SMOKE_MODEL_KEY)
        .env("XDG_STATE_HOME", xdg("state"))
        .args([
            "--port",
            &port.to_string(),
            "--native-port",
            &native_port.to_string(),
        ])
        .env("DISPLAY", &display)
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .env("XDG_DATA_HOME", xdg("data"))
        .env("XDG_CONFIG_HOME", xdg("config"))
        .env("XDG_CACHE_HOME", xdg("cache"))
        .stdout(log)
        .stderr(log_err);
    let driver = Guard::spawn("tauri-driver", &mut driver_command)?;
    wait_for_port(port)?;

    let mut test = Command::new("node");
    test.current_dir(ui::dir())
        .args(["--test", "e2e-desktop/"])
        .env("PADDOCK_DESKTOP_BIN", binary)
        .env("TAURI_DRIVER_URL", format!("http://127.0.0.1:{port}"))
        .env("PADDOCK_SMOKE_ARTIFACTS", &artifacts)
        .env("PADDOCK_FAKE_MODEL_SERVER", &fake_model)
        .env("XDG_STATE_HOME", xdg("state"))
        .env("DISPLAY", &display)
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .env("XDG_DATA_HOME", xdg("data"))
        .env("XDG_CONFIG_HOME", xdg("config"))
        .env("XDG_CACHE_HOME", xdg("cache"));
    let outcome = run(test);
    drop(driver);
    drop(bus);
    drop(xvfb);
    match outcome {
        Ok(()) => {
            println!(
                "desktop smoke: screenshot in {}",
                artifacts.join("desktop-sandbox.png").display()
            );
            Ok(())
        }
        Err(e) => Err(format!("{e}\n(tauri-driver's log: {})", log_path.display())),
    }
}

/// The model key the smoke test's app is given (a planted value for the fake model server).
const SMOKE_MODEL_KEY: &str = "sk-ant-PLANTED-desktop-smoke-0123456789";

/// `tauri-driver` 2.x on PATH or in cargo's bin folder, installed with `cargo install` when
/// missing (the 3.0 alphas on the registry are not for Tauri 2).
fn ensure_tauri_driver() -> Result<PathBuf, String> {
    let cargo_bin = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))
        .map(|home| home.join("bin").join("tauri-driver"));
    let candidates = [Some(PathBuf::from("tauri-driver")), cargo_bin];
    for candidate in candidates.iter().flatten() {
        if Command::new(candidate)
            .arg("--help")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
        {
            return Ok(candidate.clone());
        }
    }
    let mut install = cargo();
    install.args(["install", "tauri-driver", "--locked", "--version", "^2"]);
    run(install)?;
    candidates
        .iter()
        .flatten()
        .find(|c| c.is_absolute() && c.is_file())
        .cloned()
        .ok_or_else(|| "tauri-driver was installed but is not in cargo's bin folder".to_string())
}

/// A child process killed (with its process group) when dropped.
struct Guard {
    name: &'static str,
    child: Child,
}

impl Guard {
    fn spawn(name: &'static str, command: &mut Command) -> Result<Self, String> {
        use std::os::unix::process::CommandExt as _;
        let child = command
            .process_group(0)
            .spawn()
            .map_err(|e| format!("could not start {name}: {e}"))?;
        Ok(Self { name, child })
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // The group: tauri-driver's WebKitWebDriver and the app it started go too.
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        if self.child.wait().is_err() {
            println!("desktop smoke: could not reap {}", self.name);
        }
    }
}

/// A private D-Bus session bus (single-instance registers its name there).
struct SessionBus {
    address: String,
    _daemon: Guard,
}

impl SessionBus {
    fn start() -> Result<Self, String> {
        let mut command = Command::new("dbus-daemon");
        command
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped());
        let mut daemon = Guard::spawn("dbus-daemon", &mut command)?;
        let stdout = daemon
            .child
            .stdout
            .take()
            .ok_or("dbus-daemon has no stdout")?;
        let mut address = String::new();
        BufReader::new(stdout)
            .read_line(&mut address)
            .map_err(|e| format!("reading dbus-daemon's address: {e}"))?;
        let address = address.trim().to_string();
        if address.is_empty() {
            return Err("dbus-daemon printed no address".into());
        }
        Ok(Self {
            address,
            _daemon: daemon,
        })
    }
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// The first X display number with no server (no socket, no lock file).
fn free_display() -> Result<String, String> {
    (90..200)
        .find(|n| {
            !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
                && !Path::new(&format!("/tmp/.X{n}-lock")).exists()
        })
        .map(|n| format!(":{n}"))
        .ok_or_else(|| "no free X display number between :90 and :199".to_string())
}

/// How long a service may take to come up before the task gives up (a wait, not a measurement).
const STARTUP_LIMIT: Duration = Duration::from_secs(30);

fn wait_until(what: &str, ready: impl Fn() -> bool) -> Result<(), String> {
    let started = Instant::now();
    while !ready() {
        if started.elapsed() > STARTUP_LIMIT {
            return Err(format!("{what} did not come up within {STARTUP_LIMIT:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

fn wait_for_display(display: &str) -> Result<(), String> {
    let socket = format!("/tmp/.X11-unix/X{}", display.trim_start_matches(':'));
    wait_until(&format!("Xvfb on {display}"), || {
        Path::new(&socket).exists()
    })
}

fn wait_for_port(port: u16) -> Result<(), String> {
    wait_until(&format!("tauri-driver on port {port}"), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    })
}
