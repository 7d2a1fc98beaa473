//! Coverage of the intervals the report prints for a success rate and for pass^k, by simulation:
//! the clustered exact interval (`analysis::intervals::interval::success_rate`) and the exact interval over
//! tasks (`analysis::intervals::interval::task_mean`), metrics.md "Intervals at the boundary", beside the
//! percentile task bootstrap they replace. Each simulated run has T tasks of k trials; every task has its own
//! true rate: `equal` (every task at the true rate μ) or `mixed` (uniform on μ ± min(μ, 1 − μ), so
//! tasks differ as real ones do and the mean is still μ). An interval covers when it holds μ.
//! docs/reference/metrics-validation.md quotes the figures.
//!
//! Then the success gap (`analysis::intervals::interval::paired_gap`): two models on the same tasks, the
//! reported gap (the MOVER interval from the two rates' intervals with their correlation over the
//! tasks) beside Newcombe's interval (the same, the rates taken as independent) and the paired
//! percentile bootstrap, as the reference computes it. In `mixed` runs a task's two rates move
//! together (one difficulty per task: the models find the same tasks hard).
//!
//! Then a factorial main effect (`analysis::figures::factorial`, its interval `analysis::intervals::interval::
//! paired_contrast`): one model over a 2 x 2 design (docs x router) on the same tasks, the
//! documentation effect ½[(S(doc, off) − S(bare, off)) + (S(doc, on) − S(bare, on))] with the
//! reported interval (the cells' intervals with their correlation over the tasks) beside the
//! MOVER interval of independent cells and the percentile task bootstrap of the contrast. In
//! `mixed` runs the four cells of a task share one difficulty draw.
//!
//! Then a figure per successful task (`analysis::intervals::ratio::per_success`): tokens (or
//! seconds, joules) per success of runs whose tasks differ in cost (log-normal) and whose failed
//! trials cost more, Fieller's interval beside the percentile task bootstrap of the ratio.
//!
//! Run with `cargo bench --profile dev --bench interval_coverage` (optionally followed by the
//! number of simulated runs per cell, default 400, and `gap`, `effect` or `per-success` for that
//! table alone;
//! `RESAMPLES` sets the bootstrap's, default 400).

use passk::analysis::figures::passk::pass_hat_k_task;
use passk::analysis::intervals::bootstrap::{
    IdTotals, Interval, ci95, difference_bootstrap, for_each_resample, pass_hat_k_intervals,
    success_interval,
};
use passk::analysis::intervals::mt19937::PyRandom;
use passk::analysis::intervals::{interval, ratio};
use std::collections::BTreeMap;

const RATES: [f64; 5] = [0.01, 0.05, 0.5, 0.95, 0.99];
const TASKS: [usize; 4] = [6, 12, 24, 48];
const TRIALS: [usize; 4] = [1, 2, 5, 10];

/// One simulated run: (trials, passes) per task.
fn run(rng: &mut PyRandom, mu: f64, mixed: bool, tasks: usize, k: usize) -> Vec<(usize, usize)> {
    let d = mu.min(1.0 - mu);
    (0..tasks)
        .map(|_| {
            let p = if mixed {
                mu - d + 2.0 * d * rng.random()
            } else {
                mu
            };
            (k, (0..k).filter(|_| rng.random() < p).count())
        })
        .collect()
}

fn covers(i: Option<Interval>, truth: f64) -> bool {
    i.is_some_and(|i| i.low <= truth && truth <= i.high)
}

/// The true pass^k of the run's task population: E[p^k] over the tasks' rates.
fn true_pass_hat_k(mu: f64, mixed: bool, k: usize) -> f64 {
    let (d, k) = (mu.min(1.0 - mu), k as i32);
    if mixed && d > 0.0 {
        let (a, b) = (mu - d, mu + d);
        (b.powi(k + 1) - a.powi(k + 1)) / ((f64::from(k) + 1.0) * (b - a))
    } else {
        mu.powi(k)
    }
}

