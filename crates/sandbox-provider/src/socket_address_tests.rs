use std::io::{Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};

use super::*;

/// A folder whose path is far longer than a socket address can hold.
fn deep_folder(root: &Path) -> PathBuf {
    let folder = root
        .join("a-rather-long-folder-name-for-a-state-folder".repeat(2))
        .join("wall-123456-0b7c9f9e-2d41-4e4b-9a51-6d3f5c0e8a11-0-and-more");
    std::fs::create_dir_all(&folder).unwrap();
    folder
}

#[test]
fn a_long_path_binds_and_connects_through_its_open_folder() {
    let root = tempfile::tempdir().unwrap();
    let socket = deep_folder(root.path()).join("proxy.sock");
    assert!(
        socket.as_os_str().len() > MAX_SOCKET_PATH,
        "{}",
        socket.display()
    );
    // The plain path is refused by the kernel's address size.
    assert!(UnixListener::bind(&socket).is_err());

    let address = SocketAddress::new(&socket).unwrap();
    assert!(address.path().starts_with("/proc/self/fd/"));
    let listener = UnixListener::bind(address.path()).unwrap();
    drop(address);
    // The socket file is where the long path says.
    assert!(
        std::fs::symlink_metadata(&socket)
            .unwrap()
            .file_type()
            .is_socket()
    );

    let address = SocketAddress::new(&socket).unwrap();
    let mut client = UnixStream::connect(address.path()).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    client.write_all(b"ping").unwrap();
    let mut got = [0u8; 4];
    server.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"ping");
}

#[test]
fn a_short_path_is_used_as_it_is() {
    let address = SocketAddress::new(Path::new("/run/paddock/proxy/proxy.sock")).unwrap();
    assert_eq!(address.path(), Path::new("/run/paddock/proxy/proxy.sock"));
}

#[test]
fn a_long_name_or_a_missing_folder_is_refused_by_name() {
    let root = tempfile::tempdir().unwrap();
    let long_name = deep_folder(root.path()).join("s".repeat(120));
    let err = SocketAddress::new(&long_name).unwrap_err().to_string();
    assert!(
        err.contains("a socket's own name may hold at most"),
        "{err}"
    );
    assert!(err.contains(&"s".repeat(120)), "{err}");

    let missing = root.path().join("x".repeat(120)).join("proxy.sock");
    let err = SocketAddress::new(&missing).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}
