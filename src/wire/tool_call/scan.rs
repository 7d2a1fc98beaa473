//! The bounded, linear machinery of the text scanner: a work budget per reply and brace matching
//! that resolves every `{` of a pass at once instead of rescanning from each one.

use super::strict::{self, Read};

/// Work allowed per byte of a reply: each byte is looked at this many times on average at most.
pub const WORK_PER_BYTE: usize = 8;

/// Work allowed on any reply, however short.
pub const MIN_WORK: usize = 64 * 1024;

/// The work left for one reply; once spent, the scanner stops and keeps what it found so far.
#[derive(Debug)]
pub(super) struct Budget {
    left: usize,
}

impl Budget {
    /// The budget of a reply of `len` bytes: [`WORK_PER_BYTE`] per byte, at least [`MIN_WORK`].
    pub(super) fn for_len(len: usize) -> Budget {
        Budget {
            left: len.saturating_mul(WORK_PER_BYTE).max(MIN_WORK),
        }
    }

    /// Spends `n` units; false (and nothing left) when they were not there.
    pub(super) fn spend(&mut self, n: usize) -> bool {
        match self.left.checked_sub(n) {
            Some(left) => {
                self.left = left;
                true
            }
            None => {
                self.left = 0;
                false
            }
        }
    }

    /// Whether the budget is spent.
    pub(super) fn is_spent(&self) -> bool {
        self.left == 0
    }
}

/// Matching braces of one text, computed pass by pass: a pass from a `{` outside any string
/// resolves every `{` it meets outside strings, so most texts need a single pass.
pub(super) struct Braces<'a> {
    bytes: &'a [u8],
    /// The end of the object opening at each `{`: [`UNKNOWN`], [`NEVER`], or the end.
    ends: Ends,
    /// From here on no `{` ever closes: a pass from here met neither a `}` nor a string.
    dead_from: usize,
}

/// Not resolved by any pass yet: zero, so a dense table starts as zeroed memory, which the system
/// gives without touching the pages no `{` lies in (an end is never 0: it is past its `{`).
const UNKNOWN: u32 = 0;
/// Resolved: never closes.
const NEVER: u32 = u32::MAX;

/// Bytes per `{` below which a text's ends are kept per brace rather than per byte.
const SPARSE_BYTES_PER_BRACE: usize = 16;

/// The ends of a text's objects (4 bytes each: a reply is far below 4 GiB).
enum Ends {
    /// Not built yet: most replies never ask.
    Unbuilt,
    /// One slot per byte, for texts dense with `{`: looked up directly.
    Dense(Vec<u32>),
    /// One slot per `{`, found by its position: a text with few braces then costs memory (and
    /// page faults) for its braces, not its length.
    Sparse { opens: Vec<u32>, ends: Vec<u32> },
}

impl Ends {
    fn build(bytes: &[u8]) -> Ends {
        let braces = memchr::memchr_iter(b'{', bytes).count();
        if braces.saturating_mul(SPARSE_BYTES_PER_BRACE) >= bytes.len() {
            return Ends::Dense(vec![UNKNOWN; bytes.len()]);
        }
        // Positions fit in u32: `Braces::end` refuses longer texts.
        let opens: Vec<u32> = memchr::memchr_iter(b'{', bytes).map(|p| p as u32).collect();
        Ends::Sparse {
            ends: vec![UNKNOWN; opens.len()],
            opens,
        }
    }

    /// The slot of the `{` at `pos` (which must hold one).
    fn slot(&self, pos: usize) -> Option<usize> {
        match self {
            Ends::Unbuilt => None,
            Ends::Dense(_) => Some(pos),
            Ends::Sparse { opens, .. } => opens.binary_search(&(pos as u32)).ok(),
        }
    }

    fn get(&self, pos: usize) -> Option<u32> {
        let slot = self.slot(pos)?;
        match self {
            Ends::Dense(ends) | Ends::Sparse { ends, .. } => ends.get(slot).copied(),
            Ends::Unbuilt => None,
        }
    }