/// Covering runs of one cell: [reported rate, bootstrap rate, reported pass^k, bootstrap pass^k].
fn cell(mu: f64, mixed: bool, tasks: usize, k: usize, sims: usize, resamples: usize) -> [usize; 4] {
    let mut rng = PyRandom::new((tasks * 1000 + k) as u64 + (mu * 1e4) as u64 + u64::from(mixed));
    let truth_k = true_pass_hat_k(mu, mixed, k);
    let mut hits = [0; 4];
    for s in 0..sims {
        let counts = run(&mut rng, mu, mixed, tasks, k);
        let seed = s as u64;
        let values: Vec<f64> = counts
            .iter()
            .filter_map(|&(n, c)| pass_hat_k_task(n, c, k))
            .collect();
        let boot_k = pass_hat_k_intervals(&counts, k, resamples, seed)
            .get(&k)
            .copied();
        let got = [
            covers(interval::success_rate(&counts), mu),
            covers(success_interval(&counts, resamples, seed), mu),
            covers(interval::task_mean(&values), truth_k),
            covers(boot_k, truth_k),
        ];
        for (h, g) in hits.iter_mut().zip(got) {
            *h += usize::from(g);
        }
    }
    hits
}

fn main() {
    let sims: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(400);
    let resamples = std::env::var("RESAMPLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let only = |name: &str| std::env::args().any(|a| a == name);
    let all = !only("gap") && !only("effect") && !only("per-success");
    if all {
        rates_table(sims, resamples);
    }
    if all || only("gap") {
        gap_table(sims, resamples);
    }
    if all || only("effect") {
        effect_table(sims, resamples);
    }
    if all || only("per-success") {
        per_success_table(sims, resamples);
    }
}

/// True mean rates of the per-success cells.
const PER_SUCCESS_RATES: [f64; 4] = [0.05, 0.2, 0.5, 0.95];
/// Spread of a task's mean cost (log scale) and of a trial's cost around it.
const TASK_SIGMA: f64 = 0.5;
const TRIAL_SIGMA: f64 = 0.3;
/// A failed trial costs this many times a passed one (failures run longer).
const FAIL_COST: f64 = 1.3;

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut PyRandom) -> f64 {
    let u = 1.0 - rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.random()).cos()
}

/// One simulated run for a per-success figure: (cost, passes) per task. A task's mean cost is
/// log-normal (σ = [`TASK_SIGMA`]), each trial's cost log-normal around it (σ = [`TRIAL_SIGMA`]),
/// [`FAIL_COST`] times more when it fails; the task's rate as in [`run`].
fn costed_run(rng: &mut PyRandom, mu: f64, mixed: bool, tasks: usize, k: usize) -> Vec<(f64, f64)> {
    (0..tasks)
        .map(|_| {
            let p = spread(mu, if mixed { rng.random() } else { 0.5 });
            let base = (TASK_SIGMA * normal(rng)).exp();
            (0..k).fold((0.0, 0.0), |(y, x), _| {
                let pass = rng.random() < p;
                let cost = base * (TRIAL_SIGMA * normal(rng)).exp();
                let cost = if pass { cost } else { FAIL_COST * cost };
                (y + cost, x + f64::from(u8::from(pass)))
            })
        })
        .collect()
}

/// The population's cost per success: E[cost of a trial] / E[passes of a trial].
fn true_per_success(mu: f64) -> f64 {
    let mean_cost = (TASK_SIGMA.powi(2) / 2.0).exp() * (TRIAL_SIGMA.powi(2) / 2.0).exp();
    mean_cost * (mu + FAIL_COST * (1.0 - mu)) / mu
}

/// The percentile task bootstrap of Σ cost / Σ passes (a resample without a pass: ∞).
fn ratio_bootstrap(tasks: &[(f64, f64)], resamples: usize, seed: u64) -> Option<Interval> {
    let mut values = Vec::with_capacity(resamples);
    for_each_resample(tasks.len(), resamples, seed, |sample| {
        let (y, x) = sample
            .iter()
            .fold((0.0, 0.0), |(y, x), &i| (y + tasks[i].0, x + tasks[i].1));
        values.push(if x > 0.0 { y / x } else { f64::INFINITY });
    });
    ci95(&mut values)
}

