//! Effects of a factorial run (metrics.md, "Factorial effects"): a run that crosses tool docs
//! (bare, documented), the router in front (off, on) and the prompt variant (policy, another)
//! gets, per model, each factor's main effect on the success rate and each two-factor
//! interaction, and, between two models, the difference of each factor's effect (model x docs,
//! model x router, model x prompt). Every figure is a linear contrast of cell success rates over
//! the tasks all its cells share, with the interval of the cells' own intervals combined with
//! their correlation over those tasks ([`interval::paired_contrast`]).

use crate::analysis::figures::taxonomy::OutcomeCounts;
use crate::analysis::intervals::bootstrap::Interval;
use crate::analysis::intervals::interval;
use crate::domain::{PromptVariant, ToolVariant};
use crate::runner::record::{ConversationRecord, Mode};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One contrast: its value on every shared task and its 95% interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    /// Value on all shared tasks, as a difference of success rates (0.05 = 5 pp).
    pub estimate: f64,
    /// The cells' rate intervals combined with their correlation over the shared tasks
    /// (`interval::paired_contrast`; `None`: a cell has no trial on them).
    pub ci95: Option<Interval>,
    /// Tasks every cell of the contrast has graded trials of.
    pub tasks: usize,
}

/// One model's factor effects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelEffects {
    /// Success rate per cell, keyed `docs=<variant>/router=<off|on>`, preceded by
    /// `prompt=<variant>/` where the run played another prompt than the suite's policy.
    pub cells: BTreeMap<String, f64>,
    /// How each cell's conversations ended: the rate's passes and graded denominator, and the
    /// transport and protocol exclusions.
    #[serde(default)]
    pub cell_outcomes: BTreeMap<String, OutcomeCounts>,
    /// Documented − bare, averaged over the router levels played.
    pub docs: Option<Effect>,
    /// Router on − off, averaged over the tool docs variants played.
    pub router: Option<Effect>,
    /// (documented − bare with the router on) − (documented − bare with it off), averaged over
    /// the prompt variants played.
    pub docs_x_router: Option<Effect>,
    /// The later prompt variant − the earlier (`policy` first), averaged over the other cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<Effect>,
    /// The docs effect under the later prompt − under the earlier, averaged over router levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs_x_prompt: Option<Effect>,
    /// The router effect under the later prompt − under the earlier, averaged over docs variants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router_x_prompt: Option<Effect>,
}

/// Two models' factor effects set against each other: `first`'s effect minus `second`'s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelContrast {
    /// The model whose effect comes first.
    pub first: String,
    /// The model whose effect is subtracted.
    pub second: String,
    /// Model x docs: how much more documentation helps `first` than `second`.
    pub docs: Option<Effect>,
    /// Model x router: how much more the router helps `first` than `second`.
    pub router: Option<Effect>,
    /// Model x prompt: how much more the later prompt variant helps `first` than `second`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<Effect>,
}

/// The factorial analysis of one suite (agent mode, at the largest call cap played).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Factorial {
    /// Suite name.
    pub suite: String,
    /// Call cap the cells were played at.
    pub call_cap: u32,
    /// Tool docs variants played.
    pub tool_docs: Vec<ToolVariant>,
    /// Router levels played (false: off).
    pub router_in_front: Vec<bool>,
    /// Prompt variants played, `policy` first (absent in analyses written before prompt variants:
    /// the suite's policy alone).
    #[serde(default = "policy_only")]
    pub prompt: Vec<PromptVariant>,
    /// Per model, in report order.
    pub models: BTreeMap<String, ModelEffects>,
    /// Every pair of models, in report order.
    pub between_models: Vec<ModelContrast>,
}

fn policy_only() -> Vec<PromptVariant> {
    vec![PromptVariant::POLICY]
}

/// The levels of one cell of the design.
type Levels = (PromptVariant, ToolVariant, bool);
/// A cell of the design for one model.
type Cell = (String, Levels);
/// Graded trials and passes per task.
type Tally = BTreeMap<String, (f64, f64)>;
/// A weighted cell in a contrast.
type Term = (Cell, f64);

/// The factorial analysis of every suite whose agent conversations crossed tool docs or router
/// levels; empty for a run that held both fixed.
pub fn factorials(convs: &[&ConversationRecord], models: &[String]) -> Vec<Factorial> {
    let mut sums = FactorialSums::default();
    for c in convs {
        sums.add(c);
    }
    sums.factorials(models)
}

