//! Searches over a whole reply, which is searched for each family's markers in turn: SIMD
//! (`memchr`) instead of `str::find`'s two-way search, the same matches in the same order.

use memchr::memmem::Finder;
use std::sync::OnceLock;

/// Byte offset of the first `needle` in `hay`.
pub(super) fn find(hay: &str, needle: &str) -> Option<usize> {
    memchr::memmem::find(hay.as_bytes(), needle.as_bytes())
}

/// A needle searched for many times (once per call of a flood), as a `static`: its searcher is
/// built on first use, not on every search.
pub(super) struct Needle {
    text: &'static str,
    finder: OnceLock<Finder<'static>>,
}

impl Needle {
    pub(super) const fn new(text: &'static str) -> Needle {
        Needle {
            text,
            finder: OnceLock::new(),
        }
    }

    fn finder(&self) -> &Finder<'static> {
        self.finder.get_or_init(|| Finder::new(self.text))
    }

    /// Byte offset of the first occurrence in `hay`.
    pub(super) fn find(&self, hay: &str) -> Option<usize> {
        self.finder().find(hay.as_bytes())
    }

    /// Byte offsets of its non-overlapping occurrences in `hay`, in order.
    pub(super) fn positions<'h>(&'h self, hay: &'h str) -> impl Iterator<Item = usize> + 'h {
        self.finder().find_iter(hay.as_bytes())
    }
}

/// Byte offsets of the non-overlapping occurrences of `needle` in `hay`, in order (as
/// `str::match_indices` gives them).
pub(super) fn positions<'a>(hay: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    memchr::memmem::find_iter(hay.as_bytes(), needle.as_bytes())
}

/// Byte offsets of the ASCII byte `byte` in `hay`, in order.
pub(super) fn byte_positions(hay: &str, byte: u8) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(byte, hay.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_matches_as_str_search() {
        let hay = "é<think>a<think><think>é {x}{";
        for needle in ["<think>", "{", "é", "<thinking>", "k><"] {
            let want: Vec<usize> = hay.match_indices(needle).map(|(i, _)| i).collect();
            assert_eq!(positions(hay, needle).collect::<Vec<_>>(), want, "{needle}");
            assert_eq!(find(hay, needle), hay.find(needle), "{needle}");
        }
        // Matches do not overlap, as with `match_indices`.
        assert_eq!(positions("aaaa", "aa").collect::<Vec<_>>(), vec![0, 2]);
        let braces: Vec<usize> = hay.match_indices('{').map(|(i, _)| i).collect();
        assert_eq!(byte_positions(hay, b'{').collect::<Vec<_>>(), braces);
    }
}
