//! `download` (file bytes as `output` frames on stream `data`, then size and CRC-32C) and
//! `upload` (chunks in order into a temporary file that appears atomically when size and
//! checksum match).

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Write};

use tool_protocol::checksum::Crc32c;
use tool_protocol::{Download, DownloadResult, Encoding, ErrorCode, Stream, Upload, UploadResult};

use super::CallContext;
use super::entry::{WriteTarget, open_regular};
use super::write::TempFile;
use crate::error::ToolError;
use crate::path_guard::{Location, Options, PathGuard};

/// Bytes per `output` frame when the call names none.
pub const DEFAULT_CHUNK_BYTES: u64 = 1024 * 1024;
/// The largest chunk a call may ask for (base64 keeps the frame under 8 MiB).
pub const MAX_CHUNK_BYTES: u64 = 4 * 1024 * 1024;
/// Uploads one connection may have in progress at once.
pub const MAX_TRANSFERS: usize = 64;

pub fn download(ctx: &CallContext<'_>, args: &Download) -> Result<DownloadResult, ToolError> {
    let chunk = args.chunk_bytes.unwrap_or(DEFAULT_CHUNK_BYTES);
    if chunk == 0 || chunk > MAX_CHUNK_BYTES {
        return Err(ToolError::bad_args(
            "chunk_bytes",
            format!("must be between 1 and {MAX_CHUNK_BYTES}"),
        ));
    }
    let resolved = ctx.guard.resolve("path", &args.path, Options::FOLLOW)?;
    let (mut file, _) = open_regular(&resolved)?;
    let path = resolved.display();
    let mut crc = Crc32c::new();
    let mut buf = vec![0u8; usize::try_from(chunk).unwrap_or(1024 * 1024)];
    loop {
        ctx.check_cancelled()?;
        let n = read_full(&mut file, &mut buf).map_err(|e| ToolError::io(&path, &e))?;
        if n == 0 {
            break;
        }
        crc.update(&buf[..n]);
        if !ctx.output.send(Stream::Data, &buf[..n], Encoding::Base64) {
            return Err(ToolError::cancelled());
        }
        if n < buf.len() {
            break;
        }
    }
    Ok(DownloadResult {
        path,
        size: crc.len(),
        checksum: crc.to_wire(),
    })
}

/// Reads until `buf` is full or the file ends.
fn read_full(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// One upload in progress.
struct Transfer {
    /// The `path` argument as the first chunk gave it.
    requested: String,
    /// The resolved path, for results and messages.
    path: String,
    parent: File,
    name: std::ffi::OsString,
    keep_mode: Option<u32>,
    temp: TempFile,
    crc: Crc32c,
}

/// The uploads of one connection. Unfinished ones are removed (with their temporary files)
/// when the connection ends.
#[derive(Default)]
pub struct Transfers {
    active: HashMap<String, Transfer>,
}

impl Transfers {
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one chunk. Any refusal ends the transfer and removes its temporary file.
    pub fn upload(&mut self, guard: &PathGuard, args: &Upload) -> Result<UploadResult, ToolError> {
        if args.offset == 0 {
            if self.active.contains_key(&args.transfer) {
                self.abort(&args.transfer);
                return Err(bad_transfer(format!(
                    "transfer `{}` got a second first chunk (offset 0); it was abandoned",
                    args.transfer
                )));
            }
            if self.active.len() >= MAX_TRANSFERS {
                return Err(bad_transfer(format!(
                    "{MAX_TRANSFERS} uploads are already in progress on this connection"
                )));
            }
            let transfer = start(guard, args)?;
            self.active.insert(args.transfer.clone(), transfer);
        }
        let Some(transfer) = self.active.get_mut(&args.transfer) else {
            return Err(bad_transfer(format!(
                "unknown transfer `{}`: its first chunk (offset 0) did not arrive, or it \
                 already ended",
                args.transfer
            )));
        };
        let outcome = apply(transfer, args);
        if outcome.is_err() {
            self.abort(&args.transfer);
        } else if args.last {
            self.active.remove(&args.transfer);
        }
        outcome
    }

    fn abort(&mut self, id: &str) {
        if let Some(transfer) = self.active.remove(id) {
            transfer.temp.discard(&transfer.parent);
        }
    }
}

impl Drop for Transfers {
    fn drop(&mut self) {
        for (_, transfer) in self.active.drain() {
            transfer.temp.discard(&transfer.parent);
        }
    }
}

fn bad_transfer(message: String) -> ToolError {
    ToolError::new(ErrorCode::BadTransfer, message)
}

fn start(guard: &PathGuard, args: &Upload) -> Result<Transfer, ToolError> {
    let resolved = guard.resolve("path", &args.path, Options::CREATE_PARENTS)?;
    let target = WriteTarget::new(&resolved)?;
    let keep_mode = target.keep_mode;
    let path = resolved.display();
    let Location::Entry { parent, name, .. } = resolved.location else {
        return Err(ToolError::is_a_directory(path));
    };
    let temp = TempFile::create(&parent, &name, keep_mode).map_err(|e| ToolError::io(&path, &e))?;
    Ok(Transfer {
        requested: args.path.clone(),
        path,
        parent,
        name,
        keep_mode,
        temp,
        crc: Crc32c::new(),
    })
}

fn apply(transfer: &mut Transfer, args: &Upload) -> Result<UploadResult, ToolError> {
    if args.path != transfer.requested {
        return Err(bad_transfer(format!(
            "transfer `{}` writes {}, but this chunk names {}",
            args.transfer, transfer.requested, args.path
        )));
    }
    if args.offset != transfer.crc.len() {
        return Err(bad_transfer(format!(
            "transfer `{}`: chunk at offset {}, but {} bytes have arrived",
            args.transfer,
            args.offset,
            transfer.crc.len()
        )));
    }
    let data = args.data.as_bytes();
    (&transfer.temp.file)
        .write_all(data)
        .map_err(|e| ToolError::io(&transfer.path, &e))?;
    transfer.crc.update(data);
    if args.last {
        let size = args
            .size
            .ok_or_else(|| ToolError::bad_args("size", "required on the last chunk"))?;
        let checksum = args
            .checksum
            .as_deref()
            .ok_or_else(|| ToolError::bad_args("checksum", "required on the last chunk"))?;
        if size != transfer.crc.len() {
            return Err(ToolError::new(
                ErrorCode::ChecksumMismatch,
                format!(
                    "{}: the upload announced {size} bytes but {} arrived; nothing was written",
                    transfer.path,
                    transfer.crc.len()
                ),
            ));
        }
        if checksum != transfer.crc.to_wire() {
            return Err(ToolError::new(
                ErrorCode::ChecksumMismatch,
                format!(
                    "{}: checksum {checksum} was announced but the bytes have {}; nothing was \
                     written",
                    transfer.path,
                    transfer.crc.to_wire()
                ),
            ));
        }
        transfer
            .temp
            .finish(&transfer.parent, &transfer.name, transfer.keep_mode)
            .map_err(|e| ToolError::io(&transfer.path, &e))?;
    }
    Ok(UploadResult {
        path: transfer.path.clone(),
        received: transfer.crc.len(),
        complete: args.last,
    })
}
