//! The `flawed` model's mistake plan: a scripted weak model that follows the gold trajectory except
//! on a seeded subset of (task, trial) pairs, where it makes one plausible mistake.
//!
//! The plan is decided from the tasks alone, so the verdict each trial must get is known before
//! anything runs ([`MistakePlan::expected`]): calibration compares the whole pipeline's numbers
//! (success, pass^k, failure modes, rejected calls) with these.

use super::faults::{hash_str, mix, unit};
use passk::domain::{Task, Trajectory, TrajectoryCall};
use passk::trace::FailureMode;
use std::collections::{BTreeMap, HashMap};

/// One planned mistake.
#[derive(Debug, Clone, PartialEq)]
pub enum Mistake {
    /// Replays the task's near-miss trajectory number `index` instead of the gold one.
    NearMiss {
        /// Index into the task's near-misses.
        index: usize,
        /// The near-miss's name.
        name: String,
        /// The failure mode its grader must assign.
        expect: FailureMode,
    },
    /// Keeps calling a tool in the first turn and never answers (reaches the call cap).
    LoopCap,
    /// Pastes the JSON schema of one argument as its value once, then continues correctly.
    SchemaPaste {
        /// Tool of the first gold call with an argument.
        tool: String,
        /// Its first argument.
        arg: String,
    },
    /// Uses the documented example value of an `*_id` argument once, then continues correctly.
    ExampleValue {
        /// Tool of the first gold call with an `*_id` argument.
        tool: String,
        /// That argument.
        arg: String,
    },
}

impl Mistake {
    /// Short description for reports.
    pub fn describe(&self) -> String {
        match self {
            Mistake::NearMiss { name, .. } => format!("near-miss: {name}"),
            Mistake::LoopCap => "loops to the call cap".to_string(),
            Mistake::SchemaPaste { tool, arg } => format!("schema pasted into {tool}.{arg}"),
            Mistake::ExampleValue { tool, arg } => format!("example value in {tool}.{arg}"),
        }
    }
}

pub use passk::scripted::ExpectedTrial;

/// What the stub needs of one planned task.
#[derive(Debug, Clone)]
struct PlannedTask {
    id: String,
    near_misses: Vec<Trajectory>,
}

/// A deterministic subset of (task, trial) pairs, each with one mistake.
#[derive(Debug, Clone)]
pub struct MistakePlan {
    tasks: Vec<PlannedTask>,
    by_opening: HashMap<String, usize>,
    trials: u32,
    mistakes: BTreeMap<(String, u32), Mistake>,
}

impl MistakePlan {
    /// Picks about `rate` of the (task, trial) pairs (tasks x `0..trials`) under `seed`, and one
    /// eligible mistake for each.
    pub fn new(tasks: &[Task], trials: u32, seed: u64, rate: f64) -> MistakePlan {
        let mut mistakes = BTreeMap::new();
        let mut by_opening = HashMap::new();
        let mut planned = Vec::new();
        for (k, task) in tasks.iter().enumerate() {
            if let Some(opening) = task.customer.first() {
                by_opening.insert(opening.trim().to_string(), k);
            }
            planned.push(PlannedTask {
                id: task.id.clone(),
                near_misses: task
                    .near_misses
                    .iter()
                    .map(|n| n.trajectory.clone())
                    .collect(),
            });
            let options = eligible(task);
            for trial in 0..trials {
                let h = mix(mix(seed ^ hash_str(&task.id)).wrapping_add(u64::from(trial)));
                if unit(h) >= rate || options.is_empty() {
                    continue;
                }
                let pick = options[(mix(h) % options.len() as u64) as usize].clone();
                mistakes.insert((task.id.clone(), trial), pick);
            }
        }
        MistakePlan {
            tasks: planned,
            by_opening,
            trials,
            mistakes,
        }
    }

    /// The mistake planned for a trial, if any.
    pub fn mistake(&self, task: &str, trial: u32) -> Option<&Mistake> {
        self.mistakes.get(&(task.to_string(), trial))
    }

    /// Every planned mistake, by (task, trial).
    pub fn mistakes(&self) -> &BTreeMap<(String, u32), Mistake> {
        &self.mistakes
    }

    /// Trials per task the plan covers.
    pub fn trials(&self) -> u32 {
        self.trials
    }

    /// The expected verdict of every (task, trial) pair, in task then trial order.
    pub fn expected(&self) -> Vec<ExpectedTrial> {
        let mut out = Vec::new();
        for task in &self.tasks {
            for trial in 0..self.trials {
                let m = self.mistake(&task.id, trial);
                let (passes, failure_mode, extra_rejected) = match m {
                    None => (true, None, 0),
                    Some(Mistake::NearMiss { expect, .. }) => (false, Some(*expect), 0),
                    Some(Mistake::LoopCap) => (false, Some(FailureMode::LoopCap), 0),
                    Some(Mistake::SchemaPaste { .. } | Mistake::ExampleValue { .. }) => {
                        (true, None, 1)
                    }
                };
                out.push(ExpectedTrial {
                    task: task.id.clone(),
                    trial,
                    passes,
                    failure_mode,
                    extra_rejected,
                    mistake: m.map_or_else(|| "none".to_string(), Mistake::describe),
                });
            }
        }
        out
    }

