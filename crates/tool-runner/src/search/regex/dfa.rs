//! A lazy DFA that answers "does this line match?" in one pass over the bytes.
//!
//! States are built on demand from the NFA (subset construction, one state per set of NFA
//! threads) and cached in a transition table indexed by character class. Building a state
//! costs O(program); each byte of input then costs one table lookup. The cache has a memory
//! cap: when it is full it is emptied and rebuilt as the input needs, so the worst case stays
//! linear in the input (a state built per character).
//!
//! Assertions are resolved while a transition is built: a state remembers whether it is at the
//! start of a line and whether the previous character was a word character, and the class of
//! the next character (or the end of the line) completes the context.

use std::collections::HashMap;

use super::ast::Look;
use super::charset::{CharSet, MAX_CHAR, word_chars};
use super::compile::{Inst, Program};
use super::utf8::decode;

/// Transition values at or above this are not state ids.
const FIRST_SENTINEL: u32 = u32::MAX - 3;
/// The transition has not been built yet.
const UNKNOWN: u32 = u32::MAX;
/// No match is possible before the end of this line.
const DEAD: u32 = u32::MAX - 1;
/// The line matches.
const MATCH: u32 = u32::MAX - 2;
/// The byte is a newline and the line ending there matches.
const EOL_MATCH: u32 = u32::MAX - 3;

/// When the cache grows past this many bytes it is emptied.
const CACHE_LIMIT_BYTES: usize = 8 << 20;

/// The partition of all characters into classes that no set of the program tells apart.
#[derive(Clone, Debug)]
pub(crate) struct Classes {
    /// The first character of each class, ascending; `starts[0] == 0`.
    starts: Vec<u32>,
    /// Class of each ASCII byte.
    ascii: [u16; 128],
    /// Class of each character from U+0080 to U+07FF (two-byte UTF-8: Latin, Greek,
    /// Cyrillic, Hebrew, Arabic…), so that common text needs no binary search.
    two_byte: Vec<u16>,
    /// Whether each class holds word characters (all false when the program has no word
    /// assertions, which are the only readers).
    word: Vec<bool>,
    newline: u16,
}

impl Classes {
    pub(crate) fn new(program: &Program) -> Self {
        let mut bounds = vec![0u32, 0x0A, 0x0B];
        let mut add_set = |set: &CharSet| {
            for &(low, high) in set.ranges() {
                bounds.push(low);
                if high < MAX_CHAR {
                    bounds.push(high + 1);
                }
            }
        };
        for set in &program.sets {
            add_set(set);
        }
        if program.uses_word_looks {
            add_set(word_chars());
        }
        bounds.sort_unstable();
        bounds.dedup();
        // `\w`'s set is built once per process by testing every character (milliseconds):
        // a program without word assertions never needs it here.
        let word = if program.uses_word_looks {
            let word_set = word_chars();
            bounds
                .iter()
                .map(|&start| word_set.contains(start))
                .collect()
        } else {
            vec![false; bounds.len()]
        };
        let mut classes = Self {
            starts: bounds,
            ascii: [0; 128],
            two_byte: Vec::new(),
            word,
            newline: 0,
        };
        for byte in 0..128u32 {
            classes.ascii[byte as usize] = classes.search_class(byte);
        }
        classes.two_byte = (0x80..0x800).map(|c| classes.search_class(c)).collect();
        classes.newline = classes.search_class(u32::from(b'\n'));
        classes
    }

    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    fn class_of(&self, c: u32) -> u16 {
        match c {
            0..0x80 => self.ascii[c as usize],
            0x80..0x800 => self.two_byte[c as usize - 0x80],
            _ => self.search_class(c),
        }
    }

    fn search_class(&self, c: u32) -> u16 {
        let index = self.starts.partition_point(|&start| start <= c);
        u16::try_from(index.saturating_sub(1)).unwrap_or(u16::MAX)
    }

    fn representative(&self, class: usize) -> u32 {
        self.starts[class]
    }
}

/// A DFA state's identity: the NFA threads waiting to consume, and the context flags.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct StateKey {
    pcs: Box<[u32]>,
    at_line_start: bool,
    after_word_char: bool,
}

/// What comes after the current position while following epsilon transitions.
#[derive(Clone, Copy)]
enum Next {
    Char { word: bool },
    EndOfLine,
}

/// A lazy DFA over one program, with its state cache. Not shared between threads.
///
/// A state's id is the offset of its row in `transitions`; rows are a power of two wide, so
/// `id >> row_shift` is the state's index in `states`. The newline's transition goes straight
/// to the start state (or to [`EOL_MATCH`] when the line ending there matches), so a scan runs
/// through many lines without leaving its inner loop.
pub(crate) struct LazyDfa<'p> {
    program: &'p Program,
    classes: &'p Classes,
    row_shift: u32,
    transitions: Vec<u32>,
    states: Vec<StateKey>,
    /// Per state: does the line match if it ends here? 0 unknown, 1 no, 2 yes.
    accepts_at_end: Vec<u8>,
    ids: HashMap<StateKey, u32>,
    cache_bytes: usize,
    start: u32,
    /// Scratch for epsilon closures: a sparse set of visited pcs and a stack.
    visited_dense: Vec<u32>,
    visited_sparse: Vec<u32>,
    stack: Vec<u32>,
    /// Thread visits while building states (a test measures it).
    pub(crate) steps: u64,
    /// How many times the cache was emptied.
    pub(crate) cache_clears: u64,
}

