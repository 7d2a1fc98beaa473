//! Two runs side by side (`passk compare`): refused when their grader digests differ unless the
//! caller allows it; for every configuration and model both runs have, the main metrics of each
//! and the paired bootstrap CI of the difference in success rate over the tasks both ran.

use super::bootstrap::{IdTotals, Interval, difference_bootstrap};
use super::{AnalysisError, AnalysisOptions, ModelSummary, Run, Summary, summarize};
use crate::runner::record::ConversationRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One metric in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricPair {
    /// Metric name (as in `docs/metrics.md`).
    pub metric: String,
    /// Value in run A.
    pub a: Option<f64>,
    /// Value in run B.
    pub b: Option<f64>,
    /// Run-to-run difference of this metric between two runs of A's configuration (|A' − A|),
    /// when a noise run was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_band: Option<f64>,
    /// Whether |B − A| exceeds the noise band (`None` without a noise run, or a value missing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurable: Option<bool>,
}

impl MetricPair {
    /// Sets the noise band from the same metric measured in a second run of A's configuration.
    fn with_noise(mut self, again: Option<&MetricPair>) -> MetricPair {
        if let Some(band) = again.and_then(|n| Some((n.b? - n.a?).abs())) {
            self.noise_band = Some(band);
            self.measurable = self.a.zip(self.b).map(|(a, b)| (b - a).abs() > band);
        }
        self
    }
}

/// One model of one configuration in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelComparison {
    /// Tasks both runs graded for this model.
    pub shared_tasks: usize,
    /// Success rate of B minus A, on the shared tasks.
    pub success_rate_difference: Option<f64>,
    /// Paired bootstrap 95% CI of that difference (same task resample for both runs).
    pub success_rate_difference_ci95: Option<Interval>,
    /// Main metrics side by side.
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
    /// Bootstrap resamples.
    pub resamples: usize,
    /// By configuration, then model.
    pub groups: BTreeMap<String, BTreeMap<String, ModelComparison>>,
    /// Summary of A.
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
            noise_band: None,
            measurable: None,
        })
        .collect();
    if k > 0 {
        out.insert(
            1,
            MetricPair {
                metric: format!("pass^{k}"),
                a: a.pass_hat_k.get(&k).copied(),
                b: b.pass_hat_k.get(&k).copied(),
                noise_band: None,
                measurable: None,
            },
        );
    }
    out
}

/// Per task trials and passes of one configuration (suite, mode, call cap) and model.
fn task_totals(
    records: &[ConversationRecord],
    group: &super::GroupSummary,
    model: &str,
) -> BTreeMap<String, IdTotals> {
    let mut out: BTreeMap<String, IdTotals> = BTreeMap::new();
    for c in records.iter().filter(|c| {
        c.suite == group.suite
            && c.mode == group.mode
            && c.model == model
            && c.outcome.is_graded()
            && group.call_cap.is_none_or(|n| n == c.call_cap)
    }) {
        let t = out.entry(c.task.clone()).or_default();
        t.trials += 1.0;
        t.passes += f64::from(u8::from(c.verdict.passed));
    }
    out
}

/// Compares run A (the baseline) with run B; refuses different grader digests unless
/// `allow_different_graders`.
pub fn compare(
    a: &Run,
    b: &Run,
    opts: &AnalysisOptions,
    allow_different_graders: bool,
) -> Result<RunComparison, AnalysisError> {
    compare_with_noise(a, b, None, opts, allow_different_graders)
}