    fn set(&mut self, pos: usize, end: u32) {
        let Some(slot) = self.slot(pos) else { return };
        if let Ends::Dense(ends) | Ends::Sparse { ends, .. } = self
            && let Some(e) = ends.get_mut(slot)
        {
            *e = end;
        }
    }
}

impl<'a> Braces<'a> {
    pub(super) fn new(text: &'a str) -> Braces<'a> {
        Braces {
            bytes: text.as_bytes(),
            ends: Ends::Unbuilt,
            dead_from: usize::MAX,
        }
    }

    /// Whether no `{` at or after `at` can close (known once a pass from before it has run).
    pub(super) fn dead_at(&self, at: usize) -> bool {
        at >= self.dead_from
    }

    /// End (exclusive) of the balanced `{...}` starting at `start` (strings and escapes respected),
    /// `None` when it never closes or the budget ran out.
    pub(super) fn end(&mut self, start: usize, budget: &mut Budget) -> Option<usize> {
        if self.bytes.len() >= NEVER as usize || self.bytes.get(start) != Some(&b'{') {
            return None;
        }
        if matches!(self.ends, Ends::Unbuilt) {
            self.ends = Ends::build(self.bytes);
        }
        if self.ends.get(start) == Some(UNKNOWN) {
            self.pass(start, budget);
        }
        match self.ends.get(start) {
            Some(end) if end != UNKNOWN && end != NEVER => Some(end as usize),
            _ => None,
        }
    }

    fn pass(&mut self, start: usize, budget: &mut Budget) {
        let rest = &self.bytes[start.min(self.bytes.len())..];
        if !budget.spend(rest.len()) {
            return;
        }
        let mut open: Vec<usize> = Vec::new();
        let mut in_string = false;
        let mut escaped = false;
        let mut closed_or_quoted = false;
        for (k, &b) in rest.iter().enumerate() {
            let at = start + k;
            if in_string {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => {
                    in_string = true;
                    closed_or_quoted = true;
                }
                b'{' => open.push(at),
                b'}' => {
                    closed_or_quoted = true;
                    if let Some(o) = open.pop() {
                        // `at + 1` is below NEVER: `end` refuses longer texts.
                        self.ends.set(o, (at + 1) as u32);
                    }
                }
                _ => {}
            }
        }
        for o in open {
            self.ends.set(o, NEVER);
        }
        if !closed_or_quoted {
            self.dead_from = self.dead_from.min(start);
        }
    }
}

/// Parses the balanced object at `start` as JSON ([`strict::read`]: conflicting duplicate keys are
/// ambiguous), charging its length to the budget.
pub(super) fn object_at(
    text: &str,
    braces: &mut Braces<'_>,
    start: usize,
    budget: &mut Budget,
) -> Option<(usize, Read)> {
    let end = braces.end(start, budget)?;
    if !budget.spend(end - start) {
        return None;
    }
    Some((end, strict::read(text.get(start..end)?)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_match_nested_and_skip_strings() {
        let text = r#"x {"a": {"b": "}"}, "c": 1} {"#;
        let mut braces = Braces::new(text);
        let mut budget = Budget::for_len(text.len());
        assert_eq!(braces.end(2, &mut budget), Some(text.len() - 2));
        assert_eq!(braces.end(8, &mut budget), Some(18));
        assert_eq!(braces.end(text.len() - 1, &mut budget), None);
    }

    #[test]
    fn a_megabyte_of_open_braces_resolves_in_one_pass() {
        let text = "{".repeat(1 << 20);
        let mut braces = Braces::new(&text);
        let mut budget = Budget::for_len(text.len());
        for i in 0..text.len() {
            assert_eq!(braces.end(i, &mut budget), None);
        }
        // One pass over the text, nothing more.
        assert!(!budget.is_spent());
    }

    #[test]
    fn the_budget_stops_adversarial_texts() {
        // Every `{` sits inside a string of every pass before, so each needs a pass of its own.
        let text = r#"{\""#.repeat(1 << 16);
        let mut braces = Braces::new(&text);
        let mut budget = Budget::for_len(text.len());
        for i in 0..text.len() {
            let _ = braces.end(i, &mut budget);
        }
        assert!(budget.is_spent());
    }
}
