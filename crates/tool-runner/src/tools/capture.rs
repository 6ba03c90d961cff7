//! [`Capture`]: the head and tail of a stream within a byte cap, with a marker line between
//! them saying how much was dropped.

use std::collections::VecDeque;

/// Keeps the first half of the cap from the start of a stream and the second half from its
/// end.
#[derive(Debug)]
pub struct Capture {
    head: Vec<u8>,
    head_cap: usize,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total: u64,
}

impl Capture {
    pub fn new(cap: usize) -> Self {
        let head_cap = cap.div_ceil(2);
        Self {
            head: Vec::new(),
            head_cap,
            tail: VecDeque::new(),
            tail_cap: cap - head_cap,
            total: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if self.tail_cap == 0 || bytes.is_empty() {
            return;
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
        } else {
            self.tail.extend(bytes);
            let excess = self.tail.len().saturating_sub(self.tail_cap);
            self.tail.drain(..excess);
        }
    }

    /// Bytes seen so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The kept bytes (head, marker, tail when anything was dropped) and the count dropped.
    ///
    /// When bytes are dropped, a UTF-8 character cut at either edge is dropped too, so text
    /// output stays text.
    pub fn finish(&self) -> (Vec<u8>, u64) {
        let mut head = self.head.clone();
        let mut tail: Vec<u8> = self.tail.iter().copied().collect();
        let kept = (head.len() + tail.len()) as u64;
        if kept == self.total {
            head.extend_from_slice(&tail);
            return (head, 0);
        }
        let cut_head = incomplete_suffix(&head);
        head.truncate(head.len() - cut_head);
        let cut_tail = tail
            .iter()
            .take(3)
            .take_while(|&&b| b & 0xC0 == 0x80)
            .count();
        tail.drain(..cut_tail);
        let dropped = self.total - (head.len() + tail.len()) as u64;
        head.extend_from_slice(format!("\n[… {dropped} bytes dropped …]\n").as_bytes());
        head.extend_from_slice(&tail);
        (head, dropped)
    }
}

/// The length of an incomplete UTF-8 sequence at the end of `bytes` (0 when none).
pub fn incomplete_suffix(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(_) => 0,
        Err(e) if e.error_len().is_none() => bytes.len() - e.valid_up_to(),
        Err(_) => {
            // Not UTF-8 anyway; only trim a lead byte sequence that is visibly cut.
            let start = bytes.len().saturating_sub(3);
            bytes[start..]
                .iter()
                .rposition(|&b| b & 0xC0 == 0xC0)
                .map_or(0, |i| {
                    let lead = bytes[start + i];
                    let need = if lead >= 0xF0 {
                        4
                    } else if lead >= 0xE0 {
                        3
                    } else {
                        2
                    };
                    let have = bytes.len() - (start + i);
                    if have < need { have } else { 0 }
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_under_the_cap() {
        let mut capture = Capture::new(10);
        capture.push(b"hello");
        capture.push(b"world");
        assert_eq!(capture.finish(), (b"helloworld".to_vec(), 0));
    }

    #[test]
    fn keeps_head_and_tail_with_a_marker() {
        let mut capture = Capture::new(8);
        for chunk in [&b"aaaa"[..], b"bbbbbbbbbbbb", b"cc", b"zzzz"] {
            capture.push(chunk);
        }
        let (kept, dropped) = capture.finish();
        assert_eq!(dropped, 14);
        assert_eq!(
            String::from_utf8(kept).unwrap(),
            "aaaa\n[… 14 bytes dropped …]\nzzzz"
        );
        assert_eq!(capture.total(), 22);
    }

    #[test]
    fn never_splits_a_character_at_the_cut() {
        let text = "é".repeat(20); // 40 bytes, 2 per character
        let mut capture = Capture::new(9);
        capture.push(text.as_bytes());
        let (kept, dropped) = capture.finish();
        let kept = String::from_utf8(kept).expect("still UTF-8");
        assert_eq!(kept, format!("éé\n[… {dropped} bytes dropped …]\néé"));
        assert_eq!(dropped, 32);
    }

    #[test]
    fn incomplete_suffix_finds_cut_characters() {
        assert_eq!(incomplete_suffix("aé".as_bytes()), 0);
        assert_eq!(incomplete_suffix(&"aé".as_bytes()[..2]), 1);
        assert_eq!(incomplete_suffix(&"a😀".as_bytes()[..4]), 3);
        assert_eq!(incomplete_suffix(b"\xff\xe2\x82"), 2);
    }
}
