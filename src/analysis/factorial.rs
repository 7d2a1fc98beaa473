//! Effects of a factorial run (metrics.md, "Factorial effects"): a run that crosses tool docs
//! (bare, documented) with the router in front (off, on) gets, per model, each factor's main
//! effect on the success rate and their interaction, and, between two models, the difference of
//! each factor's effect (model x docs, model x router). Every figure is a linear contrast of cell
//! success rates, with a paired task bootstrap: one resample of the tasks all its cells share is
//! applied to every cell, drawn from [`PyRandom`](super::mt19937) at the analysis seed.

use super::AnalysisOptions;
use super::bootstrap::{Interval, ci95, for_each_resample};
use super::taxonomy::OutcomeCounts;
use crate::runner::record::{ConversationRecord, Mode};
use crate::suite::ToolVariant;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One contrast: its value on every shared task and its paired 95% interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    /// Value on all shared tasks, as a difference of success rates (0.05 = 5 pp).
    pub estimate: f64,
    /// Paired task-bootstrap interval (`None`: a cell lost all its trials in every resample).
    pub ci95: Option<Interval>,
    /// Tasks every cell of the contrast has graded trials of (those resampled).
    pub tasks: usize,
}

/// One model's factor effects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelEffects {
    /// Success rate per cell, keyed `docs=<variant>/router=<off|on>`.
    pub cells: BTreeMap<String, f64>,
    /// How each cell's conversations ended: the rate's passes and graded denominator, and the
    /// transport and protocol exclusions.
    #[serde(default)]
    pub cell_outcomes: BTreeMap<String, OutcomeCounts>,
    /// Documented − bare, averaged over the router levels played.
    pub docs: Option<Effect>,
    /// Router on − off, averaged over the tool docs variants played.
    pub router: Option<Effect>,
    /// (documented − bare with the router on) − (documented − bare with it off).
    pub docs_x_router: Option<Effect>,
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
    /// Per model, in report order.
    pub models: BTreeMap<String, ModelEffects>,
    /// Every pair of models, in report order.
    pub between_models: Vec<ModelContrast>,
}

/// A cell of the design for one model.
type Cell = (String, ToolVariant, bool);
/// Graded trials and passes per task.
type Tally = BTreeMap<String, (f64, f64)>;
/// A weighted cell in a contrast.
type Term = (Cell, f64);

/// The factorial analysis of every suite whose agent conversations crossed tool docs or router
/// levels; empty for a run that held both fixed.
pub fn factorials(
    convs: &[&ConversationRecord],
    models: &[String],
    opts: &AnalysisOptions,
) -> Vec<Factorial> {
    let suites: BTreeSet<&str> = convs.iter().map(|c| c.suite.as_str()).collect();
    suites
        .into_iter()
        .filter_map(|suite| factorial(suite, convs, models, opts))
        .collect()
}

