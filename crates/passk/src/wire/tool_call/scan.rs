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
    /// page faults) for its braces, not its length. `hint` is the slot last looked up: the scan
    /// asks for braces in order, so the next is usually the one after it.
    Sparse {
        opens: Vec<u32>,
        ends: Vec<u32>,
        hint: usize,
    },
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
            hint: 0,
        }
    }

    /// The slot of the `{` at `pos` (which must hold one).
    fn slot(&mut self, pos: usize) -> Option<usize> {
        match self {
            Ends::Unbuilt => None,
            Ends::Dense(_) => Some(pos),
            Ends::Sparse { opens, hint, .. } => {
                let pos = pos as u32;
                let slot = (*hint..opens.len().min(*hint + 2))
                    .find(|&k| opens[k] == pos)
                    .or_else(|| opens.binary_search(&pos).ok())?;
                *hint = slot;
                Some(slot)
            }
        }
    }

    /// The table of ends by slot, and the position of each slot's `{` when the table is sparse.
    fn table(&mut self) -> (&mut [u32], Option<&[u32]>) {
        match self {
            Ends::Dense(ends) => (ends, None),
            Ends::Sparse { ends, opens, .. } => (ends, Some(opens)),
            Ends::Unbuilt => (&mut [], None),
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
        let slot = self.ends.slot(start)?;
        if self.ends.table().0[slot] == UNKNOWN {
            self.pass(start, slot, budget);
        }
        match self.ends.table().0[slot] {
            UNKNOWN | NEVER => None,
            end => Some(end as usize),
        }
    }

    /// Resolves every `{` met outside strings from `start` (the `{` in `first_slot`) on.
    fn pass(&mut self, start: usize, first_slot: usize, budget: &mut Budget) {
        let bytes = self.bytes;
        let rest = &bytes[start.min(bytes.len())..];
        if !budget.spend(rest.len()) {
            return;
        }
        let (ends, opens) = self.ends.table();
        // Open objects by slot. A sparse table numbers every `{`, in strings too: the slot of
        // one met outside strings is found by stepping past the ones before it.
        let mut open: Vec<usize> = Vec::new();
        let mut slot = first_slot;
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
                b'{' => open.push(match opens {
                    Some(opens) => {
                        while opens.get(slot).is_some_and(|&p| (p as usize) < at) {
                            slot += 1;
                        }
                        slot
                    }
                    None => at,
                }),
                b'}' => {
                    closed_or_quoted = true;
                    if let Some(o) = open.pop() {
                        // `at + 1` is below NEVER: `end` refuses longer texts.
                        ends[o] = (at + 1) as u32;
                    }
                }
                _ => {}
            }
        }
        for o in open {
            ends[o] = NEVER;
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

/// The identifier at the start of `s` (letters, digits, `_`, `-`, `.`), at most 64 bytes.
pub(super) fn ident(s: &str) -> &str {
    let len = s
        .bytes()
        .take(64)
        .take_while(|b| b.is_ascii_alphanumeric() || b"_-.".contains(b))
        .count();
    &s[..len]
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
    fn sparse_and_dense_tables_give_the_same_ends() {
        // `{` inside strings and escapes too: a sparse table numbers those as well.
        let core = r#"{"a": {"b": "}{\"{"}, "c": {"d": 1}} {"e": "{"} {"#;
        let padded = format!("{core}{}", " ".repeat(64 * core.len()));
        let ends = |text: &str| {
            let mut braces = Braces::new(text);
            let mut budget = Budget::for_len(text.len());
            let got: Vec<Option<usize>> = (0..core.len())
                .map(|i| braces.end(i, &mut budget))
                .collect();
            (got, matches!(braces.ends, Ends::Sparse { .. }))
        };
        let (dense, dense_is_sparse) = ends(core);
        let (sparse, sparse_is_sparse) = ends(&padded);
        assert!(!dense_is_sparse && sparse_is_sparse);
        assert_eq!(dense, sparse);
        assert_eq!(dense[0], Some(36));
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
