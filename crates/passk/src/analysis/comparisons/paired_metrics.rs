//! Paired task bootstrap of the difference B − A of each compared metric (`passk compare`): the
//! same resample of the shared tasks is applied to both runs, each resampled task bringing all its
//! graded trials, and every metric is recomputed on each side. A per-success metric of a side that
//! never passed in a resample is infinite there, so the difference is ±∞: such resamples stay in
//! the interval and are counted. A difference is "measurable" when its interval at the
//! Bonferroni level (1 − 0.05 / the number of metrics compared) excludes zero (and, with a noise
//! run, when it also exceeds the run-to-run band; see `compare`). The false-positive rate of that
//! rule is measured by `benches/measurable_rule.rs` and asserted by a test on `replicates`.

use crate::analysis::figures::cost::{CACHE_DISCOUNT, blended_calls, cached_calls};
use crate::analysis::figures::latency::percentile;
use crate::analysis::figures::passk::pass_hat_k_task;
use crate::analysis::intervals::bootstrap::{
    Interval, ci95, for_each_resample, percentile_interval,
};
use crate::runner::record::ConversationRecord;
use std::collections::BTreeMap;

/// One task's graded trials of one model, summed: what every compared metric is built from.
#[derive(Debug, Clone, Default)]
pub struct TaskSums {
    trials: f64,
    passes: f64,
    model_calls: f64,
    rejected: f64,
    identify_hits: f64,
    identify_of: f64,
    blended: f64,
    cached: f64,
    call_latency: f64,
    calls_with_latency: f64,
    conversation_latency: Vec<f64>,
}

impl TaskSums {
    /// Adds one graded conversation.
    pub fn add(&mut self, c: &ConversationRecord, w: f64) {
        self.trials += 1.0;
        self.passes += f64::from(u8::from(c.verdict.passed));
        self.model_calls += c.orchestrator_calls().count() as f64;
        self.rejected += c.tool_events.iter().filter(|e| !e.ok).count() as f64;
        if let Some(hit) = crate::analysis::figures::behaviour::identified_first(&c.tool_events) {
            self.identify_of += 1.0;
            self.identify_hits += f64::from(u8::from(hit));
        }
        self.blended += blended_calls(c.orchestrator_calls(), w);
        self.cached += cached_calls(c.orchestrator_calls(), w, CACHE_DISCOUNT);
        let lats: Vec<f64> = c
            .orchestrator_calls()
            .filter_map(|x| x.latency_s())
            .collect();
        if !lats.is_empty() {
            self.call_latency += lats.iter().sum::<f64>();
            self.calls_with_latency += lats.len() as f64;
            self.conversation_latency.push(lats.iter().sum());
        }
    }

    fn absorb(&mut self, x: &TaskSums) {
        self.trials += x.trials;
        self.passes += x.passes;
        self.model_calls += x.model_calls;
        self.rejected += x.rejected;
        self.identify_hits += x.identify_hits;
        self.identify_of += x.identify_of;
        self.blended += x.blended;
        self.cached += x.cached;
        self.call_latency += x.call_latency;
        self.calls_with_latency += x.calls_with_latency;
        self.conversation_latency
            .extend_from_slice(&x.conversation_latency);
    }
}

/// A set of tasks (with repeats, in a resample) summed, plus the per-task means.
struct Pooled {
    sums: TaskSums,
    /// Mean over the tasks of pass^k at the compared k.
    pass_hat_k: Option<f64>,
    /// Mean over the tasks of the share of trials disagreeing with the majority.
    noise: Option<f64>,
}

fn pool<'a>(tasks: impl Iterator<Item = &'a TaskSums>, k: usize) -> Pooled {
    let mut sums = TaskSums::default();
    let (mut n, mut phk, mut noise) = (0.0, 0.0, 0.0);
    for t in tasks {
        sums.absorb(t);
        n += 1.0;
        let (trials, passes) = (t.trials as usize, t.passes as usize);
        phk += pass_hat_k_task(trials, passes, k).unwrap_or(0.0);
        if trials > 0 {
            noise += passes.min(trials - passes) as f64 / trials as f64;
        }
    }
    Pooled {
        sums,
        pass_hat_k: (n > 0.0 && k > 0).then(|| phk / n),
        noise: (n > 0.0).then(|| noise / n),
    }
}

fn ratio(num: f64, den: f64) -> Option<f64> {
    (den > 0.0).then(|| num / den)
}

/// A cost per success: infinite when something was spent and nothing passed.
fn per_success(cost: f64, passes: f64) -> Option<f64> {
    if passes > 0.0 {
        Some(cost / passes)
    } else {
        (cost > 0.0).then_some(f64::INFINITY)
    }
}

