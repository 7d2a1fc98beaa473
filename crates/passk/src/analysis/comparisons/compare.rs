//! Two runs side by side (`passk compare`): refused when their grader digests differ unless the
//! caller allows it. It lists the settings that differ, then, for every configuration and model
//! both runs have, compares them on the tasks both graded only (saying how many were left out):
//! each metric of A and B, B − A with its paired task-bootstrap interval, and whether the
//! difference is measurable.

use crate::analysis::comparisons::paired_metrics::{
    DifferenceDraws, difference_intervals, excludes_zero, task_sums, verdict_level,
};
use crate::analysis::comparisons::settings_diff::{
    NOISE_MAY_DIFFER, SettingDifference, setting_differences,
};
use crate::analysis::intervals::bootstrap::{IdTotals, Interval};
use crate::analysis::intervals::interval;
use crate::analysis::{
    AnalysisOptions, GroupSummary, ModelSummary, RecordsError, Run, Summary, summarize,
};
use crate::domain::{PromptVariant, ToolVariant};
use crate::runner::record::{ConversationRecord, Manifest, Mode};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One metric in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricPair {
    /// Metric name (as in `docs/reference/metrics.md`).
    pub metric: String,
    /// Value in run A.
    pub a: Option<f64>,
    /// Value in run B.
    pub b: Option<f64>,
    /// Paired task-bootstrap 95% interval of B − A over the shared tasks (for `success_rate`,
    /// `success_rate_difference_ci95`, which keeps its coverage at the boundary and on few tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference_ci95: Option<Interval>,
    /// The paired interval of B − A at the level "measurable" reads (`verdict_level`: Bonferroni
    /// over the metrics compared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict_ci: Option<Interval>,
    /// Two-sided level of `verdict_ci`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict_level: Option<f64>,
    /// Resamples in which one run never passed and the other did, so that a per-success
    /// difference was ±∞ (kept in the intervals).
    #[serde(default)]
    pub infinite_resamples: usize,
    /// Run-to-run difference of this metric between two runs of A's configuration (|A' − A|),
    /// when a noise run was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_band: Option<f64>,
    /// `verdict_ci` excludes 0 and, with a noise run, |B − A| exceeds the noise band (`None` when
    /// a value or the interval is missing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurable: Option<bool>,
    /// Why the metric is never called measurable between these runs, when it is not: a timing
    /// metric of two runs played at different times ([`PLAYED_APART`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_comparable: Option<String>,
}

/// The metrics that depend on the machine's speed at the time a run was played.
pub const TIMING_METRICS: [&str; 4] = [
    "latency_per_call_s",
    "conversation_latency_p50_s",
    "conversation_latency_p95_s",
    "time_per_success_s",
];

/// Why a timing difference between two runs is not called measurable: a machine's speed drifts
/// between runs as a whole, which a task bootstrap cannot see.
pub const PLAYED_APART: &str = "played at different times";

impl MetricPair {
    /// A metric with no value, interval or verdict yet.
    fn empty() -> MetricPair {
        MetricPair {
            metric: String::new(),
            a: None,
            b: None,
            difference_ci95: None,
            verdict_ci: None,
            verdict_level: None,
            infinite_resamples: 0,
            noise_band: None,
            measurable: None,
            not_comparable: None,
        }
    }

    /// A timing metric of two separately played runs is never measurable: the whole machine's
    /// speed differs between them (measured: metrics.md "Comparing two runs").
    fn played_apart(mut self) -> MetricPair {
        if TIMING_METRICS.contains(&self.metric.as_str()) {
            self.not_comparable = Some(PLAYED_APART.into());
            self.measurable = self.measurable.map(|_| false);
        }
        self
    }

    /// Sets the intervals of B − A and the verdict of the interval rule, judged at `level`.
    fn with_interval(mut self, draws: Option<DifferenceDraws>, level: f64) -> MetricPair {
        self.difference_ci95 = draws.and_then(|d| d.ci95);
        self.verdict_ci = draws.and_then(|d| d.verdict_ci);
        self.verdict_level = Some(level);
        self.infinite_resamples = draws.map_or(0, |d| d.infinite);
        self.measurable = self
            .verdict_ci
            .filter(|_| self.a.is_some() && self.b.is_some())
            .map(|i| excludes_zero(&i));
        self
    }

