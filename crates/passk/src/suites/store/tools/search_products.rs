//! `search_products(query)`: products whose name (or sku) holds the query's words, best match
//! first, with price and stock.

use super::{Args, ToolResult, ToolSpec};
use crate::suites::store::state::StoreState;
use serde_json::{Value, json};

/// Table entry.
pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "search_products",
    params: &["query"],
    run,
};

/// Words too common to search on.
const STOP: [&str; 8] = ["the", "and", "for", "with", "any", "you", "have", "your"];

fn run(state: &mut StoreState, args: &Args) -> ToolResult {
    let query = args.get("query");
    let words: Vec<String> = query
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3 && !STOP.contains(w))
        .map(|w| {
            if w.len() > 3 {
                w.strip_suffix('s').unwrap_or(w).to_string()
            } else {
                w.to_string()
            }
        })
        .collect();
    let mut scored: Vec<(usize, &crate::suites::store::data::Product)> = state
        .products
        .iter()
        .map(|p| {
            let hay = format!("{} {}", p.name.to_lowercase(), p.sku.to_lowercase());
            (words.iter().filter(|w| hay.contains(w.as_str())).count(), p)
        })
        .filter(|(score, _)| *score > 0)
        .collect();
    if scored.is_empty() {
        return Err(format!("no product matches '{query}'"));
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.sku.cmp(&b.1.sku)));
    let products: Vec<Value> = scored
        .iter()
        .map(|(_, p)| {
            json!({
                "sku": p.sku,
                "name": p.name,
                "price": p.price.to_string(),
                "stock": p.stock,
                "in_stock": p.stock > 0,
            })
        })
        .collect();
    Ok(json!({"products": products}))
}
