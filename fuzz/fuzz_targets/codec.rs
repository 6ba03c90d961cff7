//! Fuzzes the frame codec: see `tool_runner::fuzzing::codec` for the invariants.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| tool_runner::fuzzing::codec(data));
