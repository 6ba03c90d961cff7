//! The tools the runner serves: one argument struct and one result struct each.
//!
//! Paths are absolute, or relative to the runner's working folder (its `cwd` in `hello`).
//! Optional arguments are `None` when the caller wants the runner's default; the defaults are
//! documented on each field and enforced by the runner, so both sides read them here.

use std::collections::BTreeMap;

use crate::data::Data;
use crate::{wire_enum, wire_struct};

wire_enum! {
    /// What a path is (symlinks are reported as such, never followed for `kind`).
    pub enum FileKind {
        File = "file",
        Directory = "directory",
        Symlink = "symlink",
        Other = "other",
    }
}

wire_struct! {
    /// `run_bash`: `bash -c COMMAND` in its own process group.
    pub struct RunBash {
        pub command: String,
        /// Working folder; default: the runner's working folder.
        pub cwd: Option<String>,
        /// Added to (or replacing in) the runner's environment.
        pub env: Option<BTreeMap<String, String>>,
        /// Bytes for the command's stdin; default: empty stdin (EOF at once).
        pub stdin: Option<Data>,
        /// Default 30 000 ms; at most the runner's `--max-timeout-ms`.
        pub timeout_ms: Option<u64>,
        /// Per-stream capture cap; default 262 144 bytes (256 KiB).
        pub max_output_bytes: Option<u64>,
    }
}

wire_struct! {
    /// The outcome of `run_bash`. Output over the cap keeps its head and tail with a marker line
    /// `[… N bytes dropped …]` between them; `*_dropped` count the bytes not kept.
    pub struct RunBashResult {
        /// The exit status, when the process exited.
        pub exit_code: Option<i64>,
        /// The terminating signal, when the process was killed by one.
        pub signal: Option<i64>,
        pub timed_out: bool,
        pub duration_ms: u64,
        pub stdout: Data,
        pub stderr: Data,
        pub stdout_dropped: u64,
        pub stderr_dropped: u64,
    }
}

wire_struct! {
    /// `read_file`: text with numbered lines (`cat -n` style: right-aligned number, tab, line).
    pub struct ReadFile {
        pub path: String,
        /// First line to return, 1-based; default 1.
        pub offset: Option<u64>,
        /// Most lines to return; default 2000.
        pub limit: Option<u64>,
    }
}

wire_struct! {
    pub struct ReadFileResult {
        /// The resolved absolute path.
        pub path: String,
        pub content: String,
        pub start_line: u64,
        pub lines_returned: u64,
        pub total_lines: u64,
        /// True when lines after the returned ones exist, or a long line was cut.
        pub truncated: bool,
        pub size: u64,
    }
}

wire_struct! {
    /// `read_bytes`: an exact byte range, always base64.
    pub struct ReadBytes {
        pub path: String,
        /// Default 0.
        pub offset: Option<u64>,
        /// Default and maximum 4 MiB.
        pub length: Option<u64>,
    }
}

wire_struct! {
    pub struct ReadBytesResult {
        pub path: String,
        pub offset: u64,
        pub data: Data,
        pub size: u64,
        pub eof: bool,
    }
}

wire_struct! {
    /// `write_file`: atomic (temporary file and rename in the same folder); keeps the mode of
    /// an existing file.
    pub struct WriteFile {
        pub path: String,
        pub content: Data,
        /// Create missing parent folders; default true.
        pub create_parents: Option<bool>,
    }
}

wire_struct! {
    pub struct WriteFileResult {
        pub path: String,
        pub bytes_written: u64,
        /// True when the file did not exist before.
        pub created: bool,
    }
}

wire_struct! {
    /// `edit_file`: replace an exact string; refused when it occurs zero times, or more than
    /// once without `replace_all`.
    pub struct EditFile {
        pub path: String,
        pub old_string: String,
        pub new_string: String,
        pub replace_all: Option<bool>,
    }
}

wire_struct! {
    pub struct EditFileResult {
        pub path: String,
        pub replacements: u64,
    }
}