    /// The task a conversation belongs to, from its opening customer message.
    pub(crate) fn task_of(&self, opening: &str) -> Option<&str> {
        self.by_opening
            .get(opening.trim())
            .map(|&k| self.tasks[k].id.as_str())
    }

    /// The near-miss trajectory `index` of a task.
    pub(crate) fn near_miss(&self, task: &str, index: usize) -> Option<&Trajectory> {
        self.tasks
            .iter()
            .find(|t| t.id == task)
            .and_then(|t| t.near_misses.get(index))
    }
}

/// The mistakes a task allows, in a fixed order.
fn eligible(task: &Task) -> Vec<Mistake> {
    let mut out: Vec<Mistake> = task
        .near_misses
        .iter()
        .enumerate()
        .map(|(index, n)| Mistake::NearMiss {
            index,
            name: n.name.clone(),
            expect: n.expect,
        })
        .collect();
    let calls: Vec<&TrajectoryCall> = task
        .gold
        .turns
        .iter()
        .flat_map(|t| t.calls.iter())
        .collect();
    // The loop repeats a gold call of the first turn, so it needs one.
    if task.gold.turns.first().is_some_and(|t| !t.calls.is_empty()) {
        out.push(Mistake::LoopCap);
    }
    if let Some((tool, arg)) = calls
        .iter()
        .find_map(|c| c.args.keys().next().map(|a| (c.tool.clone(), a.clone())))
    {
        out.push(Mistake::SchemaPaste { tool, arg });
    }
    if let Some((tool, arg)) = calls.iter().find_map(|c| {
        c.args
            .keys()
            .find(|a| is_id_arg(a))
            .map(|a| (c.tool.clone(), a.clone()))
    }) {
        out.push(Mistake::ExampleValue { tool, arg });
    }
    out
}

/// Arguments whose unknown values the store rejects (`order_id`, `customer_id`).
pub(crate) fn is_id_arg(name: &str) -> bool {
    name.ends_with("_id")
}

#[cfg(test)]
mod tests {
    use super::*;
    use passk::domain::{NearMiss, TrajectoryTurn};
    use serde_json::json;

    pub(crate) fn task(id: &str) -> Task {
        let call = |tool: &str, args: serde_json::Value| TrajectoryCall {
            tool: tool.to_string(),
            args: args.as_object().cloned().unwrap_or_default(),
        };
        let gold = Trajectory {
            turns: vec![TrajectoryTurn {
                calls: vec![
                    call("find_customer", json!({"query": "Ann"})),
                    call("get_order", json!({"order_id": "A1"})),
                ],
                reply: "Order A1 shipped.".to_string(),
            }],
        };
        Task {
            id: id.to_string(),
            category: "lookup".to_string(),
            customer: vec![format!("Where is my order? ({id})")],
            gold: gold.clone(),
            near_misses: vec![NearMiss {
                name: "quotes the wrong status".to_string(),
                expect: FailureMode::WrongAnswer,
                trajectory: Trajectory {
                    turns: vec![TrajectoryTurn {
                        calls: gold.turns[0].calls.clone(),
                        reply: "Order A1 is delivered.".into(),
                    }],
                },
            }],
            intents: vec!["order_status".to_string()],
            needs_tools: true,
        }
    }

    #[test]
    fn the_plan_is_deterministic_and_close_to_the_rate() {
        let tasks: Vec<Task> = (0..40).map(|i| task(&format!("T{i}"))).collect();
        let a = MistakePlan::new(&tasks, 5, 3, 0.3);
        let b = MistakePlan::new(&tasks, 5, 3, 0.3);
        assert_eq!(a.mistakes(), b.mistakes());
        let n = a.mistakes().len();
        assert!((40..80).contains(&n), "{n} of 200");
        assert_eq!(a.expected().len(), 200);
        assert_ne!(a.mistakes(), MistakePlan::new(&tasks, 5, 4, 0.3).mistakes());
    }

    #[test]
    fn expectations_follow_the_mistake() {
        let tasks: Vec<Task> = (0..30).map(|i| task(&format!("T{i}"))).collect();
        let plan = MistakePlan::new(&tasks, 4, 1, 1.0);
        let kinds: std::collections::BTreeSet<String> = plan
            .mistakes()
            .values()
            .map(|m| m.describe().split(' ').next().unwrap_or("").to_string())
            .collect();
        assert_eq!(kinds.len(), 4, "{kinds:?}");
        for e in plan.expected() {
            match plan.mistake(&e.task, e.trial) {
                Some(Mistake::NearMiss { .. }) => {
                    assert_eq!(e.failure_mode, Some(FailureMode::WrongAnswer))
                }
                Some(Mistake::LoopCap) => assert_eq!(e.failure_mode, Some(FailureMode::LoopCap)),
                Some(_) => assert!(e.passes && e.extra_rejected == 1),
                None => unreachable!("rate 1 plans every pair"),
            }
        }
        assert!(
            MistakePlan::new(&tasks, 4, 1, 0.0)
                .expected()
                .iter()
                .all(|e| e.passes && e.mistake == "none")
        );
    }
}
