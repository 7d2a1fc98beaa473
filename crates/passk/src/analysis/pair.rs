//! Which models a report compares: the models in report order, the pair every break-even uses
//! and the reference model of the ladder.

use crate::runner::record::Manifest;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The model pair of every break-even.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pairing {
    /// The model whose price must drop ("how many times cheaper must it be").
    pub small: String,
    /// The model it is compared with.
    pub large: String,
    /// How the pair was chosen.
    pub rule: String,
}

/// Parses an Ollama parameter size ("3.1B", "494.03M") into a parameter count.
pub fn parameter_count(size: &str) -> Option<f64> {
    let s = size.trim();
    let (num, mult) = match s.chars().last()?.to_ascii_uppercase() {
        'B' => (&s[..s.len() - 1], 1e9),
        'M' => (&s[..s.len() - 1], 1e6),
        'K' => (&s[..s.len() - 1], 1e3),
        'T' => (&s[..s.len() - 1], 1e12),
        _ => (s, 1.0),
    };
    num.trim().parse::<f64>().ok().map(|n| n * mult)
}

/// How the pair is chosen when it is named (`passk report --pair`).
pub(crate) const NAMED: &str = "named with --pair";

/// The models in report order and the pair: models with records, sorted by parameter size when
/// the manifest knows every one's size, otherwise in manifest order (models missing from the
/// manifest last, by name); "small" and "large" are the first two, unless `named` names two
/// models with records (small, large).
pub fn order_models(
    manifest: &Manifest,
    present: &BTreeSet<String>,
    named: Option<&(String, String)>,
) -> (Vec<String>, Option<Pairing>) {
    let (models, pairing) = ordered(manifest, present);
    let named = named
        .filter(|(a, b)| a != b && present.contains(a) && present.contains(b))
        .map(|(small, large)| Pairing {
            small: small.clone(),
            large: large.clone(),
            rule: NAMED.to_string(),
        });
    (models, named.or(pairing))
}

/// [`order_models`] by the rule alone.
fn ordered(manifest: &Manifest, present: &BTreeSet<String>) -> (Vec<String>, Option<Pairing>) {
    let mut models: Vec<String> = manifest
        .models
        .iter()
        .map(|m| m.name.clone())
        .filter(|m| present.contains(m))
        .collect();
    let mut seen: BTreeSet<String> = models.iter().cloned().collect();
    for m in present {
        if seen.insert(m.clone()) {
            models.push(m.clone());
        }
    }
    let sizes: Vec<Option<f64>> = models
        .iter()
        .map(|m| {
            manifest
                .models
                .iter()
                .find(|i| &i.name == m)
                .and_then(|i| i.parameter_size.as_deref())
                .and_then(parameter_count)
        })
        .collect();
    let by_size = sizes.iter().all(Option::is_some);
    let rule = if by_size {
        let mut pairs: Vec<(f64, String)> = sizes.into_iter().flatten().zip(models).collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        // A sort keeps the manifest order of equal sizes: the pair is then ordered by the
        // manifest, not by size, and the rule says so.
        let tied = pairs.len() >= 2 && pairs[0].0 == pairs[1].0;
        models = pairs.into_iter().map(|p| p.1).collect();
        if tied {
            "first two models by parameter size, equal sizes in manifest order"
        } else {
            "first two models by parameter size"
        }
    } else {
        "first two models in manifest order"
    };
    let pairing = (models.len() >= 2).then(|| Pairing {
        small: models[0].clone(),
        large: models[1].clone(),
        rule: rule.to_string(),
    });
    (models, pairing)
}

/// The reference model of the ladder: the one asked for when it has records, else the last in
/// report order (the largest by parameter size when the manifest knows the sizes); `None` unless
/// there are more than two models.
pub fn reference_model(models: &[String], asked: Option<&str>) -> Option<String> {
    if models.len() <= 2 {
        return None;
    }
    asked
        .filter(|a| models.iter().any(|m| m == a))
        .map(str::to_string)
        .or_else(|| models.last().cloned())
}
