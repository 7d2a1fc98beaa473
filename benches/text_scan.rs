//! Time to scan one reply for text tool calls, per shape and size: the shapes that used to take
//! quadratic time (64 KiB of `{` took 8.5 s), replies packed with calls, and each family's token
//! format back to back. Target: every shape scans 1 MiB in under 25 ms (median) and time per MiB
//! stays flat from 1 to 8 MiB; the work is bounded at `passk::wire::tool_call::scan::WORK_PER_BYTE`
//! per byte. Run with `cargo bench --bench text_scan [-- RUNS] [SHAPE] [--mib=1,8]` (default 7 runs
//! per cell; SHAPE picks the shapes whose label contains it; `--mib` picks the sizes, so that an
//! instruction count under callgrind can compare 1 with 8 MiB; the table gives the median, in ms
//! per MiB).

use passk::wire::tool_call::read_text;
use std::time::Instant;

/// Sizes measured unless `--mib` says otherwise, MiB.
const SIZES: [usize; 4] = [1, 2, 4, 8];

fn shapes() -> Vec<(&'static str, String)> {
    let call = r#"{"name": "create_ticket", "arguments": {"customer_id": "C1", "summary": "x"}}"#;
    vec![
        ("open braces", "{".into()),
        (
            "name keys, never closed",
            r#"{"name": "get_order", "arguments": {"#.into(),
        ),
        ("quote-escaped braces", r#"{\""#.into()),
        ("python dicts, never closed", "{'name': 'get_order', ".into()),
        ("pythonic calls, never closed", r#"[get_order(order_id=""#.into()),
        (
            "fenced python calls",
            "```python\nget_order(order_id=\"5105\")\n```\n".into(),
        ),
        ("think blocks", "<think>{\"name\": \"get_order\"}".into()),
        ("react openers", "Action: get_order\n".into()),
        ("calls back to back", call.into()),
        (
            "calls in prose",
            format!("I won't send {call} until you confirm.\n\n"),
        ),
        (
            "calls offered in prose",
            format!("If you'd like, I could also cancel it with {call}, but only if you ask me to. Which would you prefer? "),
        ),
        (
            "dsml calls",
            "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_order\">\n<｜DSML｜parameter name=\"order_id\" string=\"true\">5105</｜DSML｜parameter>\n</｜DSML｜invoke>\n".into(),
        ),
        (
            "glm calls",
            "<tool_call>get_order<arg_key>order_id</arg_key><arg_value>5105</arg_value></tool_call>".into(),
        ),
        (
            "stripped harmony",
            "analysisNeed the order.assistantcommentary to=functions.get_order json{\"order_id\":\"5105\"}".into(),
        ),
        (
            "harmony calls",
            r#"<|start|>assistant<|channel|>commentary to=functions.get_order <|constrain|>json<|message|>{"order_id": "5105"}<|call|>"#.into(),
        ),
        (
            "deepseek calls",
            "<｜tool▁call▁begin｜>get_order<｜tool▁sep｜>{\"order_id\": \"5105\"}<｜tool▁call▁end｜>".into(),
        ),
        ("token openers", "<|".into()),
        (
            "gemma calls",
            r#"<|tool_call>call:get_order{order_id:<|"|>5105<|"|>}<tool_call|>"#.into(),
        ),
        ("tags in prose", "use <tool_call></tool_call> to call ".into()),
        (
            "qwen3-coder calls",
            "<tool_call>\n<function=get_order>\n<parameter=order_id>\n5105\n</parameter>\n</function>\n</tool_call>\n".into(),
        ),
    ]
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let runs: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(7).max(1);
    let sizes: Vec<usize> = args
        .iter()
        .find_map(|a| a.strip_prefix("--mib="))
        .map_or(SIZES.to_vec(), |l| {
            l.split(',').filter_map(|m| m.parse().ok()).collect()
        });
    // Any other argument picks the shapes whose label contains it.
    let only: Vec<&String> = args
        .iter()
        .filter(|a| a.parse::<usize>().is_err() && !a.starts_with("--mib="))
        .collect();
    let known: Vec<String> = ["find_customer", "get_order", "create_ticket"]
        .map(String::from)
        .to_vec();
    let first = sizes.first().copied().unwrap_or(1);
    println!("median ms per MiB over {runs} runs; calls found at {first} MiB");
    let head: Vec<String> = sizes.iter().map(|m| format!("{m} MiB")).collect();
    println!(
        "| shape | {} | calls at {first} MiB |\n|---|{}---:|",
        head.join(" | "),
        "---:|".repeat(sizes.len())
    );
    for (label, unit) in shapes()
        .into_iter()
        .filter(|(l, _)| only.is_empty() || only.iter().any(|o| l.contains(o.as_str())))
    {
        let mut cells = Vec::new();
        let mut found_at_first = 0;
        for &mib in &sizes {
            let text = unit.repeat((mib << 20).div_ceil(unit.len()));
            let times: Vec<f64> = (0..runs)
                .map(|_| {
                    let t0 = Instant::now();
                    let read = read_text(&text, &known);
                    // Every call the text makes, the ones past those kept whole included.
                    let found = read.calls.len() + read.past_kept.calls;
                    if mib == first {
                        found_at_first = found;
                    }
                    t0.elapsed().as_secs_f64() * 1e3 / mib as f64
                })
                .collect();
            cells.push(format!("{:.1}", median(times)));
        }
        println!("| {label} | {} | {found_at_first} |", cells.join(" | "));
    }
}