/// The metric named `metric` (as in `compare::metrics`) over pooled tasks.
fn metric(name: &str, p: &Pooled) -> Option<f64> {
    let s = &p.sums;
    let time = || {
        (!s.conversation_latency.is_empty())
            .then(|| per_success(s.conversation_latency.iter().sum(), s.passes))
            .flatten()
    };
    match name {
        "success_rate" => ratio(s.passes, s.trials),
        "model_calls_per_conversation" => ratio(s.model_calls, s.trials),
        "rejected_calls_per_conversation" => ratio(s.rejected, s.trials),
        "identify_first_rate" => ratio(s.identify_hits, s.identify_of),
        "blended_tokens_per_conversation" => ratio(s.blended, s.trials),
        "blended_tokens_per_success" => per_success(s.blended, s.passes),
        "cached_blended_tokens_per_success" => per_success(s.cached, s.passes),
        "latency_per_call_s" => ratio(s.call_latency, s.calls_with_latency),
        "conversation_latency_p50_s" => percentile(&s.conversation_latency, 50.0),
        "conversation_latency_p95_s" => percentile(&s.conversation_latency, 95.0),
        "time_per_success_s" => time(),
        "noise_mean" => p.noise,
        m if m.starts_with("pass^") => p.pass_hat_k,
        _ => None,
    }
}

/// Per-task sums of the graded conversations among `records` (one model, one configuration).
pub fn task_sums<'a>(
    records: impl IntoIterator<Item = &'a ConversationRecord>,
    w: f64,
) -> BTreeMap<String, TaskSums> {
    let mut out: BTreeMap<String, TaskSums> = BTreeMap::new();
    for c in records.into_iter().filter(|c| c.outcome.is_graded()) {
        out.entry(c.task.clone()).or_default().add(c, w);
    }
    out
}

/// The paired resamples of one metric's difference B − A.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DifferenceDraws {
    /// Central 95% interval of the differences.
    pub ci95: Option<Interval>,
    /// Central interval at the level the measurable rule uses (see [`verdict_level`]), its tails
    /// expanded for the number of tasks ([`crate::analysis::intervals::interval::expanded_tail`]).
    pub verdict_ci: Option<Interval>,
    /// Resamples in which one side never passed and the other did: a per-success difference of
    /// ±∞, kept in both intervals.
    pub infinite: usize,
}

/// The two-sided level of the interval behind "measurable" when `metrics` differences are judged
/// together: Bonferroni, 1 − 0.05 / `metrics`, so that replicates of one configuration call any
/// of them measurable in at most about 5% of comparisons.
pub fn verdict_level(metrics: usize) -> f64 {
    1.0 - 0.05 / metrics.max(1) as f64
}

/// For each metric name, the paired resamples of B − A over the tasks both have (intervals `None`
/// where the metric is undefined on a side in every resample, or on both where neither passed).
/// `k` is the pass^k compared; the verdict intervals are at [`verdict_level`] of `names.len()`,
/// as expanded percentile intervals over the shared tasks.
pub fn difference_intervals(
    names: &[String],
    a: &BTreeMap<String, TaskSums>,
    b: &BTreeMap<String, TaskSums>,
    k: usize,
    resamples: usize,
    seed: u64,
) -> BTreeMap<String, DifferenceDraws> {
    let ids: Vec<&String> = a.keys().filter(|t| b.contains_key(*t)).collect();
    let mut diffs: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    // Each side's sums per shared task, looked up once: a resample indexes them.
    let (sa, sb): (Vec<&TaskSums>, Vec<&TaskSums>) = ids.iter().map(|t| (&a[*t], &b[*t])).unzip();
    for_each_resample(ids.len(), resamples, seed, |sample| {
        let pa = pool(sample.iter().map(|&i| sa[i]), k);
        let pb = pool(sample.iter().map(|&i| sb[i]), k);
        for (name, d) in names.iter().zip(diffs.iter_mut()) {
            if let (Some(x), Some(y)) = (metric(name, &pa), metric(name, &pb))
                && !(x.is_infinite() && y.is_infinite())
            {
                d.push(y - x);
            }
        }
    });
    let tail = crate::analysis::intervals::interval::expanded_tail(
        (1.0 - verdict_level(names.len())) / 2.0,
        ids.len(),
    );
    names
        .iter()
        .cloned()
        .zip(diffs.iter_mut().map(|d| DifferenceDraws {
            infinite: d.iter().filter(|x| x.is_infinite()).count(),
            ci95: ci95(d),
            verdict_ci: percentile_interval(d, tail, 1.0 - tail),
        }))
        .collect()
}

