//! Paired percentile bootstrap (metrics.md, "as the reference"): resample the ids (task ids, or
//! router message indices) with replacement, each resampled id bringing every trial of it, and apply
//! the *same* resample to both sides of a comparison. Draws come from [`PyRandom`], so the
//! reference's published intervals are reproduced digit for digit.

use crate::analysis::intervals::mt19937::PyRandom;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A central 95% interval. A bound may be infinite (a ratio whose resamples include ones where
/// its denominator model never passed); JSON writes it as the string `"inf"`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound (sorted value at position `int(0.025 N)`).
    #[serde(with = "bound")]
    pub low: f64,
    /// Upper bound (sorted value at position `int(0.975 N) - 1`).
    #[serde(with = "bound")]
    pub high: f64,
}

/// JSON form of an interval bound: a number, or `"inf"` / `"-inf"` (JSON has no infinity, and
/// serde_json would write `null`, which reads back as an error).
mod bound {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(in crate::analysis) fn serialize<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
        match *x {
            f64::INFINITY => s.serialize_str("inf"),
            f64::NEG_INFINITY => s.serialize_str("-inf"),
            x => s.serialize_f64(x),
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Bound {
        Number(f64),
        Text(String),
    }

    pub(in crate::analysis) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<f64, D::Error> {
        match Bound::deserialize(d)? {
            Bound::Number(x) => Ok(x),
            Bound::Text(t) if t == "inf" => Ok(f64::INFINITY),
            Bound::Text(t) if t == "-inf" => Ok(f64::NEG_INFINITY),
            Bound::Text(t) => Err(serde::de::Error::custom(format!(
                "interval bound {t:?} is neither a number nor \"inf\""
            ))),
        }
    }
}

/// The central 95% percentile interval of `values`, as the reference takes it: sort, then the
/// values at positions `int(0.025 N)` and `int(0.975 N) - 1` (Python's `-1` meaning the last).
pub fn ci95(values: &mut [f64]) -> Option<Interval> {
    percentile_interval(values, 0.025, 0.975)
}

/// The central interval between quantiles `lower` and `upper` of `values`, positioned as
/// [`ci95`]: the values at `int(lower N)` and `int(upper N) - 1` of the sorted values. Each is
/// found by selection (O(N)) rather than a full sort; the slice is left reordered.
pub fn percentile_interval(values: &mut [f64], lower: f64, upper: f64) -> Option<Interval> {
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let lo = ((lower * n as f64) as usize).min(n - 1);
    let hi = ((upper * n as f64) as usize)
        .checked_sub(1)
        .unwrap_or(n - 1)
        .min(n - 1);
    Some(Interval {
        low: nth_smallest(values, lo),
        high: nth_smallest(values, hi),
    })
}

/// The value at position `i` of `values` sorted by [`f64::total_cmp`] (values equal under it
/// are the same bits, so this is exactly the sorted slice's element).
fn nth_smallest(values: &mut [f64], i: usize) -> f64 {
    *values.select_nth_unstable_by(i, f64::total_cmp).1
}

/// Calls `f` once per resample with the drawn positions into the sorted id list: `resamples`
/// times, `n` draws `randbelow(n)` each, from one generator started at `seed`.
///
/// The statistics of one analysis resample the same ids with the same seed again and again (each
/// model's pass^k, the comparison between them): the draws of the last few `(n, resamples, seed)`
/// are kept, up to [`KEPT_DRAWS`] positions in all, and replayed rather than drawn again.
pub fn for_each_resample(n: usize, resamples: usize, seed: u64, mut f: impl FnMut(&[usize])) {
    let mut sample = vec![0usize; n];
    for_each_resample_u32(n, resamples, seed, |drawn| {
        for (slot, &d) in sample.iter_mut().zip(drawn) {
            *slot = d as usize;
        }
        f(&sample);
    });
}

/// [`for_each_resample`] handing `f` the positions as `u32`, as they are kept, so that a replay
/// lends the kept draws themselves rather than a copy; `n` must fit in a `u32`.
pub fn for_each_resample_u32(n: usize, resamples: usize, seed: u64, mut f: impl FnMut(&[u32])) {
    if n == 0 {
        return;
    }
    assert!(u32::try_from(n).is_ok(), "{n} ids: more than a u32 counts");
    let key = (n, resamples, seed);
    if let Some(draws) = kept_draws::get(key) {
        for chunk in draws.chunks_exact(n) {
            f(chunk);
        }
        return;
    }
    let mut rng = PyRandom::new(seed);
    if n.saturating_mul(resamples) <= KEPT_DRAWS {
        let mut kept = vec![0u32; n * resamples];
        for sample in kept.chunks_exact_mut(n) {
            rng.fill_below(n, sample);
            f(sample);
        }
        kept_draws::put(key, kept);
    } else {
        let mut sample = vec![0u32; n];
        for _ in 0..resamples {
            rng.fill_below(n, &mut sample);
            f(&sample);
        }
    }
}

/// [`for_each_resample_u32`] drawn afresh, never kept for replay: for a caller whose seeds do
/// not repeat (the planner seeds each simulated experiment's bootstrap anew), keeping the draws
/// would only cost their copy. The same `(n, resamples, seed)` gives the same positions.
pub fn for_each_fresh_resample(n: usize, resamples: usize, seed: u64, mut f: impl FnMut(&[u32])) {
    if n == 0 {
        return;
    }
    let mut rng = PyRandom::new(seed);
    let mut sample = vec![0u32; n];
    for _ in 0..resamples {
        rng.fill_below(n, &mut sample);
        f(&sample);
    }
}

/// Positions kept for replay, in all (4 bytes each: 8 MiB). A run of 24 tasks and 10,000 resamples
/// draws 240,000; one of thousands of tasks draws afresh each time.
pub const KEPT_DRAWS: usize = 1 << 21;

/// The draws kept for replay, per thread: the most recent first, at most [`KEPT_DRAWS`] in all.
/// They are kept as drawn (shared, never copied), so keeping them costs no more than drawing.
mod kept_draws {
    use std::cell::RefCell;
    use std::rc::Rc;

