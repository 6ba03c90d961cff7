//! Compiles a [`Node`] into a Thompson NFA: a flat program of instructions.
//!
//! The engine is line-oriented: newlines are removed from every character set, so no match
//! ever contains one and `^`/`$` mean the start and end of a line.

use std::collections::HashMap;

use super::MAX_PROGRAM_SIZE;
use super::ast::{Look, Node, RegexError, RegexErrorKind};
use super::charset::CharSet;

/// One NFA instruction. Program counters are indices into [`Program::insts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inst {
    /// Consume one character of `sets[index]`.
    Set(u32),
    /// Continue at both; the first has priority (leftmost-first semantics).
    Split(u32, u32),
    Jmp(u32),
    /// Continue only when the assertion holds here.
    Look(Look),
    Match,
}

/// A compiled pattern. Execution starts at instruction 0.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub(crate) insts: Vec<Inst>,
    /// The character sets of the `Set` instructions, deduplicated.
    pub(crate) sets: Vec<CharSet>,
    /// True when every match must begin at the start of a line.
    pub(crate) anchored: bool,
    /// True when the program holds `\b \B \< \>` (the DFA then tracks word characters).
    pub(crate) uses_word_looks: bool,
}

impl Program {
    pub(crate) fn len(&self) -> usize {
        self.insts.len()
    }
}

pub(crate) fn compile(node: &Node) -> Result<Program, RegexError> {
    let mut compiler = Compiler {
        insts: Vec::new(),
        sets: Vec::new(),
        set_ids: HashMap::new(),
        newline: CharSet::single('\n'),
        uses_word_looks: false,
    };
    compiler.emit(node)?;
    compiler.push(Inst::Match)?;
    Ok(Program {
        insts: compiler.insts,
        sets: compiler.sets,
        anchored: starts_anchored(node),
        uses_word_looks: compiler.uses_word_looks,
    })
}

struct Compiler {
    insts: Vec<Inst>,
    sets: Vec<CharSet>,
    set_ids: HashMap<CharSet, u32>,
    newline: CharSet,
    uses_word_looks: bool,
}

/// A placeholder target, patched once the real one is known.
const HOLE: u32 = u32::MAX;

impl Compiler {
    fn pc(&self) -> u32 {
        // The program never exceeds MAX_PROGRAM_SIZE instructions, far below u32::MAX.
        u32::try_from(self.insts.len()).unwrap_or(u32::MAX)
    }

    fn push(&mut self, inst: Inst) -> Result<u32, RegexError> {
        if self.insts.len() >= MAX_PROGRAM_SIZE {
            return Err(RegexError {
                position: 0,
                kind: RegexErrorKind::TooLarge,
            });
        }
        let pc = self.pc();
        self.insts.push(inst);
        Ok(pc)
    }

    fn patch(&mut self, at: u32, target: u32) {
        if let Some(inst) = self.insts.get_mut(at as usize) {
            match inst {
                Inst::Jmp(t) => *t = target,
                Inst::Split(a, b) => {
                    if *a == HOLE {
                        *a = target;
                    } else if *b == HOLE {
                        *b = target;
                    }
                }
                _ => {}
            }
        }
    }

    fn set_id(&mut self, set: &CharSet) -> u32 {
        let set = set.minus(&self.newline);
        if let Some(&id) = self.set_ids.get(&set) {
            return id;
        }
        let id = u32::try_from(self.sets.len()).unwrap_or(u32::MAX);
        self.sets.push(set.clone());
        self.set_ids.insert(set, id);
        id
    }

