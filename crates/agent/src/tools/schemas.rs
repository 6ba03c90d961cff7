//! The JSON schemas of the sandbox tools, as the model sees them. Written by hand so that each
//! description says what the tool does inside the sandbox in the model's terms.

use serde_json::{Value, json};

/// `(name, description, input schema)` of every sandbox tool, in the order the model sees them.
pub(crate) fn sandbox_tool_schemas() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "run_bash",
            "Run a bash command inside the session's sandbox and return its exit code, stdout \
             and stderr. Each call starts a fresh `bash -c`: variables and `cd` do not carry \
             over between calls. Only the session's folders are visible; network access is \
             limited by the sandbox's policy.",
            json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The bash command line."},
                    "cwd": {"type": "string", "description": "Working folder (absolute, inside a granted folder). Default: the session's working folder."},
                    "timeout_ms": {"type": "integer", "minimum": 1, "description": "Longest the command may run, in milliseconds. Default 30000."}
                },
                "required": ["command"],
                "additionalProperties": false
            }),
        ),
        (
            "read_file",
            "Read a text file. Lines are numbered like `cat -n`. Use offset and limit for \
             long files.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Absolute path, or relative to the working folder."},
                    "offset": {"type": "integer", "minimum": 1, "description": "First line to return (1-based). Default 1."},
                    "limit": {"type": "integer", "minimum": 1, "description": "Most lines to return. Default 2000."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        ),
        (
            "write_file",
            "Create or replace a file with the given text. Missing parent folders are created.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Absolute path, or relative to the working folder."},
                    "content": {"type": "string", "description": "The whole new content of the file."}
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
        ),
        (
            "edit_file",
            "Replace an exact string in a file. Fails when the string does not occur, or occurs \
             more than once and replace_all is not set.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_string": {"type": "string", "description": "The exact text to replace."},
                    "new_string": {"type": "string", "description": "The replacement."},
                    "replace_all": {"type": "boolean", "description": "Replace every occurrence. Default false."}
                },
                "required": ["path", "old_string", "new_string"],
                "additionalProperties": false
            }),
        ),
        (
            "delete",
            "Delete a file, a symlink, or a folder (a non-empty folder only with recursive).",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "recursive": {"type": "boolean", "description": "Delete a folder and everything in it. Default false."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        ),
        (
            "glob",
            "Find paths matching a glob pattern (`*`, `?`, `[...]`, `**` across folders).",
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "e.g. `src/**/*.rs`."},
                    "path": {"type": "string", "description": "Folder the pattern is relative to. Default: the working folder."},
                    "limit": {"type": "integer", "minimum": 1, "description": "Most matches. Default 1000."}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        ),
        (
            "grep",
            "Search files for a regular expression, honouring .gitignore and skipping binary \
             files. Returns `path:line: text` lines.",
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "A regular expression."},
                    "path": {"type": "string", "description": "File or folder to search. Default: the working folder."},
                    "include": {"type": "array", "items": {"type": "string"}, "description": "Only files matching one of these globs."},
                    "exclude": {"type": "array", "items": {"type": "string"}, "description": "Skip files matching one of these globs."},
                    "case_insensitive": {"type": "boolean"},
                    "context": {"type": "integer", "minimum": 0, "description": "Lines of context around each match. Default 0."},
                    "max_matches": {"type": "integer", "minimum": 1, "description": "Most matching lines. Default 500."}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        ),
        (
            "list_directory",
            "List a folder's entries with their kind and size.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Default: the working folder."},
                    "depth": {"type": "integer", "minimum": 1, "description": "Levels to descend. Default 1."},
                    "limit": {"type": "integer", "minimum": 1, "description": "Most entries. Default 1000."}
                },
                "additionalProperties": false
            }),
        ),
    ]
}