    type Key = (usize, usize, u64);

    thread_local! {
        static KEPT: RefCell<Vec<(Key, Rc<Vec<u32>>)>> = const { RefCell::new(Vec::new()) };
    }

    pub(in crate::analysis) fn get(key: Key) -> Option<Rc<Vec<u32>>> {
        KEPT.with_borrow(|k| k.iter().find(|(x, _)| *x == key).map(|(_, d)| d.clone()))
    }

    pub(in crate::analysis) fn put(key: Key, draws: Vec<u32>) {
        KEPT.with_borrow_mut(|k| {
            k.insert(0, (key, Rc::new(draws)));
            let mut total = 0;
            k.retain(|(_, d)| {
                total += d.len();
                total <= crate::analysis::intervals::bootstrap::KEPT_DRAWS
            });
        });
    }
}

/// One model's totals over one id (task or router message): graded trials, passes and costs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IdTotals {
    /// Graded trials.
    pub trials: f64,
    /// Passed trials (router: correct calls).
    pub passes: f64,
    /// Blended tokens.
    pub tokens: f64,
    /// Blended tokens with the re-sent prefix at the cache discount.
    pub cached: f64,
    /// Blended tokens of the pipeline (router calls in front + orchestrator).
    pub pipeline: f64,
    /// Latency of the agent calls, seconds.
    pub seconds: f64,
    /// GPU energy of the agent calls that have a reading, joules.
    pub joules: f64,
}

