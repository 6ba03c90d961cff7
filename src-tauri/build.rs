//! Generates the app's context (configuration, embedded UI assets, icons) and its permission
//! manifests. The UI must be built first (`cargo xtask ui build`): `frontendDist` points at
//! `ui/dist`, and `tauri_build` refuses a missing folder with an error naming it.

fn main() {
    tauri_build::build();
}
