//! An anytime-valid confidence sequence for the task-paired success difference, updated round by
//! round: the betting confidence sequence for bounded means (Waudby-Smith and Ramdas, JRSS-B
//! 2024), hedged, with predictable plug-in bets, on a grid of candidate means.
//!
//! A round holds one trial of every task for each of two models; its observations are the tasks'
//! differences `pass_large - pass_small` in [-1, 1], mapped to [0, 1]. The bet is fixed for a
//! whole round and chosen from earlier rounds only. Conditional on the tasks, the trials of a
//! round are independent, so for the true mean difference over these tasks the product of a
//! round's factors has expectation at most 1 (AM-GM: the factors' expected excesses sum to zero),
//! the capital is a nonnegative supermartingale at round ends, and by Ville's inequality it
//! reaches 1/alpha with probability at most alpha, at any round, however the run decides to stop.

/// Points of the grid of candidate means on [0, 1] (steps of 0.05 pp of the difference).
pub const GRID: usize = 4001;
/// Largest fraction of capital put at stake on one observation (WSR's truncation c).
const STAKE: f64 = 0.75;

/// What the sequence says after a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Not settled yet: play another round.
    Continue,
    /// The interval lies above 0: the large model succeeds more often.
    LargeBetter,
    /// The interval lies below 0: the small model succeeds more often.
    SmallBetter,
    /// The interval lies within plus or minus the margin: equivalent within it.
    Equivalent,
}

impl Decision {
    /// Whether the run stops here.
    pub fn stops(self) -> bool {
        self != Decision::Continue
    }
}

/// One round's state, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RoundState {
    /// Round number (the trial index, from 0).
    pub round: u32,
    /// Task pairs in this round.
    pub tasks: usize,
    /// Mean difference (large - small) over all rounds so far.
    pub mean: f64,
    /// Low end of the sequence's interval, as a difference.
    pub low: f64,
    /// High end of the sequence's interval, as a difference.
    pub high: f64,
    /// What the sequence says.
    pub decision: Decision,
}

/// The stopping rule's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Error level: the sequence covers the true difference at every round with probability
    /// at least 1 - alpha.
    pub alpha: f64,
    /// Equivalence margin, as a difference (0.05 = 5 pp).
    pub margin: f64,
}

/// The running confidence sequence.
#[derive(Debug, Clone)]
pub struct Sequence {
    rule: Rule,
    /// log of the capital betting up (`+`) and down (`-`) at each grid mean.
    log_up: Vec<f64>,
    log_down: Vec<f64>,
    /// Grid means rejected at some round (running intersection).
    rejected: Vec<bool>,
    /// Observations so far, their sum, and their sum of squared deviations from the running mean.
    count: usize,
    sum: f64,
    squares: f64,
    rounds: Vec<RoundState>,
}

fn grid_mean(i: usize) -> f64 {
    i as f64 / (GRID - 1) as f64
}

impl Sequence {
    /// A sequence before any round.
    pub fn new(rule: Rule) -> Sequence {
        Sequence {
            rule,
            log_up: vec![0.0; GRID],
            log_down: vec![0.0; GRID],
            rejected: vec![false; GRID],
            count: 0,
            sum: 0.0,
            squares: 0.0,
            rounds: Vec::new(),
        }
    }

    /// The states of the rounds so far.
    pub fn rounds(&self) -> &[RoundState] {
        &self.rounds
    }

    /// The predictable plug-in bet for the next round (WSR eq. 26), from earlier rounds only:
    /// `sqrt(2 log(2/alpha) / (var * t * log(1 + t)))` with `t` the next observation's index
    /// and `var` a variance estimate shrunk towards 1/4.
    fn next_bet(&self) -> f64 {
        let t = (self.count + 1) as f64;
        let var = (0.25 + self.squares) / t;
        (2.0 * (2.0 / self.rule.alpha).ln() / (var * t * (1.0 + t).ln())).sqrt()
    }

