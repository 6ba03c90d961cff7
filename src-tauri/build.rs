//! Generates the app's context (configuration, embedded UI assets, icons) and its permission
//! manifests. The UI must be built first (`cargo xtask ui build`): `frontendDist` points at
//! `ui/dist`, and `tauri_build` refuses a missing folder with an error naming it.
//!
//! The app's one command (`connection`) gets a permission of its own (`allow-connection`),
//! so a window may call it only when a capability grants it (`capabilities/main.json`: the
//! main window).

fn main() {
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(&["connection"]));
    if let Err(error) = tauri_build::try_build(attributes) {
        // A build script's failure is reported on stderr by cargo.
        #[allow(clippy::print_stderr, reason = "build script output")]
        {
            eprintln!("paddock-desktop build: {error:#}");
        }
        std::process::exit(1);
    }
}
