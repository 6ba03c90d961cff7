//! Paddock's desktop shell: one window showing the web UI, its menu, and single-instance
//! behaviour, around the host crate running in this process ([`core`]): the same API as
//! `paddock up`, on loopback, with a token made for this launch that only the main window is
//! handed (the `connection` command, its one IPC permission). It holds no logic of its own.

pub mod core;
mod menu;

use std::sync::Mutex;

use paddock_server::api::Connection;
use tauri::{Manager, Runtime};

/// The label of the one window (capabilities are granted per label).
pub const MAIN_WINDOW: &str = "main";

/// Runs the app until its last window closes; the process's exit status.
pub fn main() -> std::process::ExitCode {
    if let Some(problem) = missing_display(|name| std::env::var_os(name)) {
        #[allow(
            clippy::print_stderr,
            reason = "the app cannot start; stderr is all there is"
        )]
        {
            eprintln!("paddock-desktop: {problem}");
        }
        return std::process::ExitCode::FAILURE;
    }
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            // The desktop binary's only channel for a failure before any window exists.
            #[allow(
                clippy::print_stderr,
                reason = "startup failures are reported on stderr"
            )]
            {
                eprintln!("paddock-desktop: {error}");
            }
            std::process::ExitCode::FAILURE
        }
    }
}

/// Why no window can be opened here, if none can: GTK needs an X11 or Wayland display, and
/// without one it panics deep inside the toolkit. Checked first so the user reads the fix.
pub fn missing_display(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<String> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let set = |name: &str| env(name).is_some_and(|value| !value.is_empty());
    if set("DISPLAY") || set("WAYLAND_DISPLAY") {
        return None;
    }
    Some(
        "no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set). \
         Start it from a desktop session, or use Paddock without one: run `paddock up` and \
         open the address it prints in a browser."
            .to_string(),
    )
}

/// The in-process core, or why it could not start (the window shows the reason).
pub type CoreState = Mutex<Result<core::Core, String>>;

/// Builds and runs the app with the real runtime: starts the core first, and shuts it down
/// (sessions closed, sandboxes torn down) when the app exits.
pub fn run() -> tauri::Result<()> {
    let app = app_builder(tauri::Builder::default())
        // After the plugins: a second launch has been handed to the first one by then, and
        // never opens the machine's state.
        .setup(|app| {
            let started = tauri::async_runtime::block_on(core::Core::start());
            if let Err(problem) = &started {
                tracing::error!("{problem}");
            }
            app.manage::<CoreState>(Mutex::new(started));
            Ok(())
        })
        .build(tauri::generate_context!())?;
    app.run(|handle, event| {
        if let tauri::RunEvent::Exit = event
            && let Some(state) = handle.try_state::<CoreState>()
        {
            let mut guard = state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Ok(core) = guard.as_mut() {
                core.shutdown();
            }
        }
    });
    Ok(())
}

/// Where the window reaches the core: its loopback address and this launch's token; or why
/// the core could not start. Granted to the main window only.
#[tauri::command]
#[allow(
    clippy::needless_pass_by_value,
    reason = "Tauri hands a command its state by value"
)]
fn connection(state: tauri::State<'_, CoreState>) -> Result<Connection, String> {
    let guard = state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match guard.as_ref() {
        Ok(core) => Ok(core.connection.clone()),
        Err(problem) => Err(problem.clone()),
    }
}

/// Everything the app adds to a builder, generic over the runtime so tests can pass a mock one.
pub fn app_builder<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder
        // A second launch focuses the running window instead of starting another app.
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            focus_main_window(app);
        }))
        .invoke_handler(tauri::generate_handler![connection])
        .menu(menu::build)
        .on_menu_event(|app, event| menu::handle(app, &event))
}

fn focus_main_window<R: Runtime>(app: &tauri::AppHandle<R>) {
    if let Some(window) = app.get_webview_window(MAIN_WINDOW) {
        // Best effort: a window manager may refuse focus; the app stays usable either way.
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
}