/// Coverage of the per-success interval (Fieller, tasks as clusters) beside the percentile task
/// bootstrap, over runs that have a pass (a run without one reports no figure).
fn per_success_table(sims: usize, resamples: usize) {
    println!(
        "per-success coverage at nominal 95%, {sims} runs per cell (those with a pass), \
         {resamples} resamples; per k = {TRIALS:?}: Fieller (bootstrap) [share of runs open above]"
    );
    let mut tally = Tally::default();
    for mixed in [false, true] {
        let regime = if mixed { "mixed" } else { "equal" };
        for mu in PER_SUCCESS_RATES {
            let truth = true_per_success(mu);
            for tasks in TASKS {
                let mut row = Vec::new();
                for k in TRIALS {
                    let seed = (tasks * 1000 + k) as u64 + (mu * 1e4) as u64 + u64::from(mixed);
                    let mut rng = PyRandom::new(seed);
                    let (mut hits, mut runs, mut open) = ([0usize; 2], 0usize, 0usize);
                    for s in 0..sims {
                        let counts = costed_run(&mut rng, mu, mixed, tasks, k);
                        let Some(f) = ratio::per_success(&counts) else {
                            continue;
                        };
                        runs += 1;
                        open += usize::from(f.high.is_infinite());
                        let b = ratio_bootstrap(&counts, resamples, s as u64);
                        hits[0] += usize::from(covers(Some(f), truth));
                        hits[1] += usize::from(covers(b, truth));
                    }
                    let cov = hits.map(|h| h as f64 / runs.max(1) as f64);
                    tally.add(&cov, || format!("{regime} mu={mu} T={tasks} k={k}"));
                    row.push(format!(
                        "{:5.1} ({:5.1}) [{:4.1}]",
                        100.0 * cov[0],
                        100.0 * cov[1],
                        100.0 * open as f64 / runs.max(1) as f64
                    ));
                }
                println!("  {regime} mu={mu:<4} T={tasks:<2}  {}", row.join("   "));
            }
        }
    }
    tally.print(&["per success, Fieller", "per success, bootstrap alone"]);
}

/// Coverage of the success rate's and pass^k's intervals, cell by cell, and the lowest and mean.
fn rates_table(sims: usize, resamples: usize) {
    println!(
        "coverage at nominal 95%, {sims} runs per cell, {resamples} resamples; per k = {TRIALS:?}: \
         success rate reported (bootstrap alone) | pass^k reported (bootstrap alone)"
    );
    let names = [
        "success rate, reported",
        "success rate, bootstrap alone",
        "pass^k, reported",
        "pass^k, bootstrap alone",
    ];
    let mut tally = Tally::default();
    for mixed in [false, true] {
        let regime = if mixed { "mixed" } else { "equal" };
        for mu in RATES {
            for tasks in TASKS {
                let mut row = Vec::new();
                for k in TRIALS {
                    let hits = cell(mu, mixed, tasks, k, sims, resamples);
                    let cov = hits.map(|h| h as f64 / sims as f64);
                    tally.add(&cov, || format!("{regime} mu={mu} T={tasks} k={k}"));
                    let p = |x: f64| 100.0 * x;
                    row.push(format!(
                        "{:5.1} ({:5.1}) | {:5.1} ({:5.1})",
                        p(cov[0]),
                        p(cov[1]),
                        p(cov[2]),
                        p(cov[3])
                    ));
                }
                println!("  {regime} mu={mu:<4} T={tasks:<2}  {}", row.join("   "));
            }
        }
    }
    tally.print(&names);
}

/// (small, large) true mean rates of the gap cells: both near 0, near 1, in the middle, across.
const GAPS: [(f64, f64); 7] = [
    (0.01, 0.01),
    (0.01, 0.05),
    (0.05, 0.5),
    (0.5, 0.5),
    (0.5, 0.95),
    (0.95, 0.99),
    (0.99, 0.99),
];

/// (trials, passes) per task of one model's run.
type Counts = Vec<(usize, usize)>;

/// One simulated pair of runs on the same tasks: (trials, passes) per task for each model. In
/// `mixed` runs both models' rates on a task share one draw of its difficulty.
fn pair(
    rng: &mut PyRandom,
    (ms, ml): (f64, f64),
    mixed: bool,
    tasks: usize,
    k: usize,
) -> (Counts, Counts) {
    (0..tasks)
        .map(|_| {
            let u = if mixed { rng.random() } else { 0.5 };
            let small = play(rng, spread(ms, u), k);
            (small, play(rng, spread(ml, u), k))
        })
        .unzip()
}

/// A task's true rate where the population's mean is `mu` and the task's difficulty draw is `u`
/// (uniform on [0, 1); 0.5 for every task in `equal` runs): uniform on μ ± min(μ, 1 − μ).
fn spread(mu: f64, u: f64) -> f64 {
    mu + mu.min(1.0 - mu) * (2.0 * u - 1.0)
}

