//! Coverage of the intervals the report prints for a success rate and for pass^k, by simulation:
//! the clustered exact interval (`analysis::interval::success_rate`) and the exact interval over
//! tasks (`analysis::interval::task_mean`), metrics.md "Intervals at the boundary", beside the
//! percentile task bootstrap they replace. Each simulated run has T tasks of k trials; every task has its own
//! true rate: `equal` (every task at the true rate μ) or `mixed` (uniform on μ ± min(μ, 1 − μ), so
//! tasks differ as real ones do and the mean is still μ). An interval covers when it holds μ.
//! docs/metrics.md quotes the figures.
//!
//! Run with `cargo bench --profile dev --bench interval_coverage` (optionally followed by the
//! number of simulated runs per cell, default 400; `RESAMPLES` sets the bootstrap's, default 400).

use passk::analysis::bootstrap::{Interval, pass_hat_k_intervals, success_interval};
use passk::analysis::interval;
use passk::analysis::mt19937::PyRandom;
use passk::analysis::passk::pass_hat_k_task;

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
    let mut worst: [(f64, String); 4] = std::array::from_fn(|_| (f64::INFINITY, String::new()));
    let mut sums = [0.0; 4];
    let mut cells = 0;
    for mixed in [false, true] {
        let regime = if mixed { "mixed" } else { "equal" };
        for mu in RATES {
            for tasks in TASKS {
                let mut row = Vec::new();
                for k in TRIALS {
                    let hits = cell(mu, mixed, tasks, k, sims, resamples);
                    let cov = hits.map(|h| h as f64 / sims as f64);
                    for i in 0..4 {
                        if cov[i] < worst[i].0 {
                            worst[i] = (cov[i], format!("{regime} mu={mu} T={tasks} k={k}"));
                        }
                        sums[i] += cov[i];
                    }
                    cells += 1;
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
    for (i, name) in names.iter().enumerate() {
        println!(
            "{name:<30} lowest {:5.1}% ({}), mean {:5.1}% over {cells} cells",
            100.0 * worst[i].0,
            worst[i].1,
            100.0 * sums[i] / cells as f64
        );
    }
}