/// The orchestrator's paired task bootstrap between the small and the large model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskBootstrap {
    /// Tasks resampled (those both models ran).
    pub tasks: usize,
    /// Resamples drawn.
    pub resamples: usize,
    /// Seed of the generator.
    pub seed: u64,
    /// Small model's success rate.
    pub success_rate_small: Option<Interval>,
    /// Large model's success rate.
    pub success_rate_large: Option<Interval>,
    /// Success rate of the large model minus the small model's.
    pub success_rate_difference: Option<Interval>,
    /// Break-even price ratio (small's tokens per success / large's).
    pub break_even: Option<Interval>,
    /// Break-even with the re-sent prefix at the cache discount.
    pub break_even_cached: Option<Interval>,
    /// Break-even of the pipeline (router in front); absent when no router ran in front.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_even_pipeline: Option<Interval>,
    /// Resamples in which both models passed at least once (a finite break-even).
    pub resamples_with_defined_break_even: usize,
    /// Resamples in which the small model never passed and the large one did: the break-even is
    /// infinite there, and those resamples stay in the interval.
    #[serde(default)]
    pub resamples_with_infinite_break_even: usize,
    /// Resamples in which the large model never passed and the small one did: the break-even is
    /// 0 there, and those resamples stay in the interval.
    #[serde(default)]
    pub resamples_with_zero_break_even: usize,
    /// Resamples in which neither model passed: no break-even, left out of the interval.
    #[serde(default)]
    pub resamples_without_break_even: usize,
}

/// How the resamples of a paired bootstrap split by which side passed: every resample is in
/// exactly one count, so a report can account for all of them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BreakEvenTally {
    /// Both sides passed (a finite ratio).
    pub defined: usize,
    /// Only the large side passed (an infinite ratio).
    pub infinite: usize,
    /// Only the small side passed (a ratio of 0).
    pub zero: usize,
    /// Neither side passed (no ratio).
    pub undefined: usize,
}

impl BreakEvenTally {
    /// Counts one resample with `small` and `large` passes.
    pub fn add(&mut self, small_passes: f64, large_passes: f64) {
        match (small_passes > 0.0, large_passes > 0.0) {
            (true, true) => self.defined += 1,
            (false, true) => self.infinite += 1,
            (true, false) => self.zero += 1,
            (false, false) => self.undefined += 1,
        }
    }
}

/// The interval of a ratio whose point is `point`: none when the point is undefined (a side never
/// passed), so a point and its interval tell one story, and none when both bounds are infinite.
pub fn with_point(point: Option<f64>, interval: Option<Interval>) -> Option<Interval> {
    point?;
    interval.filter(|i| i.low.is_finite() || i.high.is_finite())
}

/// A ratio of per-success costs over one resample, `(small cost / small passes) / (large cost /
/// large passes)`: infinite when only the small model never passed, 0 when only the large one
/// never passed, `None` when neither passed.
pub fn resampled_ratio(
    small: f64,
    small_passes: f64,
    large: f64,
    large_passes: f64,
) -> Option<f64> {
    match (small_passes > 0.0, large_passes > 0.0) {
        (true, true) => Some((small / small_passes) / (large / large_passes)),
        (false, true) => Some(f64::INFINITY),
        (true, false) => Some(0.0),
        (false, false) => None,
    }
}

impl IdTotals {
    /// passes / trials, `None` without trials.
    fn rate(&self) -> Option<f64> {
        (self.trials > 0.0).then(|| self.passes / self.trials)
    }
}

/// Draws the paired resamples over the ids both sides have (in key order, as the reference sorts
/// them) and hands `each` the two sides' totals over every resample; returns the ids used. The
/// totals are summed in draw order, field by field, as a sum per draw would be.
fn paired<K: Ord>(
    a: &BTreeMap<K, IdTotals>,
    b: &BTreeMap<K, IdTotals>,
    resamples: usize,
    seed: u64,
    mut each: impl FnMut(IdTotals, IdTotals),
) -> usize {
    let both: Vec<(IdTotals, IdTotals)> = a
        .iter()
        .filter_map(|(k, x)| Some((*x, *b.get(k)?)))
        .collect();
    for_each_resample_u32(both.len(), resamples, seed, |sample| {
        let (mut x, mut y) = (IdTotals::default(), IdTotals::default());
        for &i in sample {
            let (p, q) = &both[i as usize];
            x.add(p);
            y.add(q);
        }
        each(x, y);
    });
    both.len()
}