/// k trials at rate `p`: (trials, passes).
fn play(rng: &mut PyRandom, p: f64, k: usize) -> (usize, usize) {
    (k, (0..k).filter(|_| rng.random() < p).count())
}

/// The counts as the paired bootstrap takes them, keyed by task.
fn totals(counts: &[(usize, usize)]) -> BTreeMap<String, IdTotals> {
    counts
        .iter()
        .enumerate()
        .map(|(i, &(n, c))| {
            let t = IdTotals {
                trials: n as f64,
                passes: c as f64,
                ..IdTotals::default()
            };
            (format!("{i:04}"), t)
        })
        .collect()
}

/// The random stream of one cell of a pair table: seeded by its rates, shape and regime, and
/// `table` (so that two tables over the same grid draw apart).
fn cell_rng(rates: (f64, f64), mixed: bool, (tasks, k): (usize, usize), table: u64) -> PyRandom {
    let seed = (tasks * 1000 + k) as u64 + (rates.0 * 1e4 + rates.1 * 1e6) as u64;
    PyRandom::new(seed + table + u64::from(mixed))
}

/// Covering pairs of one gap cell: [reported, Newcombe, bootstrap].
fn gap_cell(
    rates: (f64, f64),
    mixed: bool,
    (tasks, k): (usize, usize),
    sims: usize,
    resamples: usize,
) -> [usize; 3] {
    let mut rng = cell_rng(rates, mixed, (tasks, k), 0);
    let truth = rates.1 - rates.0;
    let mut hits = [0; 3];
    for s in 0..sims {
        let (small, large) = pair(&mut rng, rates, mixed, tasks, k);
        let (a, b) = (totals(&small), totals(&large));
        let got = [
            covers(interval::paired_gap(&a, &b), truth),
            covers(Some(independent(&[(1.0, &large), (-1.0, &small)])), truth),
            covers(difference_bootstrap(&a, &b, resamples, s as u64), truth),
        ];
        for (h, g) in hits.iter_mut().zip(got) {
            *h += usize::from(g);
        }
    }
    hits
}

/// The MOVER interval of a contrast whose cells are taken as independent (Newcombe's hybrid
/// interval for a difference): what the reported interval is without the tasks' correlation.
fn independent(cells: &[(f64, &[(usize, usize)])]) -> Interval {
    let terms: Vec<interval::Weighted> = cells
        .iter()
        .map(|&(w, counts)| {
            let (p, ci) = interval::rate(counts).expect("trials");
            (w, p, ci)
        })
        .collect();
    interval::mover(&terms, |_, _| 0.0)
}

/// Coverage of the success gap's intervals, cell by cell, and the lowest and mean.
fn gap_table(sims: usize, resamples: usize) {
    let title = format!(
        "success gap (large - small), {sims} pairs of runs per cell; per k = {TRIALS:?}: \
         reported | Newcombe | bootstrap"
    );
    let names = ["gap, reported", "gap, Newcombe", "gap, bootstrap"];
    pair_table(
        &title,
        &names,
        &GAPS,
        |rates, mixed, shape| gap_cell(rates, mixed, shape, sims, resamples),
        sims,
    );
}

/// One coverage table over pairs of true rates: per regime, pair and task count, each k's
/// coverage of three intervals (`cell` counts the covering runs of `sims`), then the lowest and
/// the mean of each.
fn pair_table<const N: usize>(
    title: &str,
    names: &[&str; N],
    grid: &[(f64, f64)],
    cell: impl Fn((f64, f64), bool, (usize, usize)) -> [usize; N],
    sims: usize,
) {
    println!("\n{title}");
    let mut tally = Tally::default();
    for mixed in [false, true] {
        let regime = if mixed { "mixed" } else { "equal" };
        for &rates in grid {
            for tasks in TASKS {
                let mut row = Vec::new();
                for k in TRIALS {
                    let cov = cell(rates, mixed, (tasks, k)).map(|h| h as f64 / sims as f64);
                    tally.add(&cov, || format!("{regime} {rates:?} T={tasks} k={k}"));
                    row.push(cov.map(|x| format!("{:5.1}", 100.0 * x)).join(" | "));
                }
                println!("  {regime} {rates:?} T={tasks:<2}  {}", row.join("   "));
            }
        }
    }
    tally.print(names);
}