    /// Adds a round of task differences (each in [-1, 1]; values outside are clamped) and returns
    /// its state.
    pub fn push_round(&mut self, round: u32, differences: &[f64]) -> RoundState {
        let bet = self.next_bet();
        let xs: Vec<f64> = differences
            .iter()
            .map(|d| (d.clamp(-1.0, 1.0) + 1.0) / 2.0)
            .collect();
        let threshold = (1.0 / self.rule.alpha).ln();
        for i in 0..GRID {
            let m = grid_mean(i);
            let up = bet.min(STAKE / m.max(f64::MIN_POSITIVE));
            let down = bet.min(STAKE / (1.0 - m).max(f64::MIN_POSITIVE));
            for &x in &xs {
                self.log_up[i] += (1.0 + up * (x - m)).ln();
                self.log_down[i] += (1.0 - down * (x - m)).ln();
            }
            // Hedged capital: half the wealth on each side.
            let hedged = log_add(self.log_up[i], self.log_down[i]) - 2f64.ln();
            if hedged >= threshold {
                self.rejected[i] = true;
            }
        }
        for &x in &xs {
            let before = if self.count == 0 {
                0.5
            } else {
                self.sum / self.count as f64
            };
            self.count += 1;
            self.sum += x;
            self.squares += (x - before).powi(2);
        }
        let (low, high) = self.interval();
        let mean = if self.count == 0 {
            0.0
        } else {
            2.0 * self.sum / self.count as f64 - 1.0
        };
        let state = RoundState {
            round,
            tasks: xs.len(),
            mean,
            low,
            high,
            decision: decide(low, high, self.rule.margin),
        };
        self.rounds.push(state);
        state
    }

    /// The interval as a difference in [-1, 1]: the hull of the grid means never rejected,
    /// widened by one grid step on each side so that it also covers means between grid points.
    pub fn interval(&self) -> (f64, f64) {
        let first = self.rejected.iter().position(|r| !r);
        let last = self.rejected.iter().rposition(|r| !r);
        match (first, last) {
            (Some(a), Some(b)) => (
                2.0 * grid_mean(a.saturating_sub(1)) - 1.0,
                2.0 * grid_mean((b + 1).min(GRID - 1)) - 1.0,
            ),
            // Every grid mean rejected: only possible with probability at most alpha; the
            // interval collapses to the observed mean.
            _ => {
                let m = 2.0 * self.sum / self.count.max(1) as f64 - 1.0;
                (m, m)
            }
        }
    }
}

/// The decision an interval implies: a difference when it excludes 0, equivalence when it lies
/// strictly within plus or minus the margin.
pub fn decide(low: f64, high: f64, margin: f64) -> Decision {
    if low > 0.0 {
        Decision::LargeBetter
    } else if high < 0.0 {
        Decision::SmallBetter
    } else if low > -margin && high < margin {
        Decision::Equivalent
    } else {
        Decision::Continue
    }
}

/// `ln(e^a + e^b)` without overflow.
fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    if hi == f64::NEG_INFINITY {
        return hi;
    }
    hi + (lo - hi).exp().ln_1p()
}