impl IdTotals {
    /// Adds `other` field by field.
    #[inline]
    fn add(&mut self, other: &IdTotals) {
        self.trials += other.trials;
        self.passes += other.passes;
        self.tokens += other.tokens;
        self.cached += other.cached;
        self.pipeline += other.pipeline;
        self.seconds += other.seconds;
        self.joules += other.joules;
    }
}

/// Paired task bootstrap over the tasks both models ran (ids sorted as strings).
pub fn task_bootstrap(
    small: &BTreeMap<String, IdTotals>,
    large: &BTreeMap<String, IdTotals>,
    with_pipeline: bool,
    resamples: usize,
    seed: u64,
) -> TaskBootstrap {
    let room = || Vec::with_capacity(resamples);
    let (mut rs, mut rl, mut diff) = (room(), room(), room());
    let (mut be, mut bc, mut bp) = (room(), room(), Vec::new());
    if with_pipeline {
        bp.reserve(resamples);
    }
    let mut tally = BreakEvenTally::default();
    let tasks = paired(small, large, resamples, seed, |a, b| {
        rs.extend(a.rate());
        rl.extend(b.rate());
        if let (Some(x), Some(y)) = (a.rate(), b.rate()) {
            diff.push(y - x);
        }
        tally.add(a.passes, b.passes);
        be.extend(resampled_ratio(a.tokens, a.passes, b.tokens, b.passes));
        bc.extend(resampled_ratio(a.cached, a.passes, b.cached, b.passes));
        if with_pipeline {
            bp.extend(resampled_ratio(a.pipeline, a.passes, b.pipeline, b.passes));
        }
    });
    if tasks == 0 {
        // Nothing to resample: no draw, no resample counted, no interval.
        tally = BreakEvenTally::default();
    }
    TaskBootstrap {
        tasks,
        resamples: if tasks == 0 { 0 } else { resamples },
        seed,
        success_rate_small: ci95(&mut rs),
        success_rate_large: ci95(&mut rl),
        success_rate_difference: ci95(&mut diff),
        resamples_with_defined_break_even: tally.defined,
        resamples_with_infinite_break_even: tally.infinite,
        resamples_with_zero_break_even: tally.zero,
        resamples_without_break_even: tally.undefined,
        break_even: ci95(&mut be),
        break_even_cached: ci95(&mut bc),
        break_even_pipeline: if with_pipeline { ci95(&mut bp) } else { None },
    }
}

/// One model's 95% intervals of pass^k, k = 1..`kmax`, resampling its tasks (each drawn task
/// bringing all its trials) from a generator started at `seed`; `tasks` holds (trials, passes).
/// Each task's pass^k is computed once; a resample adds the drawn tasks' values in draw order, so
/// the sums are those of computing them per draw.
pub fn pass_hat_k_intervals(
    tasks: &[(usize, usize)],
    kmax: usize,
    resamples: usize,
    seed: u64,
) -> BTreeMap<usize, Interval> {
    let table: Vec<Vec<Option<f64>>> = (1..=kmax)
        .map(|k| {
            tasks
                .iter()
                .map(|&(n, c)| crate::analysis::figures::passk::pass_hat_k_task(n, c, k))
                .collect()
        })
        .collect();
    let mut values: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); kmax];
    for_each_resample_u32(tasks.len(), resamples, seed, |sample| {
        for (by_task, v) in table.iter().zip(values.iter_mut()) {
            let sum: f64 = sample.iter().filter_map(|&i| by_task[i as usize]).sum();
            v.push(sum / sample.len() as f64);
        }
    });
    (1..=kmax)
        .zip(values.iter_mut())
        .filter_map(|(k, v)| Some((k, ci95(v)?)))
        .collect()
}

