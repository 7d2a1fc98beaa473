//! `passk cost`: seed 004's illustrative cost model, printed as a small table on stdout: cost per
//! attempt, per successful task and the break-even price ratio for the orchestrator (with and
//! without caching when a cache discount is given) and, with `--leaf`, for a one-turn leaf node.

use crate::cli::CostArgs;
use passk::analysis::figures::cost_model::{CostComparison, NodeModel, Workload, compare_nodes};

/// Runs the command; returns the exit code.
pub(super) fn run(args: &CostArgs) -> anyhow::Result<u8> {
    for (name, rate) in [
        ("--capable-success", args.capable_success),
        ("--cheaper-success", args.cheaper_success),
    ]
    .into_iter()
    .chain(args.leaf.iter().map(|r| ("--leaf", *r)))
    {
        if !(rate > 0.0 && rate <= 1.0) {
            return Err(super::usage_error(&format!(
                "{name} must be in (0, 1], got {rate}"
            )));
        }
    }
    for (name, price) in [
        ("--capable-price", args.capable_price),
        ("--cheaper-price", args.cheaper_price),
    ] {
        if !(price > 0.0 && price.is_finite()) {
            return Err(super::usage_error(&format!(
                "{name} must be a finite positive number, got {price}"
            )));
        }
    }
    if let Some(d) = args.cache_discount
        && !(0.0..=1.0).contains(&d)
    {
        return Err(super::usage_error(&format!(
            "--cache-discount must be between 0 and 1, got {d}"
        )));
    }
    let capable = NodeModel {
        price_per_m: args.capable_price,
        turns: args.capable_turns,
        success_rate: args.capable_success,
    };
    let cheaper = NodeModel {
        price_per_m: args.cheaper_price,
        turns: args.cheaper_turns,
        success_rate: args.cheaper_success,
    };
    let plain = Workload {
        base_prompt: args.base_prompt,
        growth: args.growth,
        output: args.output,
        cache_discount: None,
    };
    let mut out = String::new();
    out += &table("Orchestrator", &compare_nodes(&capable, &cheaper, &plain));
    if let Some(d) = args.cache_discount {
        let cached = Workload {
            cache_discount: Some(d),
            ..plain.clone()
        };
        let title = format!("Orchestrator, re-sent input at {:.0}%", d * 100.0);
        out += "\n";
        out += &table(&title, &compare_nodes(&capable, &cheaper, &cached));
    }
    if let [a, b] = args.leaf[..] {
        let leaf = |m: &NodeModel, rate| NodeModel {
            turns: 1,
            success_rate: rate,
            ..m.clone()
        };
        out += "\n";
        out += &table(
            "Leaf node (one turn)",
            &compare_nodes(&leaf(&capable, a), &leaf(&cheaper, b), &plain),
        );
    }
    passk::outln!("{}", out.trim_end_matches('\n'));
    Ok(crate::exit_code::SUCCESS)
}

fn table(title: &str, c: &CostComparison) -> String {
    let pct = |x: f64| format!("{:+.0}%", x * 100.0);
    let mut s = format!("{title}\n");
    s += "| | capable | cheaper | change |\n|---|---:|---:|---:|\n";
    s += &format!(
        "| Tokens billed per attempt | {:.0} | {:.0} | |\n",
        c.capable.billed_tokens, c.cheaper.billed_tokens
    );
    s += &format!(
        "| Cost per attempt | ${:.4} | ${:.4} | {} |\n",
        c.capable.cost_per_attempt,
        c.cheaper.cost_per_attempt,
        pct(c.attempt_change)
    );
    s += &format!(
        "| Cost per successful task | ${:.4} | ${:.4} | {} |\n",
        c.capable.cost_per_success,
        c.cheaper.cost_per_success,
        pct(c.success_change)
    );
    s += &format!(
        "Price ratio {:.2}x; break-even {:.2}x: the cheaper model is {} per successful task.\n",
        c.price_ratio,
        c.break_even,
        if c.success_change < 0.0 {
            "cheaper"
        } else {
            "more expensive"
        }
    );
    s
}
