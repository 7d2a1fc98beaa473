//! Seed 004's illustrative cost model of one node, priced per successful task rather than per call.
//!
//! Each turn re-sends the whole conversation: input tokens of turn `t` (1-based) are
//! `base + growth * (t - 1)`, so `T` turns send `T * base + growth * T(T-1)/2` input tokens
//! (3 turns of 4,000 + 800: 14,400; 7 turns: 44,800); each turn writes `output` tokens, priced
//! like input (one blended price per token). With caching, the part of a turn's input that the
//! previous turn already sent (its whole input) is billed at `cache_discount` of the price.
//! A failed attempt is retried until one succeeds, so cost per success = cost per attempt /
//! success rate; the cheaper model wins only if price ratio > token ratio x success ratio.

use serde::{Deserialize, Serialize};

/// One model at one node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeModel {
    /// Price, dollars per million tokens (input and output alike).
    pub price_per_m: f64,
    /// Turns (model calls) per attempt.
    pub turns: u32,
    /// Share of attempts that succeed (0..1].
    pub success_rate: f64,
}

/// The workload shared by both models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// System prompt + tools + request, tokens.
    pub base_prompt: u64,
    /// Tokens each turn adds to the context.
    pub growth: u64,
    /// Output tokens per turn.
    pub output: u64,
    /// Price factor of re-sent input; `None`: no caching.
    pub cache_discount: Option<f64>,
}

/// The cost of one model at one node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeCost {
    /// Input tokens sent per attempt (before any cache discount).
    pub input_tokens: u64,
    /// Output tokens per attempt.
    pub output_tokens: u64,
    /// Billed tokens per attempt (re-sent input at the cache discount when caching).
    pub billed_tokens: f64,
    /// Dollars per attempt.
    pub cost_per_attempt: f64,
    /// Dollars per successful task.
    pub cost_per_success: f64,
}

/// Capable vs cheaper at one node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostComparison {
    /// The capable model.
    pub capable: NodeCost,
    /// The cheaper model.
    pub cheaper: NodeCost,
    /// Cheaper's cost per attempt relative to capable's, minus 1 (what a dashboard shows).
    pub attempt_change: f64,
    /// Cheaper's cost per success relative to capable's, minus 1 (what you pay for).
    pub success_change: f64,
    /// Capable's price / cheaper's price.
    pub price_ratio: f64,
    /// Billed-token ratio x success ratio: the price ratio the cheaper model must beat.
    pub break_even: f64,
}

/// Input tokens of turn `t` (1-based).
pub fn turn_input(w: &Workload, t: u32) -> u64 {
    w.base_prompt + w.growth * u64::from(t.saturating_sub(1))
}

/// The cost of `m` on workload `w`.
pub fn node_cost(m: &NodeModel, w: &Workload) -> NodeCost {
    let mut input = 0u64;
    let mut billed = 0.0;
    let mut prev = 0u64;
    for t in 1..=m.turns {
        let x = turn_input(w, t);
        input += x;
        billed += match w.cache_discount {
            Some(d) => {
                let prefix = prev.min(x);
                d * prefix as f64 + (x - prefix) as f64
            }
            None => x as f64,
        };
        prev = x;
    }
    let output = w.output * u64::from(m.turns);
    let billed_tokens = billed + output as f64;
    let cost_per_attempt = billed_tokens * m.price_per_m / 1e6;
    NodeCost {
        input_tokens: input,
        output_tokens: output,
        billed_tokens,
        cost_per_attempt,
        cost_per_success: cost_per_attempt / m.success_rate,
    }
}

/// Capable vs cheaper on the same workload.
pub fn compare_nodes(capable: &NodeModel, cheaper: &NodeModel, w: &Workload) -> CostComparison {
    let a = node_cost(capable, w);
    let b = node_cost(cheaper, w);
    CostComparison {
        attempt_change: b.cost_per_attempt / a.cost_per_attempt - 1.0,
        success_change: b.cost_per_success / a.cost_per_success - 1.0,
        price_ratio: capable.price_per_m / cheaper.price_per_m,
        break_even: (b.billed_tokens / a.billed_tokens)
            * (capable.success_rate / cheaper.success_rate),
        capable: a,
        cheaper: b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn models(turns: (u32, u32), success: (f64, f64)) -> (NodeModel, NodeModel) {
        (
            NodeModel {
                price_per_m: 2.0,
                turns: turns.0,
                success_rate: success.0,
            },
            NodeModel {
                price_per_m: 0.5,
                turns: turns.1,
                success_rate: success.1,
            },
        )
    }

    fn workload(cache: Option<f64>) -> Workload {
        Workload {
            base_prompt: 4000,
            growth: 800,
            output: 200,
            cache_discount: cache,
        }
    }

    fn round(x: f64, digits: i32) -> f64 {
        let f = 10f64.powi(digits);
        (x * f).round() / f
    }

    #[test]
    fn seed_004_worked_example() {
        let (a, b) = models((3, 7), (0.9, 0.6));
        let c = compare_nodes(&a, &b, &workload(None));
        assert_eq!(
            (c.capable.input_tokens, c.cheaper.input_tokens),
            (14_400, 44_800)
        );
        assert_eq!(round(c.capable.cost_per_attempt, 4), 0.0300);
        assert_eq!(round(c.cheaper.cost_per_attempt, 4), 0.0231);
        assert_eq!(round(c.attempt_change, 2), -0.23);
        assert_eq!(round(c.capable.cost_per_success, 4), 0.0333);
        assert_eq!(round(c.cheaper.cost_per_success, 4), 0.0385);
        assert_eq!(round(c.success_change, 2), 0.16);
        assert_eq!(round(c.break_even, 2), 4.62);
        assert_eq!(c.price_ratio, 4.0);
    }

    #[test]
    fn seed_004_with_caching() {
        // capable: 4000 + (400 + 800) + (480 + 800) = 6480 input + 600 output;
        // cheaper: 4000 + 6 * 800 + 0.1 * 36000 = 12400 input + 1400 output.
        let (a, b) = models((3, 7), (0.9, 0.6));
        let c = compare_nodes(&a, &b, &workload(Some(0.1)));
        assert!((c.capable.billed_tokens - 7080.0).abs() < 1e-9);
        assert!((c.cheaper.billed_tokens - 13800.0).abs() < 1e-9);
        assert_eq!(round(c.capable.cost_per_success, 4), 0.0157);
        assert_eq!(round(c.cheaper.cost_per_success, 4), 0.0115);
        assert_eq!(round(c.success_change, 2), -0.27);
        assert_eq!(round(c.break_even, 2), 2.92);
    }

    #[test]
    fn seed_004_leaf_node() {
        let (a, b) = models((1, 1), (0.98, 0.97));
        let c = compare_nodes(&a, &b, &workload(None));
        assert_eq!(round(c.success_change, 2), -0.75);
        assert_eq!(c.attempt_change, -0.75);
    }
}
