//! The window menu: the app's own entries plus the platform's standard edit and window items.

use tauri::menu::{AboutMetadata, Menu, MenuBuilder, MenuEvent, SubmenuBuilder};
use tauri::{AppHandle, Manager, Runtime};

use crate::MAIN_WINDOW;

const RELOAD: &str = "reload";

pub fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<Menu<R>> {
    let about = AboutMetadata {
        name: Some("Paddock".into()),
        version: Some(app.package_info().version.to_string()),
        comments: Some("AI agents whose tools run inside a sandbox.".into()),
        license: Some("Apache-2.0".into()),
        ..AboutMetadata::default()
    };
    let paddock = SubmenuBuilder::new(app, "Paddock")
        .about(Some(about))
        .separator()
        .quit()
        .build()?;
    let edit = SubmenuBuilder::new(app, "Edit")
        .undo()
        .redo()
        .separator()
        .cut()
        .copy()
        .paste()
        .select_all()
        .build()?;
    let view = SubmenuBuilder::new(app, "View")
        .text(RELOAD, "Reload")
        .separator()
        .fullscreen()
        .build()?;
    let window = SubmenuBuilder::new(app, "Window")
        .minimize()
        .maximize()
        .separator()
        .close_window()
        .build()?;
    MenuBuilder::new(app)
        .items(&[&paddock, &edit, &view, &window])
        .build()
}

pub fn handle<R: Runtime>(app: &AppHandle<R>, event: &MenuEvent) {
    if event.id() == RELOAD
        && let Some(window) = app.get_webview_window(MAIN_WINDOW)
    {
        // Reload failures leave the current page in place; there is nothing else to do.
        let _ = window.reload();
    }
}
