//! Sets of characters as sorted, disjoint ranges of Unicode scalar values, with the class
//! shorthands (`\d \w \s`, POSIX `[:name:]`) and simple case folding.

use std::sync::OnceLock;

/// The largest Unicode scalar value.
pub(crate) const MAX_CHAR: u32 = 0x10_FFFF;

/// Case mappings exist only below this value (the last cased script, Adlam, ends near U+1E95F;
/// a test checks this against the standard library's tables).
const LAST_CASED: u32 = 0x1_FFFF;

/// A set of characters: sorted, disjoint, non-adjacent inclusive ranges of scalar values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct CharSet {
    ranges: Vec<(u32, u32)>,
}

impl CharSet {
    pub(crate) fn empty() -> Self {
        Self::default()
    }

    pub(crate) fn single(c: char) -> Self {
        Self {
            ranges: vec![(u32::from(c), u32::from(c))],
        }
    }

    /// Every character (newlines included; the compiler removes them).
    pub(crate) fn all() -> Self {
        Self {
            ranges: vec![(0, MAX_CHAR)],
        }
    }

    pub(crate) fn from_ranges(ranges: impl IntoIterator<Item = (u32, u32)>) -> Self {
        let mut set = Self {
            ranges: ranges.into_iter().collect(),
        };
        set.normalize();
        set
    }

    pub(crate) fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    pub(crate) fn add_char(&mut self, c: char) {
        self.add_range(u32::from(c), u32::from(c));
    }

    pub(crate) fn add_range(&mut self, low: u32, high: u32) {
        self.ranges.push((low, high));
        self.normalize();
    }

    pub(crate) fn union(&mut self, other: &CharSet) {
        self.ranges.extend_from_slice(&other.ranges);
        self.normalize();
    }

    /// The characters not in this set.
    pub(crate) fn negated(&self) -> CharSet {
        let mut out = Vec::with_capacity(self.ranges.len() + 1);
        let mut next = 0u32;
        for &(low, high) in &self.ranges {
            if low > next {
                out.push((next, low - 1));
            }
            next = high.saturating_add(1);
        }
        if next <= MAX_CHAR {
            out.push((next, MAX_CHAR));
        }
        CharSet { ranges: out }
    }

    /// This set without the characters of `other`.
    pub(crate) fn minus(&self, other: &CharSet) -> CharSet {
        let keep = other.negated();
        let mut out = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < self.ranges.len() && j < keep.ranges.len() {
            let (a_low, a_high) = self.ranges[i];
            let (b_low, b_high) = keep.ranges[j];
            let low = a_low.max(b_low);
            let high = a_high.min(b_high);
            if low <= high {
                out.push((low, high));
            }
            if a_high < b_high {
                i += 1;
            } else {
                j += 1;
            }
        }
        CharSet::from_ranges(out)
    }

    pub(crate) fn contains(&self, c: u32) -> bool {
        // The ranges are sorted and disjoint: find the last range starting at or before `c`.
        let index = self.ranges.partition_point(|&(low, _)| low <= c);
        index > 0 && self.ranges[index - 1].1 >= c
    }

    /// The one character this set holds, if it holds exactly one.
    pub(crate) fn single_char(&self) -> Option<char> {
        match self.ranges.as_slice() {
            [(low, high)] if low == high => char::from_u32(*low),
            _ => None,
        }
    }

    /// How many scalar values the set holds (surrogate code points are never members of a
    /// set built from characters, but a negation may span them; they are counted).
    pub(crate) fn len(&self) -> u64 {
        self.ranges
            .iter()
            .map(|&(low, high)| u64::from(high - low) + 1)
            .sum()
    }

    /// The set with every member's simple upper- and lower-case forms added. Costs
    /// O(cased characters in the set), however large its ranges.
    pub(crate) fn case_folded(&self) -> CharSet {
        let cased = cased_chars();
        let mut extra = Vec::new();
        for &(low, high) in &self.ranges {
            let first = cased.partition_point(|&c| u32::from(c) < low);
            for &c in cased[first..].iter().take_while(|&&c| u32::from(c) <= high) {
                for variant in case_variants(c) {
                    let v = u32::from(variant);
                    if v < low || v > high {
                        extra.push((v, v));
                    }
                }
            }
        }
        if extra.is_empty() {
            return self.clone();
        }
        extra.extend_from_slice(&self.ranges);
        CharSet::from_ranges(extra)
    }

    fn normalize(&mut self) {
        self.ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(self.ranges.len());
        for &(low, high) in &self.ranges {
            if low > high {
                continue;
            }
            match merged.last_mut() {
                Some(last) if low <= last.1.saturating_add(1) => last.1 = last.1.max(high),
                _ => merged.push((low, high)),
            }
        }
        self.ranges = merged;
    }
}

/// Every character with another simple case form, ascending (computed once).
fn cased_chars() -> &'static [char] {
    static CASED: OnceLock<Vec<char>> = OnceLock::new();
    CASED.get_or_init(|| {
        (0..=LAST_CASED)
            .filter_map(char::from_u32)
            .filter(|&c| case_variants(c).nth(1).is_some())
            .collect()
    })
}

/// `c` and its simple (one-character) case mappings: at most four characters, `c` first.
pub(crate) fn case_variants(c: char) -> impl Iterator<Item = char> {
    let lower = single_mapping(c.to_lowercase());
    let upper = single_mapping(c.to_uppercase());
    let lower_of_upper = upper.and_then(|u| single_mapping(u.to_lowercase()));
    let upper_of_lower = lower.and_then(|l| single_mapping(l.to_uppercase()));
    let mut out = [c; 4];
    let mut len = 1;
    for candidate in [lower, upper, lower_of_upper, upper_of_lower]
        .into_iter()
        .flatten()
    {
        if !out[..len].contains(&candidate) {
            out[len] = candidate;
            len += 1;
        }
    }
    out.into_iter().take(len)
}

