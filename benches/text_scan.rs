//! Time to scan one reply of 1 MiB for text tool calls, for the shapes that used to take quadratic
//! time (64 KiB of `{` took 8.5 s) and for a reply packed with calls. Target: every input under one
//! second in release; the work is bounded at `passk::wire::tool_call::scan::WORK_PER_BYTE` per byte.
//! Run with `cargo bench --bench text_scan [-- MIB]`.

use passk::wire::tool_call::extract_text;
use std::time::Instant;

fn main() {
    let mib: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1);
    let size = mib << 20;
    let known: Vec<String> = ["find_customer", "get_order", "create_ticket"]
        .map(String::from)
        .to_vec();
    let call = r#"{"name": "create_ticket", "arguments": {"customer_id": "C1", "summary": "x"}}"#;
    let inputs: Vec<(&str, String)> = vec![
        ("open braces", "{".repeat(size)),
        (
            "name keys, never closed",
            r#"{"name": "get_order", "arguments": {"#.repeat(size / 36),
        ),
        ("quote-escaped braces", r#"{\""#.repeat(size / 3)),
        (
            "python dicts, never closed",
            "{'name': 'get_order', ".repeat(size / 22),
        ),
        (
            "pythonic calls, never closed",
            r#"[get_order(order_id=""#.repeat(size / 21),
        ),
        (
            "fenced python calls",
            "```python\nget_order(order_id=\"5105\")\n```\n".repeat(size / 40),
        ),
        (
            "think blocks",
            "<think>{\"name\": \"get_order\"}".repeat(size / 30),
        ),
        ("calls back to back", call.repeat(size / call.len())),
    ];
    println!("{mib} MiB per input");
    for (label, text) in &inputs {
        let t0 = Instant::now();
        let found = extract_text(text, &known).len();
        println!(
            "{label:>30}: {:>8.3} s, {found} calls",
            t0.elapsed().as_secs_f64()
        );
    }
}