    /// Sets the noise band from the same metric measured in a second run of A's configuration; a
    /// difference no larger than the band is not measurable, whatever its interval.
    fn with_noise(mut self, again: Option<&MetricPair>) -> MetricPair {
        if let Some(band) = again.and_then(|n| Some((n.b? - n.a?).abs())) {
            self.noise_band = Some(band);
            let beyond = self.a.zip(self.b).map(|(a, b)| (b - a).abs() > band);
            self.measurable = match (self.measurable, beyond) {
                (Some(m), Some(b)) => Some(m && b),
                _ => None,
            };
        }
        self
    }
}

/// One model of one configuration in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelComparison {
    /// Tasks both runs graded for this model: every metric is over these only.
    pub shared_tasks: usize,
    /// Tasks only run A graded (left out).
    #[serde(default)]
    pub tasks_only_in_a: usize,
    /// Tasks only run B graded (left out).
    #[serde(default)]
    pub tasks_only_in_b: usize,
    /// Run A's conversations on the shared tasks, with their exclusions (`n = 9 of 10; 1
    /// transport`): the denominator of every metric below.
    #[serde(default)]
    pub conversations_a: String,
    /// Run B's conversations on the shared tasks, with their exclusions.
    #[serde(default)]
    pub conversations_b: String,
    /// Run A's conversations of this configuration and model left out (their task only A ran).
    #[serde(default)]
    pub conversations_left_out_a: usize,
    /// Run B's conversations left out (their task only B ran).
    #[serde(default)]
    pub conversations_left_out_b: usize,
    /// Success rate of B minus A, on the shared tasks.
    pub success_rate_difference: Option<f64>,
    /// 95% CI of that difference: the two runs' rate intervals combined with their correlation
    /// over the shared tasks (`interval::paired_gap`; metrics.md, "Intervals at the boundary").
    pub success_rate_difference_ci95: Option<Interval>,
    /// Main metrics side by side, over the shared tasks.
    pub metrics: Vec<MetricPair>,
}

/// The comparison of two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunComparison {
    /// Run id of A.
    pub run_a: String,
    /// Run id of B.
    pub run_b: String,
    /// Run id of the second run of A's configuration that set the noise bands, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_run: Option<String>,
    /// The runs were graded by different graders (allowed by the caller): say so at the top.
    pub different_graders: bool,
    /// Every setting that differs between the two manifests.
    #[serde(default)]
    pub setting_differences: Vec<SettingDifference>,
    /// Bootstrap resamples.
    pub resamples: usize,
    /// By configuration, then model.
    pub groups: BTreeMap<String, BTreeMap<String, ModelComparison>>,
    /// Summary of A (all its records; the metrics above use the shared tasks only).
    pub summary_a: Summary,
    /// Summary of B.
    pub summary_b: Summary,
}

/// Reads one metric of a model summary.
type Getter = fn(&ModelSummary) -> Option<f64>;

fn metrics(a: &ModelSummary, b: &ModelSummary) -> Vec<MetricPair> {
    let k = a.trials_per_task.min(b.trials_per_task);
    let rows: Vec<(String, Getter)> = vec![
        ("success_rate".into(), |s| s.success_rate),
        ("model_calls_per_conversation".into(), |s| {
            s.behaviour.model_calls_per_conversation
        }),
        ("rejected_calls_per_conversation".into(), |s| {
            s.behaviour.rejected_calls_per_conversation
        }),
        ("identify_first_rate".into(), |s| {
            s.behaviour.identify_first.map(|r| r.rate)
        }),
        ("blended_tokens_per_conversation".into(), |s| {
            s.tokens.blended_per_conversation
        }),
        ("blended_tokens_per_success".into(), |s| {
            s.tokens.blended_per_success
        }),
        ("cached_blended_tokens_per_success".into(), |s| {
            s.tokens.cached_blended_per_success
        }),
        ("latency_per_call_s".into(), |s| s.latency.per_call_mean_s),
        ("conversation_latency_p50_s".into(), |s| {
            s.latency.conversation_p50_s
        }),
        ("conversation_latency_p95_s".into(), |s| {
            s.latency.conversation_p95_s
        }),
        ("time_per_success_s".into(), |s| {
            s.latency.time_per_success_s
        }),
        ("noise_mean".into(), |s| s.noise.mean),
    ];
    let mut out: Vec<MetricPair> = rows
        .into_iter()
        .map(|(metric, f)| MetricPair {
            metric,
            a: f(a),
            b: f(b),
            ..MetricPair::empty()
        })
        .collect();
    if k > 0 {
        out.insert(
            1,
            MetricPair {
                metric: format!("pass^{k}"),
                a: a.pass_hat_k.get(&k).copied(),
                b: b.pass_hat_k.get(&k).copied(),
                ..MetricPair::empty()
            },
        );
    }
    out
}