fn factorial(
    suite: &str,
    convs: &[&ConversationRecord],
    models: &[String],
    opts: &AnalysisOptions,
) -> Option<Factorial> {
    let agent: Vec<&ConversationRecord> = convs
        .iter()
        .copied()
        .filter(|c| c.suite == suite && c.mode == Mode::Agent)
        .collect();
    let call_cap = agent.iter().map(|c| c.call_cap).max()?;
    let mut tallies: BTreeMap<Cell, Tally> = BTreeMap::new();
    let mut outcomes: BTreeMap<Cell, OutcomeCounts> = BTreeMap::new();
    for c in agent.iter().filter(|c| c.call_cap == call_cap) {
        let Some(docs) = c.tool_docs else {
            continue;
        };
        let cell = (c.model.clone(), docs, c.router_in_front);
        outcomes.entry(cell.clone()).or_default().add(c.outcome);
        if !c.outcome.is_graded() {
            continue;
        }
        let t = tallies.entry(cell).or_default().entry(c.task.clone());
        let (trials, passes) = t.or_default();
        *trials += 1.0;
        *passes += f64::from(u8::from(c.verdict.passed));
    }
    let docs: BTreeSet<ToolVariant> = tallies.keys().map(|k| k.1).collect();
    let routers: BTreeSet<bool> = tallies.keys().map(|k| k.2).collect();
    if docs.len() < 2 && routers.len() < 2 {
        return None;
    }
    let design = Design {
        docs: docs.into_iter().collect(),
        routers: routers.into_iter().collect(),
    };
    let present: Vec<&String> = models
        .iter()
        .filter(|m| tallies.keys().any(|k| &k.0 == *m))
        .collect();
    let effect = |terms: Vec<Term>| contrast(&terms, &tallies, opts);
    let per_model = present
        .iter()
        .map(|m| {
            let cells = design
                .cells()
                .filter_map(|(d, r)| {
                    let key = (m.to_string(), d, r);
                    let (trials, passes) = sums(tallies.get(&key)?);
                    Some((cell_name(d, r), passes / trials))
                })
                .collect();
            let cell_outcomes = design
                .cells()
                .filter_map(|(d, r)| {
                    let o = outcomes.get(&(m.to_string(), d, r))?;
                    Some((cell_name(d, r), o.clone()))
                })
                .collect();
            let effects = ModelEffects {
                cells,
                cell_outcomes,
                docs: design.docs_terms(m, 1.0).map(&effect),
                router: design.router_terms(m, 1.0).map(&effect),
                docs_x_router: design.interaction_terms(m).map(&effect),
            };
            (m.to_string(), effects)
        })
        .collect();
    let mut between_models = Vec::new();
    for (i, a) in present.iter().enumerate() {
        for b in &present[i + 1..] {
            let both = |f: &dyn Fn(&str, f64) -> Option<Vec<Term>>| {
                let mut terms = f(a, 1.0)?;
                terms.extend(f(b, -1.0)?);
                Some(effect(terms))
            };
            between_models.push(ModelContrast {
                first: a.to_string(),
                second: b.to_string(),
                docs: both(&|m, w| design.docs_terms(m, w)),
                router: both(&|m, w| design.router_terms(m, w)),
            });
        }
    }
    Some(Factorial {
        suite: suite.to_string(),
        call_cap,
        tool_docs: design.docs,
        router_in_front: design.routers,
        models: per_model,
        between_models,
    })
}

/// A cell's name in tables and JSON.
pub fn cell_name(docs: ToolVariant, router: bool) -> String {
    let router = if router { "on" } else { "off" };
    format!("docs={}/router={router}", docs.as_str())
}

/// The levels each factor took.
struct Design {
    docs: Vec<ToolVariant>,
    routers: Vec<bool>,
}

impl Design {
    fn cells(&self) -> impl Iterator<Item = (ToolVariant, bool)> + '_ {
        self.docs
            .iter()
            .flat_map(|&d| self.routers.iter().map(move |&r| (d, r)))
    }

    /// The two variants a docs effect compares, (baseline, treatment): with exactly two played,
    /// the later name minus the earlier (`documented` − `bare`; `documented-v2` − `documented`).
    fn two_docs(&self) -> Option<(ToolVariant, ToolVariant)> {
        match self.docs.as_slice() {
            [a, b] => Some((*a, *b)),
            _ => None,
        }
    }

    fn two_routers(&self) -> bool {
        self.routers == [false, true]
    }

    /// Treatment − baseline docs for `model`, averaged over the router levels, times `w`.
    fn docs_terms(&self, model: &str, w: f64) -> Option<Vec<Term>> {
        self.two_docs().map(|(base, treated)| {
            let share = w / self.routers.len() as f64;
            self.routers
                .iter()
                .flat_map(|&r| {
                    [
                        ((model.to_string(), treated, r), share),
                        ((model.to_string(), base, r), -share),
                    ]
                })
                .collect()
        })
    }

    /// Router on − off for `model`, averaged over the tool docs variants, times `w`.
    fn router_terms(&self, model: &str, w: f64) -> Option<Vec<Term>> {
        self.two_routers().then(|| {
            let share = w / self.docs.len() as f64;
            self.docs
                .iter()
                .flat_map(|&d| {
                    [
                        ((model.to_string(), d, true), share),
                        ((model.to_string(), d, false), -share),
                    ]
                })
                .collect()
        })
    }

    /// The docs x router difference-in-differences for `model`.
    fn interaction_terms(&self, model: &str) -> Option<Vec<Term>> {
        let (base, treated) = self.two_docs().filter(|_| self.two_routers())?;
        let cell = |d, r, w| ((model.to_string(), d, r), w);
        Some(vec![
            cell(treated, true, 1.0),
            cell(base, true, -1.0),
            cell(treated, false, -1.0),
            cell(base, false, 1.0),
        ])
    }
}

