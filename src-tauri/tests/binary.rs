//! The built desktop binary, started as a user would.

use std::process::Command;

#[test]
fn without_a_display_it_says_so_and_how_to_use_paddock_instead() {
    let output = Command::new(env!("CARGO_BIN_EXE_paddock-desktop"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "");
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stderr), @"paddock-desktop: no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set). Start it from a desktop session, or use Paddock without one: run `paddock up` and open the address it prints in a browser.");
}

#[test]
fn an_empty_display_variable_counts_as_none() {
    let problem = paddock_desktop::missing_display(|name| match name {
        "DISPLAY" => Some("".into()),
        _ => None,
    });
    assert!(problem.is_some());
    let fine = paddock_desktop::missing_display(|name| match name {
        "WAYLAND_DISPLAY" => Some("wayland-0".into()),
        _ => None,
    });
    assert_eq!(fine, None);
}