/// (bare, documented) true mean rates of the effect cells (the router changes nothing): no
/// effect near 0, in the middle and near 1, and effects across the range.
const EFFECTS: [(f64, f64); 5] = [
    (0.01, 0.05),
    (0.05, 0.5),
    (0.5, 0.5),
    (0.5, 0.95),
    (0.99, 0.99),
];

/// The four cells (bare off, bare on, documented off, documented on) of one simulated run: per
/// cell, (trials, passes) per task, and the documentation effect's weight.
fn cells(
    rng: &mut PyRandom,
    (bare, doc): (f64, f64),
    mixed: bool,
    tasks: usize,
    k: usize,
) -> [(Counts, f64); 4] {
    let mut out: [(Counts, f64); 4] = [-0.5, -0.5, 0.5, 0.5].map(|w| (Vec::new(), w));
    for _ in 0..tasks {
        let u = if mixed { rng.random() } else { 0.5 };
        for (i, (counts, _)) in out.iter_mut().enumerate() {
            counts.push(play(rng, spread(if i < 2 { bare } else { doc }, u), k));
        }
    }
    out
}

/// Covering runs of one effect cell: [reported, MOVER of independent cells, bootstrap].
fn effect_cell(
    rates: (f64, f64),
    mixed: bool,
    (tasks, k): (usize, usize),
    sims: usize,
    resamples: usize,
) -> [usize; 3] {
    let mut rng = cell_rng(rates, mixed, (tasks, k), 7);
    let truth = rates.1 - rates.0;
    let mut hits = [0; 3];
    for s in 0..sims {
        let design = cells(&mut rng, rates, mixed, tasks, k);
        let mut draws = Vec::with_capacity(resamples);
        for_each_resample(tasks, resamples, s as u64, |sample| {
            let value = design.iter().map(|(counts, w)| {
                let (n, c) = sample
                    .iter()
                    .fold((0, 0), |(n, c), &i| (n + counts[i].0, c + counts[i].1));
                w * c as f64 / n as f64
            });
            draws.push(value.sum());
        });
        let cells: Vec<(f64, &[(usize, usize)])> =
            design.iter().map(|(c, w)| (*w, c.as_slice())).collect();
        let got = [
            covers(interval::paired_contrast(&cells), truth),
            covers(Some(independent(&cells)), truth),
            covers(ci95(&mut draws), truth),
        ];
        for (h, g) in hits.iter_mut().zip(got) {
            *h += usize::from(g);
        }
    }
    hits
}

/// Coverage of a factorial main effect's intervals, cell by cell, and the lowest and mean.
fn effect_table(sims: usize, resamples: usize) {
    let title = format!(
        "documentation effect of a 2 x 2 design, {sims} runs per cell; per k = {TRIALS:?}: \
         reported | MOVER of independent cells | bootstrap"
    );
    let names = [
        "effect, reported",
        "effect, independent cells",
        "effect, bootstrap",
    ];
    pair_table(
        &title,
        &names,
        &EFFECTS,
        |rates, mixed, shape| effect_cell(rates, mixed, shape, sims, resamples),
        sims,
    );
}

/// Each interval's lowest coverage (with its cell) and the sum over cells, for the summary lines.
#[derive(Default)]
struct Tally {
    worst: Vec<(f64, String)>,
    sums: Vec<f64>,
    cells: usize,
}

impl Tally {
    /// One cell's coverage of each interval; `cell` names it.
    fn add(&mut self, coverage: &[f64], cell: impl Fn() -> String) {
        self.worst
            .resize(coverage.len(), (f64::INFINITY, String::new()));
        self.sums.resize(coverage.len(), 0.0);
        for (i, &c) in coverage.iter().enumerate() {
            if c < self.worst[i].0 {
                self.worst[i] = (c, cell());
            }
            self.sums[i] += c;
        }
        self.cells += 1;
    }

    /// One line per interval: its lowest coverage, where, and its mean.
    fn print(&self, names: &[&str]) {
        for (i, name) in names.iter().enumerate() {
            println!(
                "{name:<30} lowest {:5.1}% ({}), mean {:5.1}% over {} cells",
                100.0 * self.worst[i].0,
                self.worst[i].1,
                100.0 * self.sums[i] / self.cells as f64,
                self.cells
            );
        }
    }
}