/// [`factorials`] fed one conversation at a time: graded trials and passes per task, and the
/// outcomes, of each model's cells, per suite and call cap (the analysis reads the highest cap).
#[derive(Debug, Clone, Default)]
pub struct FactorialSums {
    suites: BTreeMap<String, BTreeMap<u32, CapSums>>,
}

/// The cells of one suite at one call cap.
#[derive(Debug, Clone, Default)]
struct CapSums {
    tallies: BTreeMap<Cell, Tally>,
    outcomes: BTreeMap<Cell, OutcomeCounts>,
}

impl FactorialSums {
    /// Adds a conversation (a toolless one is not part of any design).
    pub fn add(&mut self, c: &ConversationRecord) {
        if c.mode != Mode::Agent {
            return;
        }
        let caps = self.suites.entry(c.suite.clone()).or_default();
        let sums = caps.entry(c.call_cap).or_default();
        let Some(docs) = c.tool_docs else {
            return;
        };
        let cell = (
            c.model.clone(),
            (c.prompt_variant(), docs, c.router_in_front),
        );
        sums.outcomes
            .entry(cell.clone())
            .or_default()
            .add(c.outcome);
        if !c.outcome.is_graded() {
            return;
        }
        let t = sums.tallies.entry(cell).or_default().entry(c.task.clone());
        let (trials, passes) = t.or_default();
        *trials += 1.0;
        *passes += f64::from(u8::from(c.verdict.passed));
    }

    /// The factorial of every suite whose conversations added crossed a factor.
    pub fn factorials(&self, models: &[String]) -> Vec<Factorial> {
        self.suites
            .iter()
            .filter_map(|(suite, caps)| {
                let (call_cap, sums) = caps.last_key_value()?;
                factorial(suite, *call_cap, sums, models)
            })
            .collect()
    }
}

fn factorial(suite: &str, call_cap: u32, sums: &CapSums, models: &[String]) -> Option<Factorial> {
    let CapSums { tallies, outcomes } = sums;
    let design = Design::of(tallies.keys().map(|k| k.1))?;
    let present: Vec<&String> = models
        .iter()
        .filter(|m| tallies.keys().any(|k| &k.0 == *m))
        .collect();
    let effect = |terms: Vec<Term>| contrast(&terms, tallies);
    let per_model = present
        .iter()
        .map(|m| (m.to_string(), model_effects(m, &design, tallies, outcomes)))
        .collect();
    let mut between_models = Vec::new();
    for (i, a) in present.iter().enumerate() {
        for b in &present[i + 1..] {
            let both = |f: Factor| {
                let mut terms = design.terms(a, &[f], 1.0)?;
                terms.extend(design.terms(b, &[f], -1.0)?);
                Some(effect(terms))
            };
            between_models.push(ModelContrast {
                first: a.to_string(),
                second: b.to_string(),
                docs: both(Factor::Docs),
                router: both(Factor::Router),
                prompt: both(Factor::Prompt),
            });
        }
    }
    Some(Factorial {
        suite: suite.to_string(),
        call_cap,
        tool_docs: design.docs,
        router_in_front: design.routers,
        prompt: design.prompts,
        models: per_model,
        between_models,
    })
}

impl Factorial {
    /// Whether the run crossed or changed the prompt (cells then name their prompt variant).
    pub fn names_prompts(&self) -> bool {
        self.prompt != [PromptVariant::POLICY]
    }

    /// Every cell's name, prompt by prompt, docs by docs, router off before on.
    pub fn cell_names(&self) -> Vec<String> {
        let named = self.names_prompts();
        let mut out = Vec::new();
        for &p in &self.prompt {
            for &d in &self.tool_docs {
                for &r in &self.router_in_front {
                    out.push(cell_name((p, d, r), named));
                }
            }
        }
        out
    }
}

