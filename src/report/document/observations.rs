//! Values read straight off the records, one per conversation or call, for the charts and checks
//! that a summary does not hold: latency per conversation, the GPU timeline, the grader digests.

use crate::analysis::{GroupSummary, Summary};
use crate::runner::record::{ConversationRecord, RouterRecord};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// One point of the GPU timeline: a call's mean utilization at its midpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuPoint {
    /// Seconds since the run's first recorded call start.
    pub t_s: f64,
    /// The call's mean GPU utilization, percent (`None`: no sample in its window).
    pub util_pct: Option<f64>,
    /// Model that made the call (one shared text per model: a run holds a point per call).
    pub model: Arc<str>,
    /// Call start and end, seconds since the run's first call (for the loaded-model bands).
    pub span: (f64, f64),
}

/// Values read straight off the records, one per conversation or call, for the charts and checks
/// that a summary does not hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observations {
    /// By group key, then model: latency of each graded conversation (sum of its orchestrator
    /// calls' latency, seconds), sorted ascending; conversations without any latency are left out.
    pub conversation_latency: BTreeMap<String, BTreeMap<String, Vec<f64>>>,
    /// Every call with a start time, in time order (then by model); empty when no call has a
    /// GPU utilization reading (a run without GPU telemetry), as there is then nothing to draw.
    pub gpu_timeline: Vec<GpuPoint>,
    /// Grader digests stamped on the records.
    pub record_grader_digests: BTreeSet<String>,
}

impl Observations {
    /// Reads the observations of these records, whose grader digests are `record_grader_digests`
    /// (the statistics drop each record's copy: see `analysis::Run::grader_digests`); groups are
    /// matched as [`Summary::groups`] defines them (suite, mode, and call cap where the group has
    /// one).
    pub fn of(
        summary: &Summary,
        conversations: &[ConversationRecord],
        router: &[RouterRecord],
        record_grader_digests: BTreeSet<String>,
    ) -> Observations {
        Observations {
            conversation_latency: conversation_latency(summary, conversations),
            gpu_timeline: gpu_timeline(conversations, router),
            record_grader_digests,
        }
    }
}

/// By group key, then model: the latency of each graded conversation that has one, ascending.
fn conversation_latency(
    summary: &Summary,
    conversations: &[ConversationRecord],
) -> BTreeMap<String, BTreeMap<String, Vec<f64>>> {
    let mut out = BTreeMap::new();
    for (key, g) in &summary.groups {
        let mut by_model: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for c in conversations.iter().filter(|c| in_group(g, c)) {
            let lats: Vec<f64> = c
                .orchestrator_calls()
                .filter_map(|x| x.latency_s())
                .collect();
            if !lats.is_empty() {
                by_model
                    .entry(c.model.clone())
                    .or_default()
                    .push(lats.iter().sum());
            }
        }
        for v in by_model.values_mut() {
            v.sort_by(f64::total_cmp);
        }
        out.insert(key.clone(), by_model);
    }
    out
}

/// Every call with a start time, conversation and router calls alike, in time order (then by
/// model), placed in seconds since the first; none when no call has a GPU utilization reading.
fn gpu_timeline(conversations: &[ConversationRecord], router: &[RouterRecord]) -> Vec<GpuPoint> {
    let calls = || {
        conversations
            .iter()
            .flat_map(|c| c.calls.iter().map(move |x| (&c.model, x)))
            .chain(router.iter().map(|r| (&r.model, &r.call)))
    };
    if !calls().any(|(_, x)| x.gpu.as_ref().is_some_and(|g| g.util_mean.is_some())) {
        return Vec::new();
    }
    let mut raw: Vec<(u64, f64, Option<f64>, &str)> = calls()
        .filter_map(|(m, x)| {
            let start = x.started_unix_ms.get()?;
            let util = x.gpu.as_ref().and_then(|g| g.util_mean);
            Some((
                start,
                x.wall_s.get().unwrap_or(0.0).max(0.0),
                util,
                m.as_str(),
            ))
        })
        .collect();
    raw.sort_by(|a, b| {
        (a.0, &a.3)
            .cmp(&(b.0, &b.3))
            .then(a.1.total_cmp(&b.1))
            .then(a.2.unwrap_or(-1.0).total_cmp(&b.2.unwrap_or(-1.0)))
    });
    let Some(first) = raw.first().map(|r| r.0) else {
        return Vec::new();
    };
    let mut models: BTreeMap<&str, Arc<str>> = BTreeMap::new();
    raw.into_iter()
        .map(|(start, wall, util, model)| {
            let from = (start - first) as f64 / 1000.0;
            GpuPoint {
                t_s: from + wall / 2.0,
                util_pct: util,
                model: models.entry(model).or_insert_with(|| model.into()).clone(),
                span: (from, from + wall),
            }
        })
        .collect()
}

/// Whether a graded conversation belongs to a group of the summary.
pub(super) fn in_group(g: &GroupSummary, c: &ConversationRecord) -> bool {
    c.outcome.is_graded() && g.holds(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::{conversation, timed_call};
    use crate::runner::record::GpuWindow;

    #[test]
    fn the_gpu_timeline_holds_every_timed_call_once_any_has_a_reading() {
        let mut recs: Vec<ConversationRecord> = (0..3)
            .map(|t| conversation("m", "T1", t, true, vec![timed_call(10, 5, 1.0)]))
            .collect();
        for (i, c) in recs.iter_mut().enumerate() {
            c.calls[0].started_unix_ms = Some(1_000 * i as u64).into();
        }
        assert!(
            gpu_timeline(&recs, &[]).is_empty(),
            "no reading: no timeline"
        );
        recs[2].calls[0].gpu = Some(Box::new(GpuWindow {
            samples: 1,
            util_mean: Some(40.0),
            ..GpuWindow::default()
        }));
        let timeline = gpu_timeline(&recs, &[]);
        let utils: Vec<Option<f64>> = timeline.iter().map(|p| p.util_pct).collect();
        assert_eq!(utils, [None, None, Some(40.0)]);
        assert_eq!(timeline[2].span, (2.0, 3.0));
    }
}
