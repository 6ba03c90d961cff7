//! Fuzzes the host's async line reader (`sandbox-provider`'s `runner_client/lines.rs`)
//! against a plain model of line splitting, with arbitrary line limits and chunk sizes: see
//! `runner_client/lines_model.rs` for the input layout and the model. Both files are compiled
//! here on their own, so this target does not build the provider's whole dependency tree.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code, reason = "the target drives the reader, not every constructor")]
#[path = "../../crates/sandbox-provider/src/runner_client/lines.rs"]
mod lines;
#[path = "../../crates/sandbox-provider/src/runner_client/lines_model.rs"]
mod lines_model;

fuzz_target!(|data: &[u8]| lines_model::check(data));
