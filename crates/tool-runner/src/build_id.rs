//! The runner's build id: the CRC-32C of its own executable (`/proc/self/exe`), read once at
//! start, in the protocol's checksum form (`crc32c:<8 hex digits>`).
//!
//! The host can compute the same value over the runner it ships with
//! `tool_protocol::checksum::checksum`. It is an identity, not a security check (the sandbox
//! decides what runs). With the CPU's CRC instruction a ~2 MiB executable takes well under a
//! millisecond, so start-up stays fast; a 64-bit FNV-1a took several.

use std::io::Read;
use std::path::Path;

use tool_protocol::checksum::Crc32c;

/// The build id of the file at `path`.
pub fn of_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut crc = Crc32c::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        crc.update(&buf[..n]);
    }
    Ok(crc.to_wire())
}

/// The build id of the running executable, or `unknown` when it cannot be read.
pub fn of_this_executable() -> String {
    of_file(Path::new("/proc/self/exe")).unwrap_or_else(|_| "unknown".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_the_protocol_checksum_of_the_executable() {
        let id = of_this_executable();
        let bytes = std::fs::read("/proc/self/exe").unwrap();
        assert_eq!(id, tool_protocol::checksum::checksum(&bytes));
        assert!(id.starts_with("crc32c:") && id.len() == 15, "{id}");
    }
}
