//! Tasks that repeat an earlier one: the same customer messages, or the same first message (the
//! stub's oracle and flawed models find a conversation's script by its first message, so two tasks
//! that open alike cannot be told apart). `suite check` warns about each.

use crate::domain::Task;

/// A task that repeats an earlier one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    /// The later task.
    pub task: String,
    /// The earlier task it repeats.
    pub of: String,
    /// Every customer message is the same (else only the first).
    pub every_message: bool,
}

impl std::fmt::Display for Repeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.every_message {
            "the same customer messages"
        } else {
            "the same first customer message"
        };
        write!(f, "{} repeats {}: {what}", self.task, self.of)
    }
}

/// Each task whose first customer message is an earlier task's, in task order.
pub fn repeats(tasks: &[Task]) -> Vec<Repeat> {
    tasks
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let first = t.customer.first()?;
            let earlier = tasks[..i]
                .iter()
                .find(|e| e.customer.first() == Some(first))?;
            Some(Repeat {
                task: t.id.clone(),
                of: earlier.id.clone(),
                every_message: earlier.customer == t.customer,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, customer: &[&str]) -> Task {
        use crate::domain::Domain as _;
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        let store = crate::suites::store::load_store(root).expect("store suite");
        let mut t = store.tasks()[0].clone();
        t.id = id.into();
        t.customer = customer.iter().map(|s| s.to_string()).collect();
        t
    }

    #[test]
    fn a_task_opening_like_an_earlier_one_is_named_with_it() {
        let tasks = [
            task("L1", &["where is 5105?"]),
            task("L2", &["cancel 5106"]),
            task("L9", &["where is 5105?"]),
            task("M9", &["cancel 5106", "and refund it"]),
        ];
        let found = repeats(&tasks);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            found[0].to_string(),
            "L9 repeats L1: the same customer messages"
        );
        assert_eq!(
            found[1].to_string(),
            "M9 repeats L2: the same first customer message"
        );
        assert!(repeats(&tasks[..2]).is_empty());
    }
}
