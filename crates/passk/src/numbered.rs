//! Distinct values numbered once each, in the order first seen, so that many records can refer
//! to a few values by a `u32` rather than each holding a copy.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

/// Distinct values and their numbers.
#[derive(Debug)]
pub struct Numbered<T> {
    ids: HashMap<T, u32>,
    values: Vec<T>,
}

impl<T> Default for Numbered<T> {
    fn default() -> Self {
        Numbered {
            ids: HashMap::new(),
            values: Vec::new(),
        }
    }
}

impl<T: Hash + Eq + Clone> Numbered<T> {
    /// The number of `value`, given it if new.
    pub fn id<Q>(&mut self, value: &Q) -> u32
    where
        T: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
        for<'q> &'q Q: Into<T>,
    {
        if let Some(&id) = self.ids.get(value) {
            return id;
        }
        let id = u32::try_from(self.values.len()).expect("fewer than 2^32 values");
        let value: T = value.into();
        self.values.push(value.clone());
        self.ids.insert(value, id);
        id
    }

    /// The value numbered `id`, if any.
    pub fn get(&self, id: u32) -> Option<&T> {
        self.values.get(id as usize)
    }

    /// How many values are numbered.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no value is numbered.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn a_value_keeps_the_number_it_was_first_given() {
        let mut names: Numbered<Rc<str>> = Numbered::default();
        assert_eq!(
            ["b", "a", "b", "c", "a"].map(|n| names.id(n)),
            [0, 1, 0, 2, 1]
        );
        assert_eq!((names.len(), names.get(1).map(|n| &**n)), (3, Some("a")));
        assert_eq!(names.get(3), None);
    }
}