    fn emit(&mut self, node: &Node) -> Result<(), RegexError> {
        match node {
            Node::Empty => {}
            Node::Literal { c, fold } => {
                let single = CharSet::single(*c);
                let set = if *fold { single.case_folded() } else { single };
                let id = self.set_id(&set);
                self.push(Inst::Set(id))?;
            }
            Node::Class(set) => {
                let id = self.set_id(set);
                self.push(Inst::Set(id))?;
            }
            Node::Look(look) => {
                if !matches!(look, Look::LineStart | Look::LineEnd) {
                    self.uses_word_looks = true;
                }
                self.push(Inst::Look(*look))?;
            }
            Node::Concat(items) => {
                for item in items {
                    self.emit(item)?;
                }
            }
            Node::Alternate(branches) => self.emit_alternate(branches)?,
            Node::Repeat {
                node,
                min,
                max,
                greedy,
            } => self.emit_repeat(node, *min, *max, *greedy)?,
        }
        Ok(())
    }

    fn emit_alternate(&mut self, branches: &[Node]) -> Result<(), RegexError> {
        let mut jumps_to_end = Vec::new();
        let Some((last, rest)) = branches.split_last() else {
            return Ok(());
        };
        for branch in rest {
            let split = self.push(Inst::Split(HOLE, HOLE))?;
            self.patch(split, split + 1);
            self.emit(branch)?;
            jumps_to_end.push(self.push(Inst::Jmp(HOLE))?);
            let next = self.pc();
            self.patch(split, next);
        }
        self.emit(last)?;
        let end = self.pc();
        for jump in jumps_to_end {
            self.patch(jump, end);
        }
        Ok(())
    }

    /// A split that prefers `first` when greedy, the other way round when lazy.
    fn split(&mut self, greedy: bool, first: u32, second: u32) -> Result<u32, RegexError> {
        if greedy {
            self.push(Inst::Split(first, second))
        } else {
            self.push(Inst::Split(second, first))
        }
    }

    fn patch_split_exit(&mut self, at: u32, greedy: bool, exit: u32) {
        if let Some(Inst::Split(a, b)) = self.insts.get_mut(at as usize) {
            if greedy { *b = exit } else { *a = exit }
        }
    }

    fn emit_repeat(
        &mut self,
        node: &Node,
        min: u32,
        max: Option<u32>,
        greedy: bool,
    ) -> Result<(), RegexError> {
        match max {
            None if min > 0 => {
                // `e{m,}`: m-1 copies, then `L: e; split(L, exit)`.
                for _ in 1..min {
                    self.emit(node)?;
                }
                let loop_start = self.pc();
                self.emit(node)?;
                let exit = self.pc() + 1;
                self.split(greedy, loop_start, exit)?;
            }
            None => {
                // `e*`: `L: split(body, exit); body; jmp L`.
                let split = self.split(greedy, HOLE, HOLE)?;
                let body = self.pc();
                self.patch_split_body(split, greedy, body);
                self.emit(node)?;
                self.push(Inst::Jmp(split))?;
                let exit = self.pc();
                self.patch_split_exit(split, greedy, exit);
            }
            Some(max) => {
                for _ in 0..min {
                    self.emit(node)?;
                }
                // `e{0,k}` as nested options: each split may skip straight to the end.
                let mut splits = Vec::new();
                for _ in min..max {
                    let split = self.split(greedy, HOLE, HOLE)?;
                    let body = self.pc();
                    self.patch_split_body(split, greedy, body);
                    splits.push(split);
                    self.emit(node)?;
                }
                let exit = self.pc();
                for split in splits {
                    self.patch_split_exit(split, greedy, exit);
                }
            }
        }
        Ok(())
    }

    fn patch_split_body(&mut self, at: u32, greedy: bool, body: u32) {
        if let Some(Inst::Split(a, b)) = self.insts.get_mut(at as usize) {
            if greedy { *a = body } else { *b = body }
        }
    }
}

/// True when every match of `node` must begin with `^`.
fn starts_anchored(node: &Node) -> bool {
    match node {
        Node::Look(Look::LineStart) => true,
        Node::Concat(items) => items
            .iter()
            .find(|item| !matches!(item, Node::Empty))
            .is_some_and(starts_anchored),
        Node::Alternate(branches) => branches.iter().all(starts_anchored),
        Node::Repeat { node, min, .. } => *min > 0 && starts_anchored(node),
        _ => false,
    }
}