/// The 95% interval of a success rate (passes / trials summed over the drawn tasks), resampling
/// the tasks given as (trials, passes); `None` without tasks.
pub fn success_interval(tasks: &[(usize, usize)], resamples: usize, seed: u64) -> Option<Interval> {
    let mut values = Vec::with_capacity(resamples);
    for_each_resample_u32(tasks.len(), resamples, seed, |sample| {
        let (n, c) = sample.iter().fold((0, 0), |(n, c), &i| {
            let t = tasks[i as usize];
            (n + t.0, c + t.1)
        });
        if n > 0 {
            values.push(c as f64 / n as f64);
        }
    });
    ci95(&mut values)
}

/// The router's paired bootstrap between the small and the large model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageBootstrap {
    /// Messages resampled (those both models saw).
    pub messages: usize,
    /// Resamples drawn.
    pub resamples: usize,
    /// Seed of the generator.
    pub seed: u64,
    /// Small model's accuracy.
    pub accuracy_small: Option<Interval>,
    /// Large model's accuracy.
    pub accuracy_large: Option<Interval>,
    /// Break-even price ratio of tokens per correct call, by the same rule as the agent's:
    /// infinite where only the small model was never right, 0 where only the large one, left out
    /// where neither was.
    pub break_even: Option<Interval>,
    /// Resamples in which both models were right at least once.
    #[serde(default)]
    pub resamples_with_defined_break_even: usize,
    /// Resamples in which only the large model was right (an infinite ratio, kept).
    #[serde(default)]
    pub resamples_with_infinite_break_even: usize,
    /// Resamples in which only the small model was right (a ratio of 0, kept).
    #[serde(default)]
    pub resamples_with_zero_break_even: usize,
    /// Resamples in which neither was right (no ratio, left out).
    #[serde(default)]
    pub resamples_without_break_even: usize,
}

/// Paired bootstrap over router message indices both models saw (sorted as numbers).
pub fn message_bootstrap(
    small: &BTreeMap<u32, IdTotals>,
    large: &BTreeMap<u32, IdTotals>,
    resamples: usize,
    seed: u64,
) -> MessageBootstrap {
    let room = || Vec::with_capacity(resamples);
    let (mut rs, mut rl, mut be) = (room(), room(), room());
    let mut tally = BreakEvenTally::default();
    let messages = paired(small, large, resamples, seed, |a, b| {
        rs.extend(a.rate());
        rl.extend(b.rate());
        tally.add(a.passes, b.passes);
        be.extend(resampled_ratio(a.tokens, a.passes, b.tokens, b.passes));
    });
    MessageBootstrap {
        messages,
        resamples,
        seed,
        accuracy_small: ci95(&mut rs),
        accuracy_large: ci95(&mut rl),
        break_even: ci95(&mut be),
        resamples_with_defined_break_even: tally.defined,
        resamples_with_infinite_break_even: tally.infinite,
        resamples_with_zero_break_even: tally.zero,
        resamples_without_break_even: tally.undefined,
    }
}