wire_struct! {
    /// `delete`: a file or symlink, or a folder (which must be empty unless `recursive`).
    pub struct Delete {
        pub path: String,
        pub recursive: Option<bool>,
    }
}

wire_struct! {
    pub struct DeleteResult {
        pub path: String,
        pub kind: FileKind,
        /// Entries removed, the path itself included.
        pub removed: u64,
    }
}

wire_struct! {
    /// `list_directory`: entries sorted by path.
    pub struct ListDirectory {
        /// Default: the runner's working folder.
        pub path: Option<String>,
        /// Levels to descend; default 1 (the folder's own entries).
        pub depth: Option<u64>,
        /// Most entries; default 1000.
        pub limit: Option<u64>,
    }
}

wire_struct! {
    pub struct DirEntry {
        /// Relative to the listed folder.
        pub path: String,
        pub kind: FileKind,
        pub size: u64,
        /// Milliseconds since the Unix epoch.
        pub modified_ms: Option<i64>,
    }
}

wire_struct! {
    pub struct ListDirectoryResult {
        pub path: String,
        pub entries: Vec<DirEntry>,
        pub truncated: bool,
    }
}

wire_struct! {
    /// `stat`: what a path is, without following a final symlink.
    pub struct Stat {
        pub path: String,
    }
}

wire_struct! {
    pub struct StatResult {
        pub path: String,
        pub kind: FileKind,
        pub size: u64,
        pub modified_ms: Option<i64>,
        /// Permission bits (`st_mode & 0o7777`).
        pub mode: u64,
        /// True when the path lies in a read-only grant.
        pub read_only: bool,
        /// For a symlink: what it points to, as stored.
        pub link_target: Option<String>,
        /// `st_dev` and `st_ino`: the host compares a granted folder's with the one it pinned.
        pub device: Option<u64>,
        pub inode: Option<u64>,
    }
}

wire_struct! {
    /// `glob`: `*`, `?`, `[...]`, and `**` across folders; matches sorted.
    pub struct Glob {
        pub pattern: String,
        /// Folder the pattern is relative to; default the working folder.
        pub path: Option<String>,
        /// Most matches; default 1000.
        pub limit: Option<u64>,
    }
}

wire_struct! {
    pub struct GlobResult {
        /// Absolute paths.
        pub matches: Vec<String>,
        pub truncated: bool,
    }
}

wire_struct! {
    /// `grep`: a regular expression over files under `path`, honouring `.gitignore` files and
    /// skipping binary files.
    pub struct Grep {
        pub pattern: String,
        /// File or folder to search; default the working folder.
        pub path: Option<String>,
        /// Only files whose path (relative to `path`) matches one of these globs.
        pub include: Option<Vec<String>>,
        /// Skip files whose relative path matches one of these globs.
        pub exclude: Option<Vec<String>>,
        pub case_insensitive: Option<bool>,
        /// Lines of context before and after each match; default 0.
        pub context: Option<u64>,
        /// Most matching lines; default 500.
        pub max_matches: Option<u64>,
    }
}

wire_struct! {
    pub struct GrepMatch {
        pub path: String,
        pub line_number: u64,
        pub line: String,
        pub before: Vec<String>,
        pub after: Vec<String>,
    }
}

wire_struct! {
    pub struct GrepResult {
        pub matches: Vec<GrepMatch>,
        pub files_searched: u64,
        pub files_skipped_binary: u64,
        pub truncated: bool,
    }
}

wire_struct! {
    /// `upload`: one chunk of a file. Chunks of one `transfer` arrive in order; the last one
    /// carries the total `size` and `checksum`, and the file appears atomically only when both
    /// match.
    pub struct Upload {
        pub path: String,
        /// Chosen by the host, unique per file transfer.
        pub transfer: String,
        pub offset: u64,
        pub data: Data,
        pub last: bool,
        /// Required on the last chunk.
        pub size: Option<u64>,
        /// `crc32c:<hex>`, required on the last chunk.
        pub checksum: Option<String>,
    }
}

