//! Paddock's desktop shell: one window showing the web UI, its menu, and single-instance
//! behaviour. It holds no logic of its own; see `README.md` for the seam through which the host
//! crate will be embedded.

mod menu;

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

/// Builds and runs the app with the real runtime.
pub fn run() -> tauri::Result<()> {
    app_builder(tauri::Builder::default()).run(tauri::generate_context!())
}

/// Everything the app adds to a builder, generic over the runtime so tests can pass a mock one.
pub fn app_builder<R: Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder
        // A second launch focuses the running window instead of starting another app.
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            focus_main_window(app);
        }))
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