/// The interval excludes zero: the rule behind "measurable".
pub fn excludes_zero(i: &Interval) -> bool {
    i.low > 0.0 || i.high < 0.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{conversation, timed_call};

    fn sums(passes: &[&[bool]]) -> BTreeMap<String, TaskSums> {
        let recs: Vec<ConversationRecord> = passes
            .iter()
            .enumerate()
            .flat_map(|(t, trials)| {
                trials.iter().enumerate().map(move |(i, p)| {
                    let calls = vec![timed_call(10, 1, 0.5)];
                    conversation("m", &format!("T{t}"), i as u32, *p, calls)
                })
            })
            .collect();
        task_sums(&recs, 4.0)
    }

    #[test]
    fn a_shift_on_every_task_is_measurable_and_none_is_not() {
        let names: Vec<String> = ["success_rate", "pass^2", "blended_tokens_per_conversation"]
            .map(String::from)
            .to_vec();
        let low = sums(&[
            &[true, false],
            &[false, false],
            &[true, false],
            &[false, true],
        ]);
        let high = sums(&[&[true, true], &[true, true], &[true, true], &[true, true]]);
        let d = difference_intervals(&names, &low, &high, 2, 500, 0);
        assert!(excludes_zero(&d["success_rate"].verdict_ci.unwrap()));
        assert!(excludes_zero(&d["pass^2"].verdict_ci.unwrap()));
        // Same tokens on both sides: a point interval at 0.
        let t = d["blended_tokens_per_conversation"].verdict_ci.unwrap();
        assert_eq!((t.low, t.high), (0.0, 0.0));
        assert!(!excludes_zero(&t));
        let same = difference_intervals(&names, &low, &low, 2, 500, 0);
        assert!(!excludes_zero(&same["success_rate"].verdict_ci.unwrap()));
    }

    #[test]
    fn the_verdict_interval_is_wider_than_the_plain_percentile_one_on_few_tasks() {
        // 12 tasks with differing verdicts on each side: the verdict interval cuts the expanded
        // tails, so it holds the plain percentile interval at the same level, and more.
        let a: Vec<[bool; 3]> = (0..12)
            .map(|t| [t % 2 == 0, t % 3 == 0, t % 5 == 0])
            .collect();
        let b: Vec<[bool; 3]> = (0..12).map(|t| [t % 2 == 1, t % 4 == 0, true]).collect();
        let (a, b) = (
            sums(&a.iter().map(|x| &x[..]).collect::<Vec<_>>()),
            sums(&b.iter().map(|x| &x[..]).collect::<Vec<_>>()),
        );
        let names = vec!["success_rate".to_string(); 13];
        let (resamples, seed) = (2000, 4);
        let d = difference_intervals(&names, &a, &b, 2, resamples, seed);
        let mut plain = Vec::new();
        for_each_resample(12, resamples, seed, |s| {
            // The tasks in id order, as the paired resample indexes them.
            let (pa, pb) = (
                pool(s.iter().map(|&i| a.values().nth(i).unwrap()), 2),
                pool(s.iter().map(|&i| b.values().nth(i).unwrap()), 2),
            );
            plain.push(metric("success_rate", &pb).unwrap() - metric("success_rate", &pa).unwrap());
        });
        let tail = (1.0 - verdict_level(13)) / 2.0;
        let plain = percentile_interval(&mut plain, tail, 1.0 - tail).unwrap();
        let got = d["success_rate"].verdict_ci.unwrap();
        assert!(
            got.low <= plain.low && got.high >= plain.high,
            "{got:?} {plain:?}"
        );
        assert!(
            got.high - got.low > plain.high - plain.low,
            "{got:?} {plain:?}"
        );
    }

    #[test]
    fn resamples_where_a_side_never_passes_stay_in_the_interval_as_infinite() {
        let names: Vec<String> = ["blended_tokens_per_success", "time_per_success_s"]
            .map(String::from)
            .to_vec();
        // A passes one task of three; B passes every task: a resample without A's passing task
        // has an infinite cost per success on A's side, a difference of −∞.
        let a = sums(&[&[true, true], &[false, false], &[false, false]]);
        let b = sums(&[&[true, true], &[true, true], &[true, true]]);
        let resamples = 400;
        let d = difference_intervals(&names, &a, &b, 2, resamples, 3);
        for name in &names {
            let x = d[name];
            // P(no draw of the passing task) = (2/3)^3 ≈ 30%: far more than the lower 2.5%.
            assert!(x.infinite > resamples / 5, "{name}: {x:?}");
            assert!(x.infinite < resamples / 2, "{name}: {x:?}");
            let ci = x.ci95.unwrap();
            assert_eq!(ci.low, f64::NEG_INFINITY, "{name}: kept, not dropped");
            assert!(ci.high.is_finite(), "{name}");
        }
        // Neither side ever passes: no difference, nothing infinite.
        let none = sums(&[&[false], &[false]]);
        let d = difference_intervals(&names, &none, &none, 1, 50, 0);
        assert_eq!(d[&names[0]].ci95, None);
        assert_eq!(d[&names[0]].infinite, 0);
    }
}