/// Trials and passes of a tally over every task.
fn sums(tally: &Tally) -> (f64, f64) {
    tally
        .values()
        .fold((0.0, 0.0), |(t, p), &(dt, dp)| (t + dt, p + dp))
}

/// The weighted sum of cell success rates over the tasks every cell shares, with its paired
/// bootstrap interval (a resample where some cell has no trial is left out).
fn contrast(terms: &[Term], tallies: &BTreeMap<Cell, Tally>, opts: &AnalysisOptions) -> Effect {
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
    // Each cell's (trials, passes) per shared task, looked up once: a resample indexes them.
    let by_task: Vec<(Vec<(f64, f64)>, f64)> = cells
        .iter()
        .map(|(tally, w)| (ids.iter().map(|id| tally[*id]).collect(), *w))
        .collect();
    let value = |positions: &[usize]| -> Option<f64> {
        by_task.iter().try_fold(0.0, |acc, (counts, w)| {
            let (trials, passes) = positions
                .iter()
                .fold((0.0, 0.0), |(t, p), &i| (t + counts[i].0, p + counts[i].1));
            (trials > 0.0).then(|| acc + w * passes / trials)
        })
    };
    let all: Vec<usize> = (0..ids.len()).collect();
    let mut draws = Vec::with_capacity(opts.resamples);
    for_each_resample(ids.len(), opts.resamples, opts.seed, |sample| {
        draws.extend(value(sample));
    });
    Effect {
        estimate: value(&all).unwrap_or(f64::NAN),
        ci95: ci95(&mut draws),
        tasks: ids.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn opts() -> AnalysisOptions {
        AnalysisOptions {
            resamples: 200,
            ..AnalysisOptions::default()
        }
    }

    /// Two models, four tasks, two trials, every cell: `pass(model, docs, router, task)` decides.
    fn records(pass: impl Fn(&str, ToolVariant, bool, usize) -> bool) -> Vec<ConversationRecord> {
        crate::analysis::fixtures::factorial_records(&["small", "large"], pass)
    }

    fn run(records: &[ConversationRecord]) -> Factorial {
        let refs: Vec<&ConversationRecord> = records.iter().collect();
        let models = vec!["small".to_string(), "large".to_string()];
        let mut all = factorials(&refs, &models, &opts());
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
        assert!(ci.low >= 0.0 && ci.high <= 1.0 && ci.low <= 0.5 && 0.5 <= ci.high);
        // The effect differs between resamples (how many of T0, T1 were drawn), so the interval
        // has width; the router contrast is 0 in every resample.
        assert!(ci.high > ci.low, "{ci:?}");
        let router = pair.router.as_ref().and_then(|e| e.ci95).expect("router");
        assert_eq!((router.low, router.high), (0.0, 0.0));
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
    fn a_run_that_holds_both_factors_has_no_factorial() {
        let recs = records(|_, _, _, _| true);
        let fixed: Vec<&ConversationRecord> = recs
            .iter()
            .filter(|c| c.tool_docs == Some(ToolVariant::BARE) && !c.router_in_front)
            .collect();
        assert!(factorials(&fixed, &["small".into(), "large".into()], &opts()).is_empty());
    }
}