/// Paired bootstrap of the difference in success rate (`b - a`) between two sets of results of the
/// same tasks (for example one model in two runs); `None` without shared tasks.
pub fn difference_bootstrap(
    a: &BTreeMap<String, IdTotals>,
    b: &BTreeMap<String, IdTotals>,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    let mut diff = Vec::with_capacity(resamples);
    paired(a, b, resamples, seed, |x, y| {
        if let (Some(rx), Some(ry)) = (x.rate(), y.rate()) {
            diff.push(ry - rx);
        }
    });
    ci95(&mut diff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_positions_follow_the_reference() {
        // N = 40: positions int(1.0) = 1 and int(39.0) - 1 = 38.
        let mut v: Vec<f64> = (0..40).rev().map(f64::from).collect();
        let ci = ci95(&mut v).unwrap();
        assert_eq!((ci.low, ci.high), (1.0, 38.0));
        // N = 1: int(0.975) - 1 = -1, Python's last element.
        assert_eq!(
            ci95(&mut [7.0]).unwrap(),
            Interval {
                low: 7.0,
                high: 7.0
            }
        );
        assert!(ci95(&mut []).is_none());
    }

    #[test]
    fn resamples_draw_python_choices() {
        // python3 -c "import random; r = random.Random(0); print([r.choice(range(24)) for _ in range(6)])"
        let mut got = Vec::new();
        for_each_resample(24, 1, 0, |s| got.extend_from_slice(&s[..6]));
        assert_eq!(got, [12, 13, 1, 8, 16, 15]);
    }

    #[test]
    fn kept_draws_replay_the_generator() {
        let direct = |n: usize, resamples: usize, seed: u64| {
            let mut rng = PyRandom::new(seed);
            (0..n * resamples)
                .map(|_| rng.randbelow(n))
                .collect::<Vec<_>>()
        };
        let drawn = |n: usize, resamples: usize, seed: u64| {
            let mut all = Vec::new();
            for_each_resample(n, resamples, seed, |s| all.extend_from_slice(s));
            all
        };
        // Kept (a small run) and drawn afresh (past the bound), each asked twice, and a
        // different seed in between so that the replay must find its own key.
        for (n, resamples) in [(24, 300), (2048, KEPT_DRAWS / 2048 + 1)] {
            let want = direct(n, resamples, 11);
            assert_eq!(drawn(n, resamples, 11), want);
            assert_ne!(drawn(n, resamples, 12), want);
            assert_eq!(drawn(n, resamples, 11), want);
            // Drawn afresh without keeping: the same positions.
            let mut fresh = Vec::new();
            for_each_fresh_resample(n, resamples, 11, |s| {
                fresh.extend(s.iter().map(|&i| i as usize));
            });
            assert_eq!(fresh, want);
        }
    }

    /// The interval as it was first taken: a full sort, then the two positions.
    fn sorted_interval(values: &mut [f64], lower: f64, upper: f64) -> Option<Interval> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let lo = ((lower * n as f64) as usize).min(n - 1);
        let hi = ((upper * n as f64) as usize)
            .checked_sub(1)
            .unwrap_or(n - 1);
        Some(Interval {
            low: values[lo],
            high: values[hi.min(n - 1)],
        })
    }

    /// pass^k intervals as first computed: each drawn task's pass^k from its binomials, per draw.
    fn pass_hat_k_intervals_per_draw(
        tasks: &[(usize, usize)],
        kmax: usize,
        resamples: usize,
        seed: u64,
    ) -> BTreeMap<usize, Interval> {
        let mut values: Vec<Vec<f64>> = vec![Vec::new(); kmax];
        for_each_resample(tasks.len(), resamples, seed, |sample| {
            for (k, v) in (1..=kmax).zip(values.iter_mut()) {
                let sum: f64 = sample
                    .iter()
                    .filter_map(|&i| {
                        crate::analysis::figures::passk::pass_hat_k_task(tasks[i].0, tasks[i].1, k)
                    })
                    .sum();
                v.push(sum / sample.len() as f64);
            }
        });
        (1..=kmax)
            .zip(values.iter_mut())
            .filter_map(|(k, v)| Some((k, sorted_interval(v, 0.025, 0.975)?)))
            .collect()
    }

    fn bits(i: &Interval) -> (u64, u64) {
        (i.low.to_bits(), i.high.to_bits())
    }

    #[test]
    fn selection_finds_the_sorted_positions() {
        let mut rng = PyRandom::new(7);
        let pool = [
            0.0,
            -0.0,
            1.0,
            0.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1.0 / 3.0,
        ];
        for n in [1, 2, 3, 7, 39, 40, 41, 1000, 10_000] {
            for (lower, upper) in [(0.025, 0.975), (0.0025, 0.9975), (0.5, 0.5)] {
                let v: Vec<f64> = (0..n)
                    .map(|_| match rng.randbelow(3) {
                        0 => pool[rng.randbelow(pool.len())],
                        _ => rng.random(),
                    })
                    .collect();
                let want = sorted_interval(&mut v.clone(), lower, upper).unwrap();
                let got = percentile_interval(&mut v.clone(), lower, upper).unwrap();
                assert_eq!(bits(&got), bits(&want), "n = {n}, {lower}..{upper}");
            }
        }
    }

    #[test]
    fn pass_hat_k_intervals_keep_the_per_draw_numbers() {
        // Uneven trial counts and every pass count, so that sums of thirds, fifths and sevenths
        // round the way the per-draw computation rounded them.
        let mut rng = PyRandom::new(3);
        for (tasks, seed) in [(1, 0), (2, 1), (24, 0), (24, 5), (97, 2)] {
            let counts: Vec<(usize, usize)> = (0..tasks)
                .map(|_| {
                    let n = 1 + rng.randbelow(7);
                    (n, rng.randbelow(n + 1))
                })
                .collect();
            let kmax = counts.iter().map(|t| t.0).max().unwrap();
            let want = pass_hat_k_intervals_per_draw(&counts, kmax, 500, seed);
            let got = pass_hat_k_intervals(&counts, kmax, 500, seed);
            assert_eq!(got.len(), want.len());
            for (k, w) in &want {
                assert_eq!(bits(&got[k]), bits(w), "{tasks} tasks, k = {k}");
            }
        }
    }

    fn totals(trials: f64, passes: f64, tokens: f64) -> IdTotals {
        IdTotals {
            trials,
            passes,
            tokens,
            cached: tokens / 2.0,
            pipeline: tokens,
            ..IdTotals::default()
        }
    }

    #[test]
    fn identical_tasks_give_a_point_interval() {
        // Every task alike: every resample gives the same statistics.
        let small: BTreeMap<String, IdTotals> = ["a", "b", "c"]
            .iter()
            .map(|t| (t.to_string(), totals(5.0, 1.0, 1000.0)))
            .collect();
        let large: BTreeMap<String, IdTotals> = ["a", "b", "c"]
            .iter()
            .map(|t| (t.to_string(), totals(5.0, 4.0, 2000.0)))
            .collect();
        let b = task_bootstrap(&small, &large, false, 200, 0);
        assert_eq!(b.tasks, 3);
        let sr = b.success_rate_small.unwrap();
        assert!((sr.low - 0.2).abs() < 1e-12 && (sr.high - 0.2).abs() < 1e-12);
        let d = b.success_rate_difference.unwrap();
        assert!((d.low - 0.6).abs() < 1e-12);
        // (1000/1) / (2000/4) = 2
        assert!((b.break_even.unwrap().low - 2.0).abs() < 1e-12);
        assert_eq!(b.resamples_with_defined_break_even, 200);
        assert!(b.break_even_pipeline.is_none());
    }

    #[test]
    fn pass_hat_k_and_success_intervals_resample_tasks() {
        // One task always passes, one never: resamples range from 0 to 1.
        let tasks = [(3, 3), (3, 0)];
        let p = pass_hat_k_intervals(&tasks, 3, 400, 0);
        assert_eq!(p.len(), 3);
        for i in p.values() {
            assert_eq!((i.low, i.high), (0.0, 1.0));
        }
        let s = success_interval(&tasks, 400, 0).unwrap();
        assert_eq!((s.low, s.high), (0.0, 1.0));
        // Every task alike: a point interval.
        let same = pass_hat_k_intervals(&[(2, 1), (2, 1)], 2, 100, 0);
        assert_eq!((same[&1].low, same[&1].high), (0.5, 0.5));
        assert_eq!((same[&2].low, same[&2].high), (0.0, 0.0));
        assert!(success_interval(&[], 100, 0).is_none());
    }

    #[test]
    fn resamples_where_the_small_model_never_passes_stay_in_the_interval() {
        // Small passes only task "a"; large passes both. A resample without "a" has an infinite
        // break-even, and dropping it would narrow the interval.
        let small: BTreeMap<String, IdTotals> = [
            ("a".to_string(), totals(1.0, 1.0, 10.0)),
            ("b".to_string(), totals(1.0, 0.0, 10.0)),
        ]
        .into();
        let large: BTreeMap<String, IdTotals> = [
            ("a".to_string(), totals(1.0, 1.0, 10.0)),
            ("b".to_string(), totals(1.0, 1.0, 10.0)),
        ]
        .into();
        let b = task_bootstrap(&small, &large, false, 400, 0);
        assert!(b.resamples_with_infinite_break_even > 10, "{b:?}");
        assert_eq!(
            b.resamples_with_defined_break_even + b.resamples_with_infinite_break_even,
            400
        );
        assert_eq!(b.break_even.unwrap().high, f64::INFINITY);
        assert_eq!(b.break_even_cached.unwrap().high, f64::INFINITY);
        let json = serde_json::to_string(&b).unwrap();
        assert!(json.contains("\"high\":\"inf\""), "{json}");
        let back: TaskBootstrap = serde_json::from_str(&json).unwrap();
        assert_eq!(back, b);
        // Neither passed: no ratio, counted apart.
        assert_eq!(resampled_ratio(1.0, 0.0, 1.0, 0.0), None);
        assert_eq!(resampled_ratio(1.0, 1.0, 1.0, 0.0), Some(0.0));
    }

    #[test]
    fn break_even_needs_a_pass_somewhere() {
        let small: BTreeMap<String, IdTotals> = [("a".to_string(), totals(1.0, 0.0, 10.0))].into();
        let large: BTreeMap<String, IdTotals> = [("a".to_string(), totals(1.0, 0.0, 10.0))].into();
        let b = task_bootstrap(&small, &large, true, 50, 0);
        assert_eq!(b.resamples_with_defined_break_even, 0);
        assert_eq!(b.resamples_without_break_even, 50);
        assert!(b.break_even.is_none());
        // The router follows the same rule: a small model never right is infinite, not
        // its tokens over 1.
        let rs: BTreeMap<u32, IdTotals> = [(0, totals(1.0, 0.0, 10.0))].into();
        let rl: BTreeMap<u32, IdTotals> = [(0, totals(1.0, 1.0, 5.0))].into();
        let m = message_bootstrap(&rs, &rl, 50, 0);
        assert_eq!(m.break_even.unwrap().low, f64::INFINITY);
        assert_eq!(m.resamples_with_infinite_break_even, 50);
        // With no point there is no interval, and `∞–∞` is none either.
        assert!(with_point(None, m.break_even).is_none());
        assert!(with_point(Some(1.0), m.break_even).is_none());
    }

    #[test]
    fn every_resample_is_counted_once() {
        // Small passes only "a", large only "b": resamples split four ways.
        let small: BTreeMap<String, IdTotals> = [
            ("a".to_string(), totals(1.0, 1.0, 10.0)),
            ("b".to_string(), totals(1.0, 0.0, 10.0)),
        ]
        .into();
        let large: BTreeMap<String, IdTotals> = [
            ("a".to_string(), totals(1.0, 0.0, 10.0)),
            ("b".to_string(), totals(1.0, 1.0, 10.0)),
        ]
        .into();
        let b = task_bootstrap(&small, &large, false, 400, 0);
        assert!(b.resamples_with_zero_break_even > 0, "{b:?}");
        assert_eq!(
            b.resamples_with_defined_break_even
                + b.resamples_with_infinite_break_even
                + b.resamples_with_zero_break_even
                + b.resamples_without_break_even,
            400
        );
    }
}