/// As [`compare`], with `noise`: a second run of A's configuration (another base seed). Each
/// metric's run-to-run difference |A' − A| becomes its noise band, and a B − A difference no larger
/// than the band is marked not measurable (seed 003). The noise run must share A's graders.
pub fn compare_with_noise(
    a: &Run,
    b: &Run,
    noise: Option<&Run>,
    opts: &AnalysisOptions,
    allow_different_graders: bool,
) -> Result<RunComparison, AnalysisError> {
    if let Some(n) = noise
        && n.manifest.grader_digest != a.manifest.grader_digest
    {
        return Err(AnalysisError::DifferentGraders {
            a: a.manifest.grader_digest.clone(),
            b: n.manifest.grader_digest.clone(),
        });
    }
    let sn = noise.map(|n| summarize(&n.manifest, &n.conversations, &n.router, opts));
    let different = a.manifest.grader_digest != b.manifest.grader_digest;
    if different && !allow_different_graders {
        return Err(AnalysisError::DifferentGraders {
            a: a.manifest.grader_digest.clone(),
            b: b.manifest.grader_digest.clone(),
        });
    }
    let sa = summarize(&a.manifest, &a.conversations, &a.router, opts);
    let sb = summarize(&b.manifest, &b.conversations, &b.router, opts);
    let mut groups = BTreeMap::new();
    for (key, ga) in &sa.groups {
        let Some(gb) = sb.groups.get(key) else {
            continue;
        };
        let mut models = BTreeMap::new();
        for (model, ma) in &ga.models {
            let Some(mb) = gb.models.get(model) else {
                continue;
            };
            let ta = task_totals(&a.conversations, ga, model);
            let tb = task_totals(&b.conversations, gb, model);
            let shared: Vec<&String> = ta.keys().filter(|k| tb.contains_key(*k)).collect();
            let sum = |t: &BTreeMap<String, IdTotals>| {
                shared
                    .iter()
                    .fold((0.0, 0.0), |(n, p), k| (n + t[*k].trials, p + t[*k].passes))
            };
            let ((na, pa), (nb, pb)) = (sum(&ta), sum(&tb));
            let diff = (na > 0.0 && nb > 0.0).then(|| pb / nb - pa / na);
            models.insert(
                model.clone(),
                ModelComparison {
                    shared_tasks: shared.len(),
                    success_rate_difference: diff,
                    success_rate_difference_ci95: difference_bootstrap(
                        &ta,
                        &tb,
                        opts.resamples,
                        opts.seed,
                    ),
                    metrics: {
                        let again = sn
                            .as_ref()
                            .and_then(|s| s.groups.get(key))
                            .and_then(|g| g.models.get(model))
                            .map(|mn| metrics(ma, mn));
                        metrics(ma, mb)
                            .into_iter()
                            .map(|p| {
                                let n = again
                                    .as_ref()
                                    .and_then(|v| v.iter().find(|x| x.metric == p.metric));
                                p.with_noise(n)
                            })
                            .collect()
                    },
                },
            );
        }
        groups.insert(key.clone(), models);
    }
    Ok(RunComparison {
        run_a: a.manifest.run_id.clone(),
        run_b: b.manifest.run_id.clone(),
        noise_run: noise.map(|n| n.manifest.run_id.clone()),
        different_graders: different,
        resamples: opts.resamples,
        groups,
        summary_a: sa,
        summary_b: sb,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{call, conversation};
    use crate::runner::record::Manifest;

    fn run(digest: &str, passes: &[bool]) -> Run {
        let conversations = passes
            .iter()
            .enumerate()
            .map(|(i, p)| {
                conversation("m", &format!("L{}", i % 2), i as u32, *p, vec![call(10, 1)])
            })
            .collect();
        Run {
            dir: "r".into(),
            manifest: Manifest {
                run_id: digest.into(),
                grader_digest: digest.into(),
                ..Manifest::default()
            },
            conversations,
            router: vec![],
            torn_lines: 0,
            superseded: 0,
        }
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
            Err(AnalysisError::DifferentGraders { .. })
        ));
        let c = compare(&a, &b, &opts, true).unwrap();
        assert!(c.different_graders);
        let m = &c.groups["store"]["m"];
        assert_eq!(m.shared_tasks, 2);
        assert_eq!(m.success_rate_difference, Some(0.5));
        let ci = m.success_rate_difference_ci95.unwrap();
        assert!(ci.low >= 0.0 && ci.high <= 1.0 && ci.low <= ci.high);
        let sr = m
            .metrics
            .iter()
            .find(|x| x.metric == "success_rate")
            .unwrap();
        assert_eq!((sr.a, sr.b), (Some(0.5), Some(1.0)));
        assert_eq!(
            sr.measurable, None,
            "no noise run, no verdict on measurability"
        );
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

    #[test]
    fn differences_inside_the_noise_band_are_not_measurable() {
        let opts = AnalysisOptions {
            resamples: 0,
            ..AnalysisOptions::default()
        };
        let a = run("g", &[true, false, true, false]);
        // A second run of A's configuration: success 0.75 instead of 0.5, a band of 0.25.
        let again = run("g", &[true, true, true, false]);
        let small = run("g", &[true, true, true, false]);
        let large = run("g", &[true, true, true, true]);
        let rate = |c: &RunComparison| {
            c.groups["store"]["m"]
                .metrics
                .iter()
                .find(|x| x.metric == "success_rate")
                .cloned()
                .unwrap()
        };
        let c = compare_with_noise(&a, &small, Some(&again), &opts, false).unwrap();
        assert_eq!(
            (rate(&c).noise_band, rate(&c).measurable),
            (Some(0.25), Some(false))
        );
        let c = compare_with_noise(&a, &large, Some(&again), &opts, false).unwrap();
        assert_eq!(rate(&c).measurable, Some(true));
        let other = run("g2", &[true]);
        assert!(compare_with_noise(&a, &large, Some(&other), &opts, false).is_err());
    }
}