/// The records of one configuration (suite, mode, call cap) and model.
fn of_group<'r>(
    records: &'r [ConversationRecord],
    group: &'r GroupSummary,
    model: &'r str,
) -> impl Iterator<Item = &'r ConversationRecord> {
    records
        .iter()
        .filter(move |c| c.model == model && group.holds(c))
}

/// Per task trials and passes of one configuration (suite, mode, call cap) and model.
fn task_totals(
    records: &[ConversationRecord],
    group: &GroupSummary,
    model: &str,
) -> BTreeMap<String, IdTotals> {
    let mut out: BTreeMap<String, IdTotals> = BTreeMap::new();
    for c in of_group(records, group, model).filter(|c| c.outcome.is_graded()) {
        let t = out.entry(c.task.clone()).or_default();
        t.trials += 1.0;
        t.passes += f64::from(u8::from(c.verdict.passed));
    }
    out
}

/// Identity of a task within a configuration (suite, mode, call cap, tool docs, router, prompt)
/// and model, as a record carries it.
type TaskKey = (
    String,
    u8,
    u32,
    Option<ToolVariant>,
    Option<bool>,
    Option<PromptVariant>,
    String,
    String,
);

/// Which factors a run's agent records vary, so that its configurations name them (as the
/// summary's group keys do): (tool docs, router in front, prompt).
fn varied(records: &[ConversationRecord]) -> (bool, bool, bool) {
    let agent = || records.iter().filter(|c| c.mode == Mode::Agent);
    let docs: BTreeSet<Option<ToolVariant>> = agent().map(|c| c.tool_docs).collect();
    let routers: BTreeSet<bool> = agent().map(|c| c.router_in_front).collect();
    let prompts: BTreeSet<PromptVariant> =
        agent().map(ConversationRecord::prompt_variant).collect();
    (docs.len() > 1, routers.len() > 1, prompts.len() > 1)
}

/// A record's task key; tool docs and router count only where the run varied them (a run of bare
/// docs compared with one of documented docs compares the same tasks; the cells of a factorial
/// run are configurations of their own).
fn task_key(c: &ConversationRecord, (docs, router, prompt): (bool, bool, bool)) -> TaskKey {
    let factorial = c.mode == Mode::Agent;
    (
        c.suite.clone(),
        c.mode as u8,
        c.call_cap,
        c.tool_docs.filter(|_| docs && factorial),
        (router && factorial).then_some(c.router_in_front),
        (prompt && factorial).then(|| c.prompt_variant()),
        c.model.clone(),
        c.task.clone(),
    )
}

/// The records of `a` and of `b` whose (configuration, model, task) both runs graded at least
/// once: a difference over different task sets would measure the sets, not the runs.
fn shared_tasks_only(
    a: &[ConversationRecord],
    b: &[ConversationRecord],
) -> (Vec<ConversationRecord>, Vec<ConversationRecord>) {
    let (va, vb) = (varied(a), varied(b));
    let graded = |r: &[ConversationRecord], v| -> BTreeSet<TaskKey> {
        r.iter()
            .filter(|c| c.outcome.is_graded())
            .map(|c| task_key(c, v))
            .collect()
    };
    let (ga, gb) = (graded(a, va), graded(b, vb));
    let keep = |r: &[ConversationRecord], v| -> Vec<ConversationRecord> {
        r.iter()
            .filter(|c| {
                let k = task_key(c, v);
                ga.contains(&k) && gb.contains(&k)
            })
            .cloned()
            .collect()
    };
    (keep(a, va), keep(b, vb))
}

/// Two runs' summaries over the tasks both graded, with those records.
struct Paired {
    a: Summary,
    b: Summary,
    records_a: Vec<ConversationRecord>,
    records_b: Vec<ConversationRecord>,
}

/// The summary of `records` of `run` by what its own manifest records (the example values its
/// tools documented, which reading it for the statistics kept the matching arguments of, and its
/// tasks without tools) and everything else by `opts`.
fn summary_of(run: &Run, records: &[ConversationRecord], opts: &AnalysisOptions) -> Summary {
    let own = AnalysisOptions::for_manifest(&run.manifest);
    let opts = AnalysisOptions {
        example_values: own.example_values,
        toolless_tasks: own.toolless_tasks,
        ..opts.clone()
    };
    summarize(&run.manifest, records, &run.router, &opts)
}