impl<'p> LazyDfa<'p> {
    pub(crate) fn new(program: &'p Program, classes: &'p Classes) -> Self {
        let mut dfa = Self {
            program,
            classes,
            row_shift: classes.len().next_power_of_two().trailing_zeros(),
            transitions: Vec::new(),
            states: Vec::new(),
            accepts_at_end: Vec::new(),
            ids: HashMap::new(),
            cache_bytes: 0,
            start: 0,
            visited_dense: Vec::with_capacity(program.len()),
            visited_sparse: vec![0; program.len()],
            stack: Vec::new(),
            steps: 0,
            cache_clears: 0,
        };
        dfa.start = dfa.add_state(Self::start_key());
        dfa
    }

    fn start_key() -> StateKey {
        StateKey {
            pcs: Box::new([]),
            at_line_start: true,
            after_word_char: false,
        }
    }

    /// True when `line` (which holds no newline) matches.
    pub(crate) fn is_match_line(&mut self, line: &[u8]) -> bool {
        self.scan(line, 0, true).is_some()
    }

    /// The first line of `buf` starting at or after `from` (a line start) that matches, as
    /// `(start, end)` byte offsets without its newline. A newline ends a line: a buffer ending
    /// with one has no empty line after it.
    pub(crate) fn find_line(&mut self, buf: &[u8], from: usize) -> Option<(usize, usize)> {
        self.scan(buf, from, false)
    }

    /// [`find_line`](Self::find_line); `empty_tail` also tests the empty line at the end of
    /// `buf` (when `buf` is empty or ends with a newline).
    fn scan(&mut self, buf: &[u8], from: usize, empty_tail: bool) -> Option<(usize, usize)> {
        let mut state = self.start;
        let mut i = from;
        loop {
            (i, state) = run_ascii(&self.transitions, &self.classes.ascii, buf, i, state);
            let Some(&byte) = buf.get(i) else {
                break;
            };
            let (class, len) = if byte < 0x80 {
                (usize::from(self.classes.ascii[usize::from(byte)]), 1)
            } else {
                let (c, len) = decode(buf, i);
                (usize::from(self.classes.class_of(u32::from(c))), len)
            };
            let mut next = self.transitions[state as usize + class];
            if next == UNKNOWN {
                next = if class == usize::from(self.classes.newline) {
                    self.build_newline_transition(state)
                } else {
                    self.build_transition(state, class)
                };
            }
            if next < FIRST_SENTINEL {
                state = next;
                i += len;
                continue;
            }
            match next {
                MATCH => return Some((line_start(buf, from, i), line_end(buf, i))),
                EOL_MATCH => return Some((line_start(buf, from, i), i)),
                _ => {
                    // DEAD: nothing more can match on this line; go on after its newline.
                    i = super::memchr::find_byte(buf, i, b'\n')? + 1;
                    state = self.start;
                }
            }
        }
        let tail_start = line_start(buf, from, buf.len());
        let has_tail = tail_start < buf.len() || empty_tail;
        (has_tail && self.accepts_at_end(state)).then_some((tail_start, buf.len()))
    }

    fn accepts_at_end(&mut self, state: u32) -> bool {
        let index = (state >> self.row_shift) as usize;
        match self.accepts_at_end[index] {
            1 => false,
            2 => true,
            _ => {
                let key = self.states[index].clone();
                let matched = self.closure(&key, Next::EndOfLine);
                self.accepts_at_end[index] = if matched { 2 } else { 1 };
                matched
            }
        }
    }

    /// The newline's transition: [`EOL_MATCH`] when the line ending here matches, else the
    /// start state of the next line.
    fn build_newline_transition(&mut self, state: u32) -> u32 {
        let next = if self.accepts_at_end(state) {
            EOL_MATCH
        } else {
            self.start
        };
        self.transitions[state as usize + usize::from(self.classes.newline)] = next;
        next
    }

