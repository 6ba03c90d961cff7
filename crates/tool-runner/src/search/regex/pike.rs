//! The Pike VM: simulates the NFA over the text once, carrying every live thread at the same
//! time, so its cost is O(text × program) whatever the pattern. It finds where the leftmost
//! match starts and ends (leftmost-first, honouring greedy and lazy priorities).

use super::ast::Look;
use super::charset::is_word_char;
use super::compile::{Inst, Program};
use super::utf8::decode;

/// True when `look` holds between `prev` and `next` (`None` is the edge of the text; a newline
/// is the edge of a line).
pub(crate) fn look_holds(look: Look, prev: Option<char>, next: Option<char>) -> bool {
    let prev_word = prev.is_some_and(is_word_char);
    let next_word = next.is_some_and(is_word_char);
    match look {
        Look::LineStart => matches!(prev, None | Some('\n')),
        Look::LineEnd => matches!(next, None | Some('\n')),
        Look::WordBoundary => prev_word != next_word,
        Look::NotWordBoundary => prev_word == next_word,
        Look::WordStart => !prev_word && next_word,
        Look::WordEnd => prev_word && !next_word,
    }
}

/// A set of threads in priority order, each with the offset its match started at.
struct Threads {
    /// `(pc, start)` in priority order.
    dense: Vec<(u32, usize)>,
    /// For each pc, its index in `dense` (valid only when the entry there points back).
    sparse: Vec<u32>,
}

impl Threads {
    fn new(size: usize) -> Self {
        Self {
            dense: Vec::with_capacity(size),
            sparse: vec![0; size],
        }
    }

    fn contains(&self, pc: u32) -> bool {
        let index = self.sparse[pc as usize] as usize;
        index < self.dense.len() && self.dense[index].0 == pc
    }

    fn insert(&mut self, pc: u32, start: usize) {
        self.sparse[pc as usize] = u32::try_from(self.dense.len()).unwrap_or(u32::MAX);
        self.dense.push((pc, start));
    }

    fn clear(&mut self) {
        self.dense.clear();
    }
}

/// The Pike VM's working memory; `steps` counts thread visits (a test measures it).
pub(crate) struct PikeVm<'p> {
    program: &'p Program,
    current: Threads,
    next: Threads,
    stack: Vec<u32>,
    pub(crate) steps: u64,
}

impl<'p> PikeVm<'p> {
    pub(crate) fn new(program: &'p Program) -> Self {
        let size = program.len();
        Self {
            program,
            current: Threads::new(size),
            next: Threads::new(size),
            stack: Vec::new(),
            steps: 0,
        }
    }

    /// The byte range of the leftmost-first match in `text`, if any.
    pub(crate) fn find(&mut self, text: &[u8]) -> Option<(usize, usize)> {
        self.current.clear();
        self.next.clear();
        let mut matched = None;
        let mut pos = 0;
        let mut prev: Option<char> = None;
        loop {
            let next_char = (pos < text.len()).then(|| decode(text, pos));
            let char_here = next_char.map(|(c, _)| c);
            if matched.is_none() && (!self.program.anchored || matches!(prev, None | Some('\n'))) {
                Self::add_thread(
                    self.program,
                    &mut self.stack,
                    &mut self.current,
                    0,
                    pos,
                    prev,
                    char_here,
                );
            }
            if self.current.dense.is_empty() && matched.is_some() {
                break;
            }
            let after = next_char.map(|(c, len)| (c, pos + len));
            let char_after =
                after.and_then(|(_, end)| (end < text.len()).then(|| decode(text, end).0));
            for index in 0..self.current.dense.len() {
                let (pc, start) = self.current.dense[index];
                self.steps += 1;
                match self.program.insts[pc as usize] {
                    Inst::Set(id) => {
                        if let Some((c, _)) = next_char
                            && self.program.sets[id as usize].contains(u32::from(c))
                        {
                            Self::add_thread(
                                self.program,
                                &mut self.stack,
                                &mut self.next,
                                pc + 1,
                                start,
                                Some(c),
                                char_after,
                            );
                        }
                    }
                    Inst::Match => {
                        matched = Some((start, pos));
                        // Threads after this one have lower priority: drop them.
                        break;
                    }
                    Inst::Split(..) | Inst::Jmp(_) | Inst::Look(_) => {}
                }
            }
            let Some((c, end)) = after else {
                break;
            };
            std::mem::swap(&mut self.current, &mut self.next);
            self.next.clear();
            prev = Some(c);
            pos = end;
        }
        matched
    }

    /// Adds the thread at `pc` and everything reachable from it without consuming input,
    /// depth first so that priorities are kept.
    fn add_thread(
        program: &Program,
        stack: &mut Vec<u32>,
        threads: &mut Threads,
        pc: u32,
        start: usize,
        prev: Option<char>,
        next: Option<char>,
    ) {
        stack.clear();
        stack.push(pc);
        while let Some(pc) = stack.pop() {
            if threads.contains(pc) {
                continue;
            }
            threads.insert(pc, start);
            match program.insts[pc as usize] {
                Inst::Jmp(target) => stack.push(target),
                Inst::Split(first, second) => {
                    stack.push(second);
                    stack.push(first);
                }
                Inst::Look(look) => {
                    if look_holds(look, prev, next) {
                        stack.push(pc + 1);
                    }
                }
                Inst::Set(_) | Inst::Match => {}
            }
        }
    }
}