fn paired_summaries(a: &Run, b: &Run, opts: &AnalysisOptions) -> Paired {
    let (records_a, records_b) = shared_tasks_only(&a.conversations, &b.conversations);
    Paired {
        a: summary_of(a, &records_a, opts),
        b: summary_of(b, &records_b, opts),
        records_a,
        records_b,
    }
}

/// The metrics of one configuration and model in two runs over their shared tasks, each with
/// the paired interval of its difference; `None` when either run lacks them.
fn paired_metrics(
    p: &Paired,
    key: &str,
    model: &str,
    opts: &AnalysisOptions,
) -> Option<Vec<MetricPair>> {
    let (ga, gb) = (p.a.groups.get(key)?, p.b.groups.get(key)?);
    let (ma, mb) = (ga.models.get(model)?, gb.models.get(model)?);
    let pairs = metrics(ma, mb);
    let names: Vec<String> = pairs.iter().map(|m| m.metric.clone()).collect();
    let k = ma.trials_per_task.min(mb.trials_per_task);
    let sa = task_sums(of_group(&p.records_a, ga, model), opts.output_weight);
    let sb = task_sums(of_group(&p.records_b, gb, model), opts.output_weight);
    let mut draws = difference_intervals(&names, &sa, &sb, k, opts.resamples, opts.seed);
    let level = verdict_level(names.len());
    Some(
        pairs
            .into_iter()
            .map(|m| {
                let d = draws.remove(&m.metric);
                m.with_interval(d, level).played_apart()
            })
            .collect(),
    )
}

/// Compares run A (the baseline) with run B; refuses different grader digests unless
/// `allow_different_graders`. Each run's example copies and tasks without tools are its own
/// manifest's; every other setting is `opts`'.
pub fn compare(
    a: &Run,
    b: &Run,
    opts: &AnalysisOptions,
    allow_different_graders: bool,
) -> Result<RunComparison, RecordsError> {
    compare_with_noise(a, b, None, opts, allow_different_graders)
}

/// How the graders of two runs differ, over the suites both played: each file (or grading source)
/// of a shared suite that moved. Runs written before per-suite graders compare their one digest.
pub fn grader_differences(a: &Manifest, b: &Manifest) -> Vec<String> {
    if a.graders.is_empty() || b.graders.is_empty() {
        return if a.grader_digest == b.grader_digest {
            Vec::new()
        } else {
            vec![format!(
                "grader digest {} vs {} (a run written before per-suite graders: one digest \
                 for every suite)",
                a.grader_digest, b.grader_digest
            )]
        };
    }
    a.graders
        .iter()
        .filter_map(|(suite, pa)| Some((suite, pa, b.graders.get(suite)?)))
        .flat_map(|(suite, pa, pb)| pa.changes_to(suite, pb))
        .map(|c| c.to_string())
        .collect()
}

/// Refuses a noise run that is not a second run of A's configuration: other graders, or any
/// setting but the base seed changed.
fn check_noise_run(a: &Run, n: &Run) -> Result<(), RecordsError> {
    let differences = grader_differences(&a.manifest, &n.manifest);
    if !differences.is_empty() {
        return Err(RecordsError::DifferentGraders { differences });
    }
    let differ: Vec<String> = setting_differences(&a.manifest, &n.manifest)
        .into_iter()
        .filter(|d| d.setting != NOISE_MAY_DIFFER)
        .map(|d| d.setting)
        .collect();
    if differ.is_empty() {
        Ok(())
    } else {
        Err(RecordsError::NoiseRunDiffers {
            settings: differ.join(", "),
        })
    }
}