fn single_mapping(mut mapping: impl Iterator<Item = char>) -> Option<char> {
    let first = mapping.next()?;
    mapping.next().is_none().then_some(first)
}

/// True when `c` is a word character: `_` or alphanumeric (Unicode).
pub(crate) fn is_word_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// `\w`: `_` and the Unicode alphanumerics (computed once from the standard library's tables).
pub(crate) fn word_chars() -> &'static CharSet {
    static WORD: OnceLock<CharSet> = OnceLock::new();
    WORD.get_or_init(|| chars_where(is_word_char))
}

/// `\s`: the Unicode white space characters.
pub(crate) fn space_chars() -> &'static CharSet {
    static SPACE: OnceLock<CharSet> = OnceLock::new();
    SPACE.get_or_init(|| chars_where(char::is_whitespace))
}

/// `\d`: the ASCII digits `0-9` (like GNU grep and PCRE without UCP; not other scripts' digits).
pub(crate) fn digit_chars() -> CharSet {
    CharSet::from_ranges([(u32::from('0'), u32::from('9'))])
}

fn chars_where(predicate: impl Fn(char) -> bool) -> CharSet {
    let mut ranges = Vec::new();
    let mut open: Option<u32> = None;
    for value in 0..=MAX_CHAR + 1 {
        let member = char::from_u32(value).is_some_and(&predicate);
        match (member, open) {
            (true, None) => open = Some(value),
            (false, Some(start)) => {
                ranges.push((start, value - 1));
                open = None;
            }
            _ => {}
        }
    }
    CharSet::from_ranges(ranges)
}

/// A POSIX bracket class such as `alpha` in `[[:alpha:]]` (ASCII, as in the C locale).
pub(crate) fn posix_class(name: &str) -> Option<CharSet> {
    let ascii = |ranges: &[(u8, u8)]| {
        CharSet::from_ranges(
            ranges
                .iter()
                .map(|&(low, high)| (u32::from(low), u32::from(high))),
        )
    };
    Some(match name {
        "alpha" => ascii(&[(b'A', b'Z'), (b'a', b'z')]),
        "digit" => ascii(&[(b'0', b'9')]),
        "alnum" => ascii(&[(b'0', b'9'), (b'A', b'Z'), (b'a', b'z')]),
        "upper" => ascii(&[(b'A', b'Z')]),
        "lower" => ascii(&[(b'a', b'z')]),
        "space" => ascii(&[(b'\t', b'\r'), (b' ', b' ')]),
        "blank" => ascii(&[(b'\t', b'\t'), (b' ', b' ')]),
        "punct" => ascii(&[(b'!', b'/'), (b':', b'@'), (b'[', b'`'), (b'{', b'~')]),
        "xdigit" => ascii(&[(b'0', b'9'), (b'A', b'F'), (b'a', b'f')]),
        "cntrl" => ascii(&[(0, 0x1F), (0x7F, 0x7F)]),
        "print" => ascii(&[(b' ', b'~')]),
        "graph" => ascii(&[(b'!', b'~')]),
        "word" => ascii(&[(b'0', b'9'), (b'A', b'Z'), (b'_', b'_'), (b'a', b'z')]),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_negate() {
        let mut set = CharSet::from_ranges([(10, 20), (21, 30), (5, 6)]);
        assert_eq!(set.ranges(), &[(5, 6), (10, 30)]);
        set.add_range(7, 9);
        assert_eq!(set.ranges(), &[(5, 30)]);
        let negated = set.negated();
        assert_eq!(negated.ranges(), &[(0, 4), (31, MAX_CHAR)]);
        assert_eq!(negated.negated(), set);
        assert!(set.contains(5) && set.contains(30) && !set.contains(31) && !set.contains(4));
    }

    #[test]
    fn minus_removes_only_the_other_members() {
        let set = CharSet::from_ranges([(0, 100)]);
        let without = set.minus(&CharSet::from_ranges([(10, 10), (50, 200)]));
        assert_eq!(without.ranges(), &[(0, 9), (11, 49)]);
    }

    #[test]
    fn case_folding_adds_both_forms() {
        let folded = CharSet::single('k').case_folded();
        assert!(folded.contains(u32::from('K')) && folded.contains(u32::from('k')));
        let greek = CharSet::single('Σ').case_folded();
        assert!(greek.contains(u32::from('σ')));
        let digits = digit_chars().case_folded();
        assert_eq!(digits, digit_chars());
    }

    #[test]
    fn no_character_above_the_last_cased_one_has_a_case_mapping() {
        for value in LAST_CASED + 1..=MAX_CHAR {
            if let Some(c) = char::from_u32(value) {
                assert_eq!(case_variants(c).count(), 1, "{c:?} has case forms");
            }
        }
    }

    #[test]
    fn folding_a_huge_range_is_cheap_and_complete() {
        let everything_but_a = CharSet::from_ranges([(0, 0x60), (0x62, MAX_CHAR)]);
        let folded = everything_but_a.case_folded();
        assert!(
            folded.contains(u32::from('a')),
            "'A' is in the set, so 'a' is added"
        );
        assert_eq!(folded, CharSet::all());
    }

    #[test]
    fn word_chars_cover_unicode_letters_and_underscore() {
        let word = word_chars();
        for c in ['a', 'Z', '0', '_', 'é', 'ж', '中'] {
            assert!(word.contains(u32::from(c)), "{c:?} should be a word char");
        }
        for c in [' ', '-', '.', '€'] {
            assert!(
                !word.contains(u32::from(c)),
                "{c:?} should not be a word char"
            );
        }
    }
}