/// Replays rounds of task differences through a fresh sequence, stopping after the first round
/// that decides; returns the states played.
pub fn replay(rule: Rule, rounds: &[Vec<f64>]) -> Vec<RoundState> {
    let mut seq = Sequence::new(rule);
    for (r, diffs) in rounds.iter().enumerate() {
        if seq.push_round(r as u32, diffs).decision.stops() {
            break;
        }
    }
    seq.rounds
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::intervals::mt19937::PyRandom;

    const RULE: Rule = Rule {
        alpha: 0.05,
        margin: 0.05,
    };

    /// Rounds of `tasks` paired Bernoulli trials with pass rates `small` and `large`.
    fn rounds(rng: &mut PyRandom, n: usize, tasks: usize, small: f64, large: f64) -> Vec<Vec<f64>> {
        (0..n)
            .map(|_| {
                (0..tasks)
                    .map(|_| {
                        let l = f64::from(u8::from(rng.random() < large));
                        let s = f64::from(u8::from(rng.random() < small));
                        l - s
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn covers_the_true_difference_at_every_round_on_a_known_stream() {
        let mut rng = PyRandom::new(11);
        let (small, large) = (0.4, 0.6);
        let mut missed = 0;
        let experiments = 200;
        for _ in 0..experiments {
            let mut seq = Sequence::new(RULE);
            for (r, diffs) in rounds(&mut rng, 8, 10, small, large).iter().enumerate() {
                let s = seq.push_round(r as u32, diffs);
                if s.low > large - small || s.high < large - small {
                    missed += 1;
                    break;
                }
            }
        }
        // Ville: at most alpha of the experiments ever miss; with 200 of them, 10 expected at
        // most and far fewer in practice.
        assert!(missed <= 10, "{missed} of {experiments} missed");
    }

    #[test]
    fn covers_the_mean_when_tasks_differ_in_opposite_directions() {
        // Half the tasks favour the large model by 60 pp, half the small one: the mean is 0.
        let mut rng = PyRandom::new(17);
        let mut wrong = 0;
        let experiments = 200;
        for _ in 0..experiments {
            let rounds: Vec<Vec<f64>> = (0..8)
                .map(|_| {
                    (0..12)
                        .map(|j| {
                            let (s, l) = if j % 2 == 0 { (0.2, 0.8) } else { (0.8, 0.2) };
                            f64::from(u8::from(rng.random() < l))
                                - f64::from(u8::from(rng.random() < s))
                        })
                        .collect()
                })
                .collect();
            let last = replay(RULE, &rounds).last().map(|s| s.decision);
            wrong += usize::from(matches!(
                last,
                Some(Decision::LargeBetter | Decision::SmallBetter)
            ));
        }
        assert!(
            wrong <= 10,
            "{wrong} of {experiments} declared a difference"
        );
    }

    #[test]
    fn width_shrinks_round_by_round_and_intervals_nest() {
        let mut rng = PyRandom::new(3);
        let mut seq = Sequence::new(RULE);
        let mut last = (-1.0, 1.0);
        let mut first = None;
        for (r, diffs) in rounds(&mut rng, 12, 24, 0.5, 0.5).iter().enumerate() {
            let s = seq.push_round(r as u32, diffs);
            assert!(s.low >= last.0 && s.high <= last.1, "{s:?} after {last:?}");
            assert!(s.high - s.low < last.1 - last.0, "{s:?} after {last:?}");
            last = (s.low, s.high);
            first.get_or_insert(s.high - s.low);
        }
        let first = first.unwrap_or(2.0);
        assert!(last.1 - last.0 < first / 2.0, "{last:?} from {first}");
    }

    #[test]
    fn a_large_gap_is_decided_and_no_gap_is_equivalent() {
        let states = replay(RULE, &vec![vec![1.0; 24]; 10]);
        let last = states.last().expect("a round");
        assert_eq!(last.decision, Decision::LargeBetter);
        assert!(states.len() <= 2, "{states:?}");
        let states = replay(RULE, &vec![vec![-1.0; 24]; 10]);
        assert_eq!(
            states.last().map(|s| s.decision),
            Some(Decision::SmallBetter)
        );
        let states = replay(RULE, &vec![vec![0.0; 24]; 20]);
        let last = states.last().expect("a round");
        assert_eq!(last.decision, Decision::Equivalent, "{states:?}");
        assert!(last.low > -0.05 && last.high < 0.05 && last.mean == 0.0);
    }

    #[test]
    fn decide_reads_the_interval() {
        assert_eq!(decide(0.01, 0.3, 0.05), Decision::LargeBetter);
        assert_eq!(decide(-0.3, -0.01, 0.05), Decision::SmallBetter);
        assert_eq!(decide(-0.04, 0.04, 0.05), Decision::Equivalent);
        assert_eq!(decide(-0.04, 0.06, 0.05), Decision::Continue);
        assert_eq!(decide(0.0, 0.01, 0.05), Decision::Equivalent);
    }
}
