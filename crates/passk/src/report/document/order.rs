//! Which configurations and models a report shows, and in which order: the primary group, a
//! group's models in report order, and the groups sorted by key.

use crate::analysis::{GroupSummary, ModelSummary, Summary};
use crate::runner::record::Mode;

/// The group the verdict, the charts and the terminal table describe: of the first suite the run
/// asked for, the agent group with the largest call cap (the full budget), else the first group.
pub fn primary_group(summary: &Summary) -> Option<(&String, &GroupSummary)> {
    // The first suite asked for that has a configuration here leads.
    let first = summary
        .suites
        .iter()
        .find(|s| summary.groups.values().any(|g| &g.suite == *s));
    let leads = |g: &GroupSummary| first.is_none_or(|s| &g.suite == s);
    summary
        .groups
        .iter()
        .filter(|(_, g)| g.mode == Mode::Agent && leads(g))
        .max_by(|a, b| a.1.call_cap.cmp(&b.1.call_cap).then_with(|| b.0.cmp(a.0)))
        .or_else(|| summary.groups.iter().next())
}

/// The models of a group, in the summary's report order.
pub fn group_models<'s>(
    summary: &'s Summary,
    g: &'s GroupSummary,
) -> Vec<(&'s str, &'s ModelSummary)> {
    summary
        .models
        .iter()
        .filter_map(|m| g.models.get(m).map(|s| (m.as_str(), s)))
        .collect()
}

/// Sort key of a configuration key: its text with every run of digits compared as a number, so
/// `store/cap=4` comes before `store/cap=10`.
pub fn group_order(key: &str) -> Vec<(String, u64)> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut digits = String::new();
    for ch in key.chars() {
        if ch.is_ascii_digit() {
            digits.push(ch);
        } else {
            if !digits.is_empty() {
                parts.push((
                    std::mem::take(&mut text),
                    digits.parse().unwrap_or(u64::MAX),
                ));
                digits.clear();
            }
            text.push(ch);
        }
    }
    parts.push((text, digits.parse().unwrap_or(0)));
    parts
}

/// The configurations in report order: by [`group_order`] of their keys.
pub fn ordered_groups(s: &Summary) -> Vec<(&String, &GroupSummary)> {
    let mut groups: Vec<(&String, &GroupSummary)> = s.groups.iter().collect();
    groups.sort_by_cached_key(|(k, _)| group_order(k));
    groups
}