/// One model's cells and effects.
fn model_effects(
    m: &str,
    design: &Design,
    tallies: &BTreeMap<Cell, Tally>,
    outcomes: &BTreeMap<Cell, OutcomeCounts>,
) -> ModelEffects {
    let named = design.named_prompts();
    let key = |l: Levels| (m.to_string(), l);
    let cells = design
        .cells()
        .filter_map(|l| {
            let (trials, passes) = sums(tallies.get(&key(l))?);
            Some((cell_name(l, named), passes / trials))
        })
        .collect();
    let cell_outcomes = design
        .cells()
        .filter_map(|l| Some((cell_name(l, named), outcomes.get(&key(l))?.clone())))
        .collect();
    let effect = |factors: &[Factor]| {
        let terms = design.terms(m, factors, 1.0)?;
        Some(contrast(&terms, tallies))
    };
    ModelEffects {
        cells,
        cell_outcomes,
        docs: effect(&[Factor::Docs]),
        router: effect(&[Factor::Router]),
        docs_x_router: effect(&[Factor::Docs, Factor::Router]),
        prompt: effect(&[Factor::Prompt]),
        docs_x_prompt: effect(&[Factor::Docs, Factor::Prompt]),
        router_x_prompt: effect(&[Factor::Router, Factor::Prompt]),
    }
}

/// A cell's name in tables and JSON: `docs=<variant>/router=<off|on>`, preceded by
/// `prompt=<variant>/` when `named_prompt` (the run played another prompt than the policy).
fn cell_name((prompt, docs, router): Levels, named_prompt: bool) -> String {
    let router = if router { "on" } else { "off" };
    let prompt = if named_prompt {
        format!("prompt={}/", prompt.as_str())
    } else {
        String::new()
    };
    format!("{prompt}docs={}/router={router}", docs.as_str())
}

/// A factor of the design.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Factor {
    Docs,
    Router,
    Prompt,
}

/// The levels each factor took, each in contrast order (baseline first).
struct Design {
    docs: Vec<ToolVariant>,
    routers: Vec<bool>,
    prompts: Vec<PromptVariant>,
}

impl Design {
    /// The design of the cells played (docs by name, router off first, prompts with `policy`
    /// first and then by name); `None` when every factor took one level.
    fn of(cells: impl Iterator<Item = Levels>) -> Option<Design> {
        let mut prompts = BTreeSet::new();
        let mut docs = BTreeSet::new();
        let mut routers = BTreeSet::new();
        for (p, d, r) in cells {
            prompts.insert(p);
            docs.insert(d);
            routers.insert(r);
        }
        if prompts.len() < 2 && docs.len() < 2 && routers.len() < 2 {
            return None;
        }
        let mut prompts: Vec<PromptVariant> = prompts.into_iter().collect();
        prompts.sort_by_key(|p| !p.is_policy());
        Some(Design {
            docs: docs.into_iter().collect(),
            routers: routers.into_iter().collect(),
            prompts,
        })
    }

    /// Whether cells are named with their prompt: the run played another than the policy.
    fn named_prompts(&self) -> bool {
        self.prompts != [PromptVariant::POLICY]
    }

    fn cells(&self) -> impl Iterator<Item = Levels> + '_ {
        self.prompts.iter().flat_map(move |&p| {
            self.docs
                .iter()
                .flat_map(move |&d| self.routers.iter().map(move |&r| (p, d, r)))
        })
    }

    /// How many levels a factor took.
    fn levels(&self, f: Factor) -> usize {
        match f {
            Factor::Docs => self.docs.len(),
            Factor::Router => self.routers.len(),
            Factor::Prompt => self.prompts.len(),
        }
    }

    /// +1 for a cell at a factor's treatment level, −1 at its baseline.
    fn sign(&self, f: Factor, (p, d, r): Levels) -> f64 {
        let treated = match f {
            Factor::Docs => self.docs[1] == d,
            Factor::Router => self.routers[1] == r,
            Factor::Prompt => self.prompts[1] == p,
        };
        if treated { 1.0 } else { -1.0 }
    }

    /// The contrast of `factors` for `model`, times `w`: with one factor its main effect
    /// (treatment − baseline), with two their difference-in-differences, each averaged over the
    /// levels of the factors not contrasted. `None` unless each contrasted factor took exactly
    /// two levels (the later variant name against the earlier; router on against off; the other
    /// prompt against `policy`).
    fn terms(&self, model: &str, factors: &[Factor], w: f64) -> Option<Vec<Term>> {
        if factors.iter().any(|&f| self.levels(f) != 2) {
            return None;
        }
        let others: usize = [Factor::Docs, Factor::Router, Factor::Prompt]
            .into_iter()
            .filter(|f| !factors.contains(f))
            .map(|f| self.levels(f))
            .product();
        let share = w / others as f64;
        let terms = self
            .cells()
            .map(|l| {
                let sign: f64 = factors.iter().map(|&f| self.sign(f, l)).product();
                ((model.to_string(), l), share * sign)
            })
            .collect();
        Some(terms)
    }
}