/// As [`compare`], with `noise`: a second run of A's configuration (another base seed, nothing
/// else changed, else refused). Each metric's run-to-run difference |A' − A| becomes its noise
/// band, and a B − A difference no larger than the band is not measurable.
pub fn compare_with_noise(
    a: &Run,
    b: &Run,
    noise: Option<&Run>,
    opts: &AnalysisOptions,
    allow_different_graders: bool,
) -> Result<RunComparison, RecordsError> {
    if let Some(n) = noise {
        check_noise_run(a, n)?;
    }
    let differences = grader_differences(&a.manifest, &b.manifest);
    let different = !differences.is_empty();
    if different && !allow_different_graders {
        return Err(RecordsError::DifferentGraders { differences });
    }
    let sa = summary_of(a, &a.conversations, opts);
    let sb = summary_of(b, &b.conversations, opts);
    let pair = paired_summaries(a, b, opts);
    let again = noise.map(|n| paired_summaries(a, n, opts));
    let mut groups = BTreeMap::new();
    for (key, ga) in &sa.groups {
        let Some(gb) = sb.groups.get(key) else {
            continue;
        };
        let mut models = BTreeMap::new();
        for model in ga.models.keys().filter(|m| gb.models.contains_key(*m)) {
            let Some(metrics) = paired_metrics(&pair, key, model, opts) else {
                continue;
            };
            let band = again
                .as_ref()
                .and_then(|p| paired_metrics(p, key, model, opts));
            let metrics = metrics
                .into_iter()
                .map(|p| {
                    let n = band
                        .as_ref()
                        .and_then(|v| v.iter().find(|x| x.metric == p.metric));
                    p.with_noise(n)
                })
                .collect();
            let mut m = model_comparison(a, b, ga, gb, model, metrics);
            m.count_conversations(&pair, (ga, gb), key, model);
            models.insert(model.clone(), m);
        }
        groups.insert(key.clone(), models);
    }
    Ok(RunComparison {
        run_a: a.manifest.run_id.clone(),
        run_b: b.manifest.run_id.clone(),
        noise_run: noise.map(|n| n.manifest.run_id.clone()),
        different_graders: different,
        setting_differences: setting_differences(&a.manifest, &b.manifest),
        resamples: opts.resamples,
        groups,
        summary_a: sa,
        summary_b: sb,
    })
}

/// One model of one configuration: the success-rate difference over the shared tasks with its
/// interval, the tasks left out, and the metrics.
fn model_comparison(
    a: &Run,
    b: &Run,
    ga: &GroupSummary,
    gb: &GroupSummary,
    model: &str,
    metrics: Vec<MetricPair>,
) -> ModelComparison {
    let ta = task_totals(&a.conversations, ga, model);
    let tb = task_totals(&b.conversations, gb, model);
    let shared: Vec<&String> = ta.keys().filter(|k| tb.contains_key(*k)).collect();
    let sum = |t: &BTreeMap<String, IdTotals>| {
        shared
            .iter()
            .fold((0.0, 0.0), |(n, p), k| (n + t[*k].trials, p + t[*k].passes))
    };
    let ((na, pa), (nb, pb)) = (sum(&ta), sum(&tb));
    let gap = interval::paired_gap(&ta, &tb);
    let metrics = metrics
        .into_iter()
        .map(|mut m| {
            if m.metric == "success_rate" {
                m.difference_ci95 = gap;
            }
            m
        })
        .collect();
    ModelComparison {
        shared_tasks: shared.len(),
        tasks_only_in_a: ta.len() - shared.len(),
        tasks_only_in_b: tb.len() - shared.len(),
        success_rate_difference: (na > 0.0 && nb > 0.0).then(|| pb / nb - pa / na),
        success_rate_difference_ci95: gap,
        metrics,
        conversations_a: String::new(),
        conversations_b: String::new(),
        conversations_left_out_a: 0,
        conversations_left_out_b: 0,
    }
}

