//! The `docs-reactive` model: the oracle, except that on a seeded share of conversations it gets
//! its first tool call wrong, and keeps making that call until the call cap: it pastes the
//! argument's JSON schema as its value, or leaves the arguments out. How often depends on the tool
//! docs the request shows: `bare` (most parameters undescribed) at one rate, `documented` (every
//! parameter described, with an example) at another, both in the model's config. It is the stub
//! model that rehearses seed 004's question, whether documenting the tools helps, with an effect
//! known in advance ([`DocsRates::expected_passes`]): calibrate checks the factorial analysis
//! finds exactly that effect.
//!
//! The decision of a conversation depends only on its first customer message, its trial (from
//! `options.seed`) and the variant, never on the router in front, so the router effect and the
//! docs x router interaction are 0.

use super::faults::{hash_str, mix, unit};
use passk::domain::{Task, ToolVariant, Trajectory};
use passk::wire::api::ChatRequest;
use serde_json::{Value, json};

/// The model name the stub serves it under, with [`DocsRates::DEFAULT`].
pub const NAME: &str = "docs-reactive";

/// The mistake a conversation gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocsMistake {
    /// The first argument's JSON schema as its value.
    SchemaCopy,
    /// No arguments at all.
    MissingArguments,
}

/// Share of conversations with a mistake under each tool-docs variant, and the plan's seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DocsRates {
    /// Under `bare` tool docs.
    pub bare: f64,
    /// Under `documented` tool docs.
    pub documented: f64,
    /// Seed of the draws.
    pub seed: u64,
}

impl DocsRates {
    /// The rates of the `docs-reactive` model name: half the conversations under bare docs, one
    /// in ten under documented ones.
    pub const DEFAULT: DocsRates = DocsRates {
        bare: 0.5,
        documented: 0.1,
        seed: 4,
    };

    /// The mistake of the conversation opening with `opening`, trial `trial`, under `variant`
    /// (`None`: it plays the gold trajectory).
    pub fn mistake(&self, opening: &str, trial: u32, variant: ToolVariant) -> Option<DocsMistake> {
        // The stub reads only whether every parameter is described (`variant_of`), so any
        // variant but `bare` is held to the documented rate.
        let rate = if variant == ToolVariant::BARE {
            self.bare
        } else {
            self.documented
        };
        let h = mix(mix(self.seed ^ hash_str(opening.trim())) ^ u64::from(trial));
        // The same draw under both variants: documenting only ever removes mistakes when its rate
        // is lower, so the effect is the difference of the rates, task by task.
        (unit(h) < rate).then(|| {
            if mix(h) & 1 == 0 {
                DocsMistake::SchemaCopy
            } else {
                DocsMistake::MissingArguments
            }
        })
    }

    /// How many of `trials` trials of each task pass under `variant`: a task without a tool call
    /// that takes arguments cannot go wrong, every other one fails exactly when it gets a mistake.
    pub fn expected_passes(&self, tasks: &[Task], trials: u32, variant: ToolVariant) -> usize {
        tasks
            .iter()
            .flat_map(|t| (0..trials).map(move |trial| (t, trial)))
            .filter(|(t, trial)| {
                let opening = t.customer.first().map_or("", String::as_str);
                mistaken_position(&t.gold).is_none()
                    || self.mistake(opening, *trial, variant).is_none()
            })
            .count()
    }
}

/// Where the mistake falls: the first gold call with an argument, as (turn, call within it).
pub(crate) fn mistaken_position(gold: &Trajectory) -> Option<(usize, usize)> {
    gold.turns.iter().enumerate().find_map(|(turn, t)| {
        t.calls
            .iter()
            .position(|c| !c.args.is_empty())
            .map(|i| (turn, i))
    })
}

/// The variant a request's tools read as: `documented` when every parameter of every tool is
/// described, else `bare`.
pub fn variant_of(req: &ChatRequest) -> ToolVariant {
    let params = req
        .tools
        .iter()
        .flatten()
        .filter_map(|t| t.pointer("/function/parameters/properties")?.as_object())
        .flat_map(|p| p.values());
    let mut any = false;
    for p in params {
        any = true;
        if p.get("description").is_none() {
            return ToolVariant::BARE;
        }
    }
    if any {
        ToolVariant::DOCUMENTED
    } else {
        ToolVariant::BARE
    }
}

/// The mistaken call for the gold call `tool(args)`: the first argument's schema (from the
/// request's tools) pasted as its value, or no arguments.
pub(crate) fn mistaken_call(
    mistake: DocsMistake,
    tool: &str,
    args: &serde_json::Map<String, Value>,
    req: &ChatRequest,
) -> (String, Value) {
    match mistake {
        DocsMistake::MissingArguments => (tool.to_string(), json!({})),
        DocsMistake::SchemaCopy => {
            let mut args = args.clone();
            if let Some(arg) = args.keys().next().cloned() {
                let schema = req
                    .tools
                    .iter()
                    .flatten()
                    .find(|t| t.pointer("/function/name").and_then(Value::as_str) == Some(tool))
                    .and_then(|t| {
                        t.pointer(&format!("/function/parameters/properties/{arg}"))
                            .cloned()
                    })
                    .unwrap_or_else(|| json!({"type": "string"}));
                args.insert(arg, schema);
            }
            (tool.to_string(), Value::Object(args))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use passk::domain::Domain as _;

    fn store_tasks() -> Vec<Task> {
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        passk::suites::store::load_store(root)
            .expect("store suite")
            .tasks()
            .to_vec()
    }

    #[test]
    fn documented_docs_remove_mistakes_at_the_rates_given() {
        let tasks = store_tasks();
        let r = DocsRates::DEFAULT;
        let bare = r.expected_passes(&tasks, 5, ToolVariant::BARE);
        let documented = r.expected_passes(&tasks, 5, ToolVariant::DOCUMENTED);
        let n = tasks.len() * 5;
        assert!(
            bare < documented && documented <= n,
            "{bare} {documented} of {n}"
        );
        // Near the rates: half fail bare, a tenth documented (a binomial draw, so loosely).
        let share = |p: usize| 1.0 - p as f64 / n as f64;
        assert!((share(bare) - 0.5).abs() < 0.2, "{}", share(bare));
        assert!(
            (share(documented) - 0.1).abs() < 0.1,
            "{}",
            share(documented)
        );
        // The same rates under both variants: no effect.
        let flat = DocsRates {
            documented: r.bare,
            ..r
        };
        assert_eq!(
            flat.expected_passes(&tasks, 5, ToolVariant::DOCUMENTED),
            bare
        );
    }

    #[test]
    fn the_variant_is_read_from_the_parameter_descriptions() {
        let req = |props: Value| ChatRequest {
            tools: Some(vec![json!({"type": "function", "function": {"name": "t",
                "parameters": {"type": "object", "properties": props}}})]),
            ..ChatRequest::default()
        };
        let documented = req(json!({"a": {"type": "string", "description": "x"}}));
        let bare =
            req(json!({"a": {"type": "string", "description": "x"}, "b": {"type": "string"}}));
        assert_eq!(variant_of(&documented), ToolVariant::DOCUMENTED);
        assert_eq!(variant_of(&bare), ToolVariant::BARE);
        assert_eq!(variant_of(&ChatRequest::default()), ToolVariant::BARE);
    }
}