/// Trials and passes of a tally over every task.
fn sums(tally: &Tally) -> (f64, f64) {
    tally
        .values()
        .fold((0.0, 0.0), |(t, p), &(dt, dp)| (t + dt, p + dp))
}

/// The weighted sum of cell success rates over the tasks every cell shares, with the interval of
/// the cells' rates combined with their correlation over those tasks (`interval::paired_contrast`).
fn contrast(terms: &[Term], tallies: &BTreeMap<Cell, Tally>) -> Effect {
    let empty = Tally::new();
    let cells: Vec<(&Tally, f64)> = terms
        .iter()
        .map(|(cell, w)| (tallies.get(cell).unwrap_or(&empty), *w))
        .collect();
    let mut shared: BTreeSet<&String> = cells
        .first()
        .map(|c| c.0.keys().collect())
        .unwrap_or_default();
    for (tally, _) in &cells {
        shared.retain(|id| tally.contains_key(*id));
    }
    let ids: Vec<&String> = shared.into_iter().collect();
    // Each cell's (trials, passes) per shared task.
    let by_task: Vec<(Vec<(usize, usize)>, f64)> = cells
        .iter()
        .map(|(tally, w)| {
            let counts = ids.iter().map(|id| tally[*id]);
            let counts = counts.map(|(t, p)| (t.round() as usize, p.round() as usize));
            (counts.collect(), *w)
        })
        .collect();
    let estimate = by_task.iter().try_fold(0.0, |acc, (counts, w)| {
        let (trials, passes) = counts
            .iter()
            .fold((0, 0), |(t, p), &(dt, dp)| (t + dt, p + dp));
        (trials > 0).then(|| acc + w * passes as f64 / trials as f64)
    });
    let cells: Vec<(f64, &[(usize, usize)])> =
        by_task.iter().map(|(c, w)| (*w, c.as_slice())).collect();
    Effect {
        estimate: estimate.unwrap_or(f64::NAN),
        ci95: interval::paired_contrast(&cells),
        tasks: ids.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    /// Two models, four tasks, two trials, every cell: `pass(model, docs, router, task)` decides.
    fn records(pass: impl Fn(&str, ToolVariant, bool, usize) -> bool) -> Vec<ConversationRecord> {
        crate::analysis::fixtures::factorial_records(&["small", "large"], pass)
    }

    fn run(records: &[ConversationRecord]) -> Factorial {
        let refs: Vec<&ConversationRecord> = records.iter().collect();
        let models = vec!["small".to_string(), "large".to_string()];
        let mut all = factorials(&refs, &models);
        assert_eq!(all.len(), 1);
        all.remove(0)
    }

    #[test]
    fn documentation_that_rescues_only_the_small_model_under_bare_docs_is_attributed() {
        // The small model fails tasks T0 and T1 only under bare docs, router or not; the large
        // one passes everything. Docs effect: small +50 pp, large 0; model x docs: +50 pp;
        // router effect and every interaction with it: 0.
        let f = run(&records(|model, docs, _, task| {
            !(model == "small" && docs == ToolVariant::BARE && task < 2)
        }));
        let small = &f.models["small"];
        assert_eq!(small.cells["docs=bare/router=off"], 0.5);
        assert_eq!(small.docs.as_ref().map(|e| e.estimate), Some(0.5));
        assert_eq!(small.router.as_ref().map(|e| e.estimate), Some(0.0));
        assert_eq!(small.docs_x_router.as_ref().map(|e| e.estimate), Some(0.0));
        assert_eq!(
            f.models["large"].docs.as_ref().map(|e| e.estimate),
            Some(0.0)
        );
        let pair = &f.between_models[0];
        assert_eq!(
            (pair.first.as_str(), pair.second.as_str()),
            ("small", "large")
        );
        let docs = pair.docs.as_ref().expect("model x docs");
        assert_eq!((docs.estimate, docs.tasks), (0.5, 4));
        let ci = docs.ci95.expect("interval");
        assert!(
            ci.low <= 0.5 && 0.5 <= ci.high && ci.high > ci.low,
            "{ci:?}"
        );
        // The router contrast is 0 in every resample, but the large model's cells are at 100%
        // over four tasks: its interval is not [0-0].
        let router = pair.router.as_ref().and_then(|e| e.ci95).expect("router");
        assert!(router.low < -0.2 && router.high > 0.2, "{router:?}");
    }

    #[test]
    fn effects_of_cells_at_100_percent_are_not_certain() {
        // Every cell passes every trial: each effect is 0 in every resample, and a percentile
        // bootstrap reads [0-0], a certainty four tasks of two trials do not give.
        let f = run(&records(|_, _, _, _| true));
        let small = &f.models["small"];
        for e in [&small.docs, &small.router, &small.docs_x_router] {
            let e = e.as_ref().expect("effect");
            let ci = e.ci95.expect("interval");
            assert_eq!(e.estimate, 0.0);
            assert!(ci.low < -0.2 && ci.high > 0.2, "{ci:?}");
        }
    }

    #[test]
    fn an_interaction_is_the_difference_in_differences() {
        // Documentation helps only with the router off (T0 fails bare/off): docs effect is the
        // mean of +25 pp (off) and 0 (on), the interaction is 0 − 25 = −25 pp, and the router
        // effect is the mean of +25 pp (bare) and 0 (documented).
        let f = run(&records(|_, docs, router, task| {
            !(docs == ToolVariant::BARE && !router && task == 0)
        }));
        let m = &f.models["large"];
        assert_eq!(m.docs.as_ref().map(|e| e.estimate), Some(0.125));
        assert_eq!(m.router.as_ref().map(|e| e.estimate), Some(0.125));
        assert_eq!(m.docs_x_router.as_ref().map(|e| e.estimate), Some(-0.25));
        let pair = &f.between_models[0];
        assert_eq!(pair.docs.as_ref().map(|e| e.estimate), Some(0.0));
    }

    #[test]
    fn a_third_factor_has_its_main_effect_and_its_interactions() {
        // Under the policy everything passes; under a second prompt T0 fails with bare docs,
        // router or not. Prompt effect: mean of −25 pp (bare, twice) and 0 (documented, twice);
        // docs x prompt: +25 pp (under the strict prompt) − 0 (under the policy); the docs effect
        // is averaged over both prompts; router and its interactions stay 0.
        let strict = PromptVariant::named("strict").expect("name");
        let policy = records(|_, _, _, _| true);
        let mut all = policy.clone();
        for mut c in policy {
            c.prompt = Some(strict);
            c.verdict.passed = !(c.tool_docs == Some(ToolVariant::BARE) && c.task == "T0");
            all.push(c);
        }
        let f = run(&all);
        assert_eq!(f.prompt, [PromptVariant::POLICY, strict]);
        let m = &f.models["small"];
        assert_eq!(m.cells.len(), 8);
        assert_eq!(m.cells["prompt=strict/docs=bare/router=on"], 0.75);
        assert_eq!(m.cells["prompt=policy/docs=bare/router=on"], 1.0);
        let estimate = |e: &Option<Effect>| e.as_ref().map(|e| e.estimate);
        assert_eq!(estimate(&m.prompt), Some(-0.125));
        assert_eq!(estimate(&m.docs_x_prompt), Some(0.25));
        assert_eq!(estimate(&m.docs), Some(0.125));
        assert_eq!(estimate(&m.router), Some(0.0));
        assert_eq!(estimate(&m.router_x_prompt), Some(0.0));
        assert_eq!(estimate(&m.docs_x_router), Some(0.0));
        assert_eq!(estimate(&f.between_models[0].prompt), Some(0.0));
        assert_eq!(f.cell_names()[0], "prompt=policy/docs=bare/router=off");
    }

    #[test]
    fn a_run_that_holds_both_factors_has_no_factorial() {
        let recs = records(|_, _, _, _| true);
        let fixed: Vec<&ConversationRecord> = recs
            .iter()
            .filter(|c| c.tool_docs == Some(ToolVariant::BARE) && !c.router_in_front)
            .collect();
        assert!(factorials(&fixed, &["small".into(), "large".into()]).is_empty());
    }
}
