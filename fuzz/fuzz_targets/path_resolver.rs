//! Fuzzes the path guard on a tree of hostile symlinks: see
//! `tool_runner::fuzzing::path_resolver` for the invariants. The tree is built once per
//! process under the system temp folder.

#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tool_runner::fuzzing::{PathFixture, path_resolver};

fn fixture() -> &'static PathFixture {
    static FIXTURE: OnceLock<PathFixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("paddock-fuzz-paths-{}", std::process::id()));
        PathFixture::create(&base).expect("the fuzz fixture can be built")
    })
}

fuzz_target!(|data: &[u8]| path_resolver(fixture(), data));