impl ModelComparison {
    /// Sets the conversations the metrics cover (those on the shared tasks, from the paired
    /// summaries) and how many of each full run's conversations were left out.
    fn count_conversations(
        &mut self,
        p: &Paired,
        (full_a, full_b): (&GroupSummary, &GroupSummary),
        key: &str,
        model: &str,
    ) {
        let total = |g: &GroupSummary| g.models.get(model).map_or(0, |m| m.outcomes.total);
        let sa = p.a.groups.get(key).and_then(|g| g.models.get(model));
        let sb = p.b.groups.get(key).and_then(|g| g.models.get(model));
        let note =
            |m: Option<&ModelSummary>| m.map_or("n = 0".into(), |m| m.denominator_note.clone());
        let count = |m: Option<&ModelSummary>| m.map_or(0, |m| m.outcomes.total);
        self.conversations_a = note(sa);
        self.conversations_b = note(sb);
        self.conversations_left_out_a = total(full_a).saturating_sub(count(sa));
        self.conversations_left_out_b = total(full_b).saturating_sub(count(sb));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{call, conversation};

    fn run(digest: &str, passes: &[bool]) -> Run {
        let conversations = passes
            .iter()
            .enumerate()
            .map(|(i, p)| {
                conversation("m", &format!("L{}", i % 2), i as u32, *p, vec![call(10, 1)])
            })
            .collect();
        let manifest = Manifest {
            run_id: digest.into(),
            grader_digest: digest.into(),
            ..Manifest::default()
        };
        Run::of_records("r".into(), manifest, conversations, vec![])
    }

    #[test]
    fn each_run_counts_example_copies_against_the_examples_it_documented() {
        let with_copy = |documented: &str, copied: &str| {
            let mut r = run("g", &[true, true]);
            r.manifest.example_values = vec![documented.into()];
            for c in &mut r.conversations {
                c.tool_docs = Some(crate::domain::ToolVariant::DOCUMENTED);
                let args = serde_json::json!({ "order_id": copied });
                c.tool_events = vec![crate::analysis::fixtures::event("get_order", args, true)];
            }
            r
        };
        let (a, b) = (with_copy("9001", "9001"), with_copy("9002", "9002"));
        let opts = AnalysisOptions {
            resamples: 10,
            ..AnalysisOptions::for_manifest(&a.manifest)
        };
        let c = compare(&a, &b, &opts, false).unwrap();
        let copies = |s: &Summary| {
            s.groups
                .values()
                .flat_map(|g| g.models.values())
                .map(|m| m.behaviour.example_copy.calls)
                .sum::<usize>()
        };
        assert_eq!((copies(&c.summary_a), copies(&c.summary_b)), (2, 2));
    }

    #[test]
    fn refuses_different_graders_unless_allowed() {
        let opts = AnalysisOptions {
            resamples: 50,
            ..AnalysisOptions::default()
        };
        let (a, b) = (run("g1", &[true, false]), run("g2", &[true, true]));
        assert!(matches!(
            compare(&a, &b, &opts, false),
            Err(RecordsError::DifferentGraders { .. })
        ));
        let c = compare(&a, &b, &opts, true).unwrap();
        assert!(c.different_graders);
        let m = &c.groups["store"]["m"];
        assert_eq!(m.shared_tasks, 2);
        assert_eq!(m.success_rate_difference, Some(0.5));
        let ci = m.success_rate_difference_ci95.unwrap();
        assert!(ci.low <= 0.5 && 0.5 <= ci.high && ci.high <= 1.0, "{ci:?}");
        let sr = m
            .metrics
            .iter()
            .find(|x| x.metric == "success_rate")
            .unwrap();
        assert_eq!((sr.a, sr.b), (Some(0.5), Some(1.0)));
        // Two tasks: a resample drawing the one that did not change twice gives 0.
        assert!(sr.difference_ci95.is_some());
        assert_eq!(sr.measurable, Some(false), "the interval includes 0");
    }

    #[test]
    fn the_baseline_and_the_agent_are_compared_apart() {
        use crate::runner::record::Mode;
        let opts = AnalysisOptions {
            resamples: 20,
            ..AnalysisOptions::default()
        };
        let with_baseline = |agent: &[bool], toolless: &[bool]| {
            let mut r = run("g", agent);
            let extra: Vec<_> = run("g", toolless)
                .conversations
                .into_iter()
                .map(|mut c| {
                    c.mode = Mode::Toolless;
                    c
                })
                .collect();
            r.conversations.extend(extra);
            r
        };
        let a = with_baseline(&[true, true], &[false, false]);
        let b = with_baseline(&[true, true], &[true, true]);
        let c = compare(&a, &b, &opts, false).unwrap();
        let diff = |g: &str| c.groups[g]["m"].success_rate_difference;
        assert_eq!(diff("store"), Some(0.0), "the agent did not move");
        let toolless = c
            .groups
            .keys()
            .find(|k| k.contains("toolless"))
            .unwrap()
            .clone();
        assert_eq!(diff(&toolless), Some(1.0), "the baseline did");
    }

    /// A run of one model over tasks T0.. with these trials per task, and this base seed.
    fn run_tasks(seed: u32, tasks: &[[bool; 2]]) -> Run {
        let mut r = run("g", &[]);
        r.manifest.settings = serde_json::json!({"base_seed": seed, "trials": 2});
        for (t, trials) in tasks.iter().enumerate() {
            for (i, p) in trials.iter().enumerate() {
                let c = conversation("m", &format!("T{t}"), i as u32, *p, vec![call(10, 1)]);
                r.conversations.push(c);
            }
        }
        r
    }

    #[test]
    fn two_runs_at_100_percent_do_not_claim_a_certain_difference() {
        // 15 tasks of 2 trials, every trial passed in both runs: each resample's difference is
        // 0, and a percentile bootstrap reads [0-0].
        let opts = AnalysisOptions {
            resamples: 200,
            ..AnalysisOptions::default()
        };
        let all = [[true, true]; 15];
        let c = compare(&run_tasks(1, &all), &run_tasks(2, &all), &opts, false).unwrap();
        let m = &c.groups["store"]["m"];
        let ci = m.success_rate_difference_ci95.unwrap();
        assert!(ci.low < -0.1 && ci.high > 0.1, "{ci:?}");
        let sr = metric(&c, "success_rate");
        assert_eq!(sr.difference_ci95, Some(ci));
        assert_eq!(sr.measurable, Some(false));
    }

    fn metric(c: &RunComparison, name: &str) -> MetricPair {
        c.groups["store"]["m"]
            .metrics
            .iter()
            .find(|x| x.metric == name)
            .cloned()
            .unwrap()
    }

    #[test]
    fn a_run_played_on_a_slower_machine_is_not_a_measurable_timing_difference() {
        let opts = AnalysisOptions {
            resamples: 400,
            ..AnalysisOptions::default()
        };
        let half = [true, false];
        let timed = |mut r: Run, wall: f64| {
            for c in &mut r.conversations {
                c.calls
                    .iter_mut()
                    .for_each(|x| x.wall_s = Some(wall).into());
            }
            r
        };
        let a = timed(run_tasks(0, &[half; 8]), 1.0);
        // Played later on a machine 30% slower; every task passes.
        let b = timed(run_tasks(1, &[[true, true]; 8]), 1.3);
        let c = compare(&a, &b, &opts, false).unwrap();
        for name in TIMING_METRICS {
            let m = metric(&c, name);
            assert_eq!(m.not_comparable.as_deref(), Some(PLAYED_APART), "{name}");
            assert_ne!(m.measurable, Some(true), "{name}");
        }
        // What does not depend on the clock is still judged.
        let rate = metric(&c, "success_rate");
        assert_eq!((rate.measurable, rate.not_comparable), (Some(true), None));
    }

    #[test]
    fn differences_inside_the_noise_band_are_not_measurable() {
        let opts = AnalysisOptions {
            resamples: 400,
            ..AnalysisOptions::default()
        };
        let half = [true, false];
        let a = run_tasks(0, &[half; 8]);
        // A second run of A's configuration: one more pass, a band of 1/16.
        let mut tasks = [half; 8];
        tasks[0] = [true, true];
        let again = run_tasks(1, &tasks);
        let small = run_tasks(0, &tasks);
        let large = run_tasks(0, &[[true, true]; 8]);
        let c = compare_with_noise(&a, &small, Some(&again), &opts, false).unwrap();
        let rate = metric(&c, "success_rate");
        assert_eq!(
            (rate.noise_band, rate.measurable),
            (Some(0.0625), Some(false))
        );
        let c = compare_with_noise(&a, &large, Some(&again), &opts, false).unwrap();
        assert_eq!(metric(&c, "success_rate").measurable, Some(true));
        assert_eq!(metric(&c, "pass^2").measurable, Some(true));
        let other = run("g2", &[true]);
        assert!(compare_with_noise(&a, &large, Some(&other), &opts, false).is_err());
    }

    #[test]
    fn a_noise_run_may_change_the_base_seed_and_nothing_else() {
        let opts = AnalysisOptions {
            resamples: 20,
            ..AnalysisOptions::default()
        };
        let a = run_tasks(0, &[[true, false]; 2]);
        let mut other = run_tasks(7, &[[true, false]; 2]);
        assert!(compare_with_noise(&a, &a, Some(&other), &opts, false).is_ok());
        other.manifest.settings["trials"] = serde_json::json!(3);
        let err = compare_with_noise(&a, &a, Some(&other), &opts, false).unwrap_err();
        assert!(
            matches!(&err, RecordsError::NoiseRunDiffers { settings } if settings == "settings.trials"),
            "{err}"
        );
        // Compare itself lists what differs, at the top.
        let c = compare(&a, &other, &opts, false).unwrap();
        let names: Vec<&str> = c
            .setting_differences
            .iter()
            .map(|d| d.setting.as_str())
            .collect();
        assert_eq!(names, ["settings.base_seed", "settings.trials"]);
    }

    #[test]
    fn metrics_are_paired_on_the_shared_tasks() {
        let opts = AnalysisOptions {
            resamples: 50,
            ..AnalysisOptions::default()
        };
        // A ran four tasks, B only the two that A passed: on those, nothing changed.
        let a = run_tasks(
            0,
            &[[true, true], [true, true], [false, false], [false, false]],
        );
        let b = run_tasks(0, &[[true, true], [true, true]]);
        let c = compare(&a, &b, &opts, false).unwrap();
        let m = &c.groups["store"]["m"];
        assert_eq!(
            (m.shared_tasks, m.tasks_only_in_a, m.tasks_only_in_b),
            (2, 2, 0)
        );
        for name in ["success_rate", "pass^2"] {
            let p = metric(&c, name);
            assert_eq!((p.a, p.b), (Some(1.0), Some(1.0)), "{name}");
            assert_eq!(p.measurable, Some(false), "{name}");
        }
    }

    #[test]
    fn replicates_of_one_configuration_are_not_measurable_on_at_least_95_percent_of_metrics() {
        // Simulated replicates (fixed seed) differ by chance only: every "measurable" is a false
        // positive. The target is at least 95% "not measurable", with and without a noise run;
        // the Bonferroni rule keeps well clear of it (the bench measures it on more comparisons).
        let opts = AnalysisOptions {
            resamples: 500,
            ..AnalysisOptions::default()
        };
        let runs = crate::analysis::planning::replicates::comparisons(12, 5, &opts);
        let share = |pick: fn(
            &crate::analysis::planning::replicates::ReplicateComparison,
        ) -> &RunComparison,
                     rule: fn(&MetricPair) -> Option<bool>| {
            let (y, n) = runs
                .iter()
                .map(|r| crate::analysis::planning::replicates::verdicts(pick(r), rule))
                .fold((0, 0), |(y, n), (a, b)| (y + a, n + b));
            assert_eq!(n, runs.len() * 13, "every metric judged");
            1.0 - y as f64 / n as f64
        };
        let plain = share(|r| &r.plain, |p| p.measurable);
        let noise = share(|r| &r.with_noise, |p| p.measurable);
        assert!(plain >= 0.97, "not measurable without a noise run: {plain}");
        assert!(noise >= plain, "a noise run only removes verdicts: {noise}");
        // The 95% interval alone, judged on the same replicates, is the rule that missed.
        let at_95 = share(
            |r| &r.plain,
            |p| Some(excludes_zero(p.difference_ci95.as_ref()?)),
        );
        assert!(
            at_95 < plain,
            "the 95% interval calls more: {at_95} vs {plain}"
        );
    }

    #[test]
    fn a_factorial_cell_shares_only_the_tasks_both_runs_graded_in_that_cell() {
        use crate::analysis::fixtures::factorial_records;
        use crate::domain::ToolVariant;
        const BARE: ToolVariant = ToolVariant::BARE;
        const DOCUMENTED: ToolVariant = ToolVariant::DOCUMENTED;
        let opts = AnalysisOptions {
            resamples: 50,
            ..AnalysisOptions::default()
        };
        let with = |records: Vec<ConversationRecord>| Run {
            conversations: records,
            ..run("g", &[])
        };
        // A: T1 fails under bare docs and was never played documented. B: T1 only documented.
        let a = factorial_records(&["m"], |_, docs, _, task| !(docs == BARE && task == 1))
            .into_iter()
            .filter(|c| !c.router_in_front && (c.task != "T1" || c.tool_docs != Some(DOCUMENTED)))
            .collect();
        let b = factorial_records(&["m"], |_, _, _, _| true)
            .into_iter()
            .filter(|c| !c.router_in_front && (c.task != "T1" || c.tool_docs != Some(BARE)))
            .collect();
        let c = compare(&with(a), &with(b), &opts, false).unwrap();
        let (key, models) = c
            .groups
            .iter()
            .find(|(k, _)| k.contains("docs=bare"))
            .expect("the bare cell");
        let m = &models["m"];
        assert_eq!((m.shared_tasks, m.tasks_only_in_a), (3, 1), "{key}");
        let rate = m
            .metrics
            .iter()
            .find(|p| p.metric == "success_rate")
            .unwrap();
        assert_eq!(
            (rate.a, rate.b),
            (Some(1.0), Some(1.0)),
            "T1 is not shared in {key}"
        );
        assert_eq!(m.conversations_a, "n = 6");
        assert_eq!(m.conversations_left_out_a, 2);
    }
}
