//! Fuzzes the search engines: see `tool_runner::fuzzing::regex` for the input layout and the
//! invariants.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| tool_runner::fuzzing::regex(data));
