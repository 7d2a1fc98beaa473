//! The calls a scan finds, held in bounded memory: the first [`CALLS_KEPT`] of a reply (by
//! position) whole, every later one as its span alone. A reply flooded with calls (a megabyte
//! holds 10,000 to 25,000) then costs the same memory, and the same time per byte, however long it
//! is, while every call is still counted and judged on its prose. Only the first few calls of a
//! reply are ever run or recorded in detail (`runner::agent_loop::TOOL_CALLS_PER_REPLY`, and the
//! `unexecuted` detail of a call record), far fewer than are kept.

use super::{ExtractedCall, Found};
use crate::trace::CallFormat;

/// Calls of one reply kept whole (name and arguments), in order of position.
pub const CALLS_KEPT: usize = 1024;

/// One call found, in order of position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Span {
    pub(super) start: usize,
    pub(super) end: usize,
    /// Index of the whole call in [`Scanned::kept`]; `None` past the first [`CALLS_KEPT`].
    pub(super) kept: Option<usize>,
    pub(super) malformed: bool,
}

/// Calls found so far by one or more finders, in any order.
#[derive(Default)]
pub(super) struct Finds {
    kept: Vec<Found>,
    /// Calls past the horizon: their spans only.
    spans: Vec<Span>,
    /// Calls starting after this lie past the first [`CALLS_KEPT`]; `None` until that many are
    /// kept.
    horizon: Option<usize>,
}

impl Finds {
    pub(super) fn push(&mut self, f: Found) {
        if self.horizon.is_some_and(|h| f.start > h) {
            self.spans.push(span_of(&f, None));
            return;
        }
        self.kept.push(f);
        if self.kept.len() >= 2 * CALLS_KEPT {
            self.trim();
        }
    }

    /// Keeps the first [`CALLS_KEPT`] whole (stably by start, so calls starting together keep the
    /// order they were found in) and the rest as spans.
    fn trim(&mut self) {
        self.kept.sort_by_key(|f| f.start);
        if self.kept.len() < CALLS_KEPT {
            return;
        }
        for f in self.kept.drain(CALLS_KEPT..) {
            self.spans.push(span_of(&f, None));
        }
        self.horizon = self.kept.last().map(|f| f.start);
    }

    /// Takes in what another scan found. Its spans stay spans: each has at least
    /// [`CALLS_KEPT`] of the other's calls before it, and those all come here.
    pub(super) fn append(&mut self, other: Finds) {
        self.extend(other.kept);
        self.spans.extend(other.spans);
    }

    /// Whether any call found is malformed.
    pub(super) fn any_malformed(&self) -> bool {
        self.kept
            .iter()
            .any(|f| f.call.format == CallFormat::Malformed)
            || self.spans.iter().any(|s| s.malformed)
    }

    /// The start of every call found, in order.
    pub(super) fn starts(&self) -> Vec<usize> {
        let mut starts: Vec<usize> = self
            .kept
            .iter()
            .map(|f| f.start)
            .chain(self.spans.iter().map(|s| s.start))
            .collect();
        starts.sort_unstable();
        starts
    }

    /// Every call's span, in any order.
    pub(super) fn span_bounds(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.kept
            .iter()
            .map(|f| (f.start, f.end))
            .chain(self.spans.iter().map(|s| (s.start, s.end)))
    }

    /// The calls in order of position.
    pub(super) fn into_scanned(mut self) -> Scanned {
        self.trim();
        let mut spans = self.spans;
        spans.extend(
            self.kept
                .iter()
                .enumerate()
                .map(|(k, f)| span_of(f, Some(k))),
        );
        // Whole calls before spans at one start: the kept ones are the first found there.
        spans.sort_by_key(|s| (s.start, s.kept.is_none()));
        Scanned {
            spans,
            kept: self.kept.into_iter().map(|f| Some(f.call)).collect(),
        }
    }
}

#[cfg(test)]
impl Finds {
    /// The whole calls kept, in order of position.
    pub(super) fn into_kept_calls(self) -> Vec<ExtractedCall> {
        self.into_scanned()
            .into_calls()
            .filter_map(|(_, call)| call)
            .collect()
    }
}

impl Extend<Found> for Finds {
    fn extend<I: IntoIterator<Item = Found>>(&mut self, iter: I) {
        for f in iter {
            self.push(f);
        }
    }
}

fn span_of(f: &Found, kept: Option<usize>) -> Span {
    Span {
        start: f.start,
        end: f.end,
        kept,
        malformed: f.call.format == CallFormat::Malformed,
    }
}

/// Every call of a scan in order of position, the first [`CALLS_KEPT`] of them whole.
#[derive(Debug, Default)]
pub(super) struct Scanned {
    pub(super) spans: Vec<Span>,
    /// The whole calls, indexed by [`Span::kept`].
    pub(super) kept: Vec<Option<ExtractedCall>>,
}

impl Scanned {
    /// Adds a call at its place in order, kept whole.
    pub(super) fn insert(&mut self, f: Found) {
        let at = self.spans.partition_point(|s| s.start < f.start);
        self.spans.insert(at, span_of(&f, Some(self.kept.len())));
        self.kept.push(Some(f.call));
    }

    /// Every call in order of position: its span, and the whole call when it was kept.
    pub(super) fn into_calls(self) -> impl Iterator<Item = (Span, Option<ExtractedCall>)> {
        let mut kept = self.kept;
        self.spans
            .into_iter()
            .map(move |s| (s, s.kept.and_then(|k| kept.get_mut(k)?.take())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn found(start: usize) -> Found {
        Found {
            start,
            end: start + 1,
            call: ExtractedCall {
                name: format!("t{start}"),
                arguments: json!({}),
                format: CallFormat::Text,
                id: None,
                error: None,
            },
        }
    }

    #[test]
    fn the_first_calls_by_position_are_kept_whatever_the_order_found() {
        let n = 3 * CALLS_KEPT + 7;
        let mut a = Finds::default();
        let mut b = Finds::default();
        // Two finders, each in its own order: odd positions backwards, even ones forwards.
        for p in (0..n).rev().filter(|p| p % 2 == 1) {
            a.push(found(p));
        }
        for p in (0..n).filter(|p| p % 2 == 0) {
            b.push(found(p));
        }
        a.append(b);
        let scanned = a.into_scanned();
        let starts: Vec<usize> = scanned.spans.iter().map(|s| s.start).collect();
        assert_eq!(starts, (0..n).collect::<Vec<_>>());
        for (p, (_, call)) in scanned.into_calls().enumerate() {
            assert_eq!(call.is_some(), p < CALLS_KEPT, "position {p}");
            if let Some(c) = call {
                assert_eq!(c.name, format!("t{p}"));
            }
        }
    }
}
