//! Fuzzes the search engines: any pattern must compile or be refused without panicking, and
//! for any input the prefiltered line search, the plain lazy-DFA search and the Pike VM must
//! agree on which lines match. Glob patterns must compile or be refused without panicking.
//!
//! Input layout: one flag byte (bit 0: case-insensitive; bit 1: the glob path is a folder),
//! then the pattern, a NUL byte, and the text to search.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tool_runner::search::glob_pattern::GlobPattern;
use tool_runner::search::regex::{Regex, RegexOptions};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let split = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let (pattern, input) = rest.split_at(split);
    let input = input.get(1..).unwrap_or_default();
    let Ok(pattern) = std::str::from_utf8(pattern) else {
        return;
    };
    if let Ok(glob) = GlobPattern::new(pattern) {
        let _ = glob.matches(&String::from_utf8_lossy(input), flags & 2 != 0);
    }
    let options = RegexOptions {
        case_insensitive: flags & 1 != 0,
    };
    let Ok(regex) = Regex::with_options(pattern, options) else {
        return;
    };
    let plain = regex.clone().without_prefilter();
    let mut prefiltered = regex.line_searcher();
    let mut automaton = plain.line_searcher();
    let with_prefilter: Vec<_> = prefiltered.matching_lines(input).collect();
    let without_prefilter: Vec<_> = automaton.matching_lines(input).collect();
    assert_eq!(with_prefilter, without_prefilter, "prefilter changed the answer");
    if let Ok(text) = std::str::from_utf8(input) {
        for line in text.split('\n') {
            assert_eq!(
                regex.find(line).is_some(),
                automaton.is_match_line(line.as_bytes()),
                "Pike VM and DFA disagree on {line:?}"
            );
        }
    }
});