    /// Builds (and caches) the transition of `state` on `class`; returns it.
    fn build_transition(&mut self, state: u32, class: usize) -> u32 {
        let key = self.states[(state >> self.row_shift) as usize].clone();
        let word = self.classes.word[class];
        if self.closure(&key, Next::Char { word }) {
            self.transitions[state as usize + class] = MATCH;
            return MATCH;
        }
        let c = self.classes.representative(class);
        let mut pcs: Vec<u32> = Vec::new();
        for &pc in &self.visited_dense {
            if let Inst::Set(id) = self.program.insts[pc as usize]
                && self.program.sets[id as usize].contains(c)
            {
                pcs.push(pc + 1);
            }
        }
        let next = if pcs.is_empty() && self.program.anchored {
            DEAD
        } else {
            pcs.sort_unstable();
            pcs.dedup();
            let next_key = StateKey {
                pcs: pcs.into_boxed_slice(),
                at_line_start: false,
                after_word_char: self.program.uses_word_looks && word,
            };
            match self.ids.get(&next_key) {
                Some(&id) => id,
                None => {
                    if self.cache_bytes > CACHE_LIMIT_BYTES {
                        // The source state's id is stale after this: return without caching.
                        self.clear_cache();
                        return self.add_state(next_key);
                    }
                    self.add_state(next_key)
                }
            }
        };
        self.transitions[state as usize + class] = next;
        next
    }

    fn clear_cache(&mut self) {
        self.cache_clears += 1;
        self.transitions.clear();
        self.states.clear();
        self.accepts_at_end.clear();
        self.ids.clear();
        self.cache_bytes = 0;
        self.start = self.add_state(Self::start_key());
    }

    /// Adds a state and returns its id (the offset of its row). The cache limit keeps
    /// offsets far below the sentinels.
    fn add_state(&mut self, key: StateKey) -> u32 {
        let row_start = self.transitions.len();
        let id = u32::try_from(row_start).unwrap_or(FIRST_SENTINEL - 1);
        let width = 1usize << self.row_shift;
        self.transitions.resize(row_start + width, UNKNOWN);
        self.cache_bytes += width * 4 + key.pcs.len() * 8 + 64;
        self.ids.insert(key.clone(), id);
        self.states.push(key);
        self.accepts_at_end.push(0);
        id
    }

    /// Follows epsilon transitions from the state's threads (and from the start, since the
    /// search is unanchored) in the context given by the state and `next`. Leaves the visited
    /// pcs in `visited_dense`; returns true when `Match` is reachable.
    fn closure(&mut self, key: &StateKey, next: Next) -> bool {
        self.visited_dense.clear();
        self.stack.clear();
        self.stack.extend(key.pcs.iter().rev());
        if !self.program.anchored || key.at_line_start {
            self.stack.insert(0, 0);
        }
        let mut matched = false;
        while let Some(pc) = self.stack.pop() {
            let index = self.visited_sparse[pc as usize] as usize;
            if index < self.visited_dense.len() && self.visited_dense[index] == pc {
                continue;
            }
            self.visited_sparse[pc as usize] =
                u32::try_from(self.visited_dense.len()).unwrap_or(u32::MAX);
            self.visited_dense.push(pc);
            self.steps += 1;
            match self.program.insts[pc as usize] {
                Inst::Jmp(target) => self.stack.push(target),
                Inst::Split(first, second) => {
                    self.stack.push(second);
                    self.stack.push(first);
                }
                Inst::Look(look) => {
                    if look_holds_in(look, key, next) {
                        self.stack.push(pc + 1);
                    }
                }
                Inst::Match => matched = true,
                Inst::Set(_) => {}
            }
        }
        matched
    }
}

/// The inner loop: follows known transitions over ASCII bytes until a byte that is not ASCII,
/// a transition not built yet, a sentinel, or the end of `buf`. Returns where it stopped and
/// the state there.
#[inline(always)]
fn run_ascii(
    transitions: &[u32],
    ascii: &[u16; 128],
    buf: &[u8],
    mut i: usize,
    mut state: u32,
) -> (usize, u32) {
    while let Some(&byte) = buf.get(i) {
        let Some(&class) = ascii.get(usize::from(byte)) else {
            break;
        };
        let next = transitions[state as usize + usize::from(class)];
        if next >= FIRST_SENTINEL {
            break;
        }
        state = next;
        i += 1;
    }
    (i, state)
}

fn look_holds_in(look: Look, key: &StateKey, next: Next) -> bool {
    let prev_word = key.after_word_char;
    let (next_word, at_end) = match next {
        Next::Char { word } => (word, false),
        Next::EndOfLine => (false, true),
    };
    match look {
        Look::LineStart => key.at_line_start,
        Look::LineEnd => at_end,
        Look::WordBoundary => prev_word != next_word,
        Look::NotWordBoundary => prev_word == next_word,
        Look::WordStart => !prev_word && next_word,
        Look::WordEnd => prev_word && !next_word,
    }
}

/// The offset of the newline ending the line that holds `i`, or the end of `buf`.
fn line_end(buf: &[u8], i: usize) -> usize {
    super::memchr::find_byte(buf, i, b'\n').unwrap_or(buf.len())
}

/// The start of the line holding `i` (or ending at the newline at `i`), not before `from`.
fn line_start(buf: &[u8], from: usize, i: usize) -> usize {
    super::memchr::rfind_byte(buf, i, b'\n').map_or(from, |nl| (nl + 1).max(from))
}