wire_struct! {
    pub struct UploadResult {
        pub path: String,
        pub received: u64,
        pub complete: bool,
    }
}

wire_struct! {
    /// `download`: the file's bytes arrive as `output` frames on stream `data` (base64), then
    /// the result gives the total size and checksum.
    pub struct Download {
        pub path: String,
        /// Bytes per output frame; default 1 MiB, at most 4 MiB.
        pub chunk_bytes: Option<u64>,
    }
}

wire_struct! {
    pub struct DownloadResult {
        pub path: String,
        pub size: u64,
        pub checksum: String,
    }
}

/// Declares [`ToolName`], [`ToolRequest`] and [`ToolResult`] from one table, so a tool cannot be
/// added to one and forgotten in another.
macro_rules! tools {
    ( $( $variant:ident = $wire:literal ($request:ident, $result:ident) ),* $(,)? ) => {
        wire_enum! {
            /// The name of a tool on the wire.
            pub enum ToolName { $( $variant = $wire, )* }
        }

        /// A tool call's arguments.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ToolRequest { $( $variant($request), )* }

        /// A tool call's successful result.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ToolResult { $( $variant($result), )* }

        impl ToolRequest {
            pub fn name(&self) -> ToolName {
                match self { $( ToolRequest::$variant(_) => ToolName::$variant, )* }
            }

            pub(crate) fn args_json(&self) -> crate::json::Value {
                match self { $( ToolRequest::$variant(a) => crate::convert::ToJson::to_json(a), )* }
            }

            pub(crate) fn from_args(
                name: ToolName,
                args: &crate::json::Value,
            ) -> Result<Self, crate::convert::FieldError> {
                Ok(match name {
                    $( ToolName::$variant => ToolRequest::$variant(
                        crate::convert::FromJson::from_json(args, "args")?,
                    ), )*
                })
            }
        }

        impl ToolResult {
            pub fn name(&self) -> ToolName {
                match self { $( ToolResult::$variant(_) => ToolName::$variant, )* }
            }

            pub(crate) fn value_json(&self) -> crate::json::Value {
                match self { $( ToolResult::$variant(r) => crate::convert::ToJson::to_json(r), )* }
            }

            pub(crate) fn from_value(
                name: ToolName,
                value: &crate::json::Value,
            ) -> Result<Self, crate::convert::FieldError> {
                Ok(match name {
                    $( ToolName::$variant => ToolResult::$variant(
                        crate::convert::FromJson::from_json(value, "result")?,
                    ), )*
                })
            }
        }

        $(
            impl From<$request> for ToolRequest {
                fn from(args: $request) -> Self { ToolRequest::$variant(args) }
            }
            impl From<$result> for ToolResult {
                fn from(result: $result) -> Self { ToolResult::$variant(result) }
            }
        )*
    };
}

tools! {
    RunBash = "run_bash" (RunBash, RunBashResult),
    ReadFile = "read_file" (ReadFile, ReadFileResult),
    ReadBytes = "read_bytes" (ReadBytes, ReadBytesResult),
    WriteFile = "write_file" (WriteFile, WriteFileResult),
    EditFile = "edit_file" (EditFile, EditFileResult),
    Delete = "delete" (Delete, DeleteResult),
    ListDirectory = "list_directory" (ListDirectory, ListDirectoryResult),
    Stat = "stat" (Stat, StatResult),
    Glob = "glob" (Glob, GlobResult),
    Grep = "grep" (Grep, GrepResult),
    Upload = "upload" (Upload, UploadResult),
    Download = "download" (Download, DownloadResult),
}

impl ToolName {
    /// True for tools that only read (no change to files, no command run).
    pub fn is_read_only(self) -> bool {
        matches!(
            self,
            ToolName::ReadFile
                | ToolName::ReadBytes
                | ToolName::ListDirectory
                | ToolName::Stat
                | ToolName::Glob
                | ToolName::Grep
                | ToolName::Download
        )
    }
}
