//! Error codes: every refusal the runner can give, each with a stable wire name.

use crate::wire_enum;

wire_enum! {
    /// Why a frame or a tool call failed. The message beside it names the path or field.
    pub enum ErrorCode {
        // The frame itself.
        /// The line is not JSON.
        BadJson = "bad_json",
        /// The line is not UTF-8.
        BadUtf8 = "bad_utf8",
        /// The line is longer than 8 MiB.
        LineTooLong = "line_too_long",
        /// A frame member is missing, of the wrong type, or unknown.
        BadFrame = "bad_frame",
        /// The frame's `type` is not one this side understands.
        UnknownType = "unknown_type",
        /// The call names a tool the runner does not have.
        UnknownTool = "unknown_tool",
        /// An argument is missing, of the wrong type, invalid, or unknown.
        BadArgs = "bad_args",
        /// A call reused the id of a call still in flight.
        DuplicateId = "duplicate_id",
        // The path guard.
        /// The path resolves outside the session's folders.
        OutsideRoots = "outside_roots",
        /// The path lies in a read-only folder and the call would change it.
        ReadOnly = "read_only",
        // The tools.
        NotFound = "not_found",
        AlreadyExists = "already_exists",
        NotADirectory = "not_a_directory",
        IsADirectory = "is_a_directory",
        /// `read_file` on a file that is not text.
        BinaryFile = "binary_file",
        /// Over a size cap.
        TooLarge = "too_large",
        /// `edit_file`: `old_string` does not occur.
        NoMatch = "no_match",
        /// `edit_file`: `old_string` occurs more than once and `replace_all` is not set.
        NotUnique = "not_unique",
        /// A glob or regular expression that does not parse.
        InvalidPattern = "invalid_pattern",
        /// An upload whose size or checksum does not match what arrived.
        ChecksumMismatch = "checksum_mismatch",
        /// An upload chunk out of order, or for an unknown transfer.
        BadTransfer = "bad_transfer",
        /// The operating system refused (EACCES, EPERM).
        PermissionDenied = "permission_denied",
        /// The call was cancelled; its process group was killed.
        Cancelled = "cancelled",
        /// Another I/O failure; the message says which.
        Io = "io",
        /// A bug in the runner; the message says where.
        Internal = "internal",
    }
}
