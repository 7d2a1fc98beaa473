//! Values read straight off the records, one per conversation or call, for the charts and checks
//! that a summary does not hold: latency per conversation, the GPU timeline, the grader digests.

use crate::analysis::{Shape, Summary};
use crate::runner::record::{CallRecord, ConversationRecord, Manifest, RouterRecord};
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
    /// the configurations of [`Summary::groups`], keyed as the run's [`Shape`] keys them.
    pub fn of(
        manifest: &Manifest,
        summary: &Summary,
        conversations: &[ConversationRecord],
        router: &[RouterRecord],
        record_grader_digests: BTreeSet<String>,
    ) -> Observations {
        let shape = Shape::of(manifest, conversations, router);
        let calls = conversations.iter().flat_map(|c| c.calls.iter());
        let gpu = calls
            .chain(router.iter().map(|r| &r.call))
            .any(CallRecord::has_gpu_utilization);
        let mut sums = ObservationSums::new(gpu);
        sums.add_conversations(&shape, &conversations.iter().collect::<Vec<_>>());
        sums.add_router(&router.iter().collect::<Vec<_>>());
        sums.observations(summary, record_grader_digests)
    }
}

/// [`Observations`] fed records a cell, or a task of one, at a time, in any order: each graded
/// conversation's latency by configuration and model, and, when the run has GPU utilization
/// readings, every timed call's point.
#[derive(Debug, Clone, Default)]
pub struct ObservationSums {
    gpu: bool,
    latency: BTreeMap<String, BTreeMap<String, Vec<f64>>>,
    /// (start, wall, utilization, model) of every call with a start time.
    calls: Vec<(u64, f64, Option<f64>, Arc<str>)>,
    models: BTreeMap<String, Arc<str>>,
}

impl ObservationSums {
    /// Sums for a run with (`gpu`) or without GPU utilization readings: without, no call is
    /// kept, as there is then no timeline to draw.
    pub fn new(gpu: bool) -> ObservationSums {
        ObservationSums {
            gpu,
            ..ObservationSums::default()
        }
    }

    /// Adds conversation records of the run of this shape.
    pub fn add_conversations(&mut self, shape: &Shape, conversations: &[&ConversationRecord]) {
        for c in conversations {
            self.add_calls(&c.model, c.calls.iter());
            if !c.outcome.is_graded() {
                continue;
            }
            let lats: Vec<f64> = c
                .orchestrator_calls()
                .filter_map(|x| x.latency_s())
                .collect();
            if lats.is_empty() {
                continue;
            }
            let total: f64 = lats.iter().sum();
            let by_model = self.latency.entry(shape.key(c)).or_default();
            by_model.entry(c.model.clone()).or_default().push(total);
        }
    }

    /// Adds standalone router records.
    pub fn add_router(&mut self, router: &[&RouterRecord]) {
        for r in router {
            self.add_calls(&r.model, std::iter::once(&r.call));
        }
    }

    fn add_calls<'c>(&mut self, model: &str, calls: impl Iterator<Item = &'c CallRecord>) {
        if !self.gpu {
            return;
        }
        let shared = self
            .models
            .entry(model.to_string())
            .or_insert_with(|| model.into());
        for x in calls {
            if let Some(start) = x.started_unix_ms.get() {
                let util = x.gpu.as_ref().and_then(|g| g.util_mean);
                let wall = x.wall_s.get().unwrap_or(0.0).max(0.0);
                self.calls.push((start, wall, util, shared.clone()));
            }
        }
    }

    /// The observations of the records added, for this summary of them.
    pub fn observations(
        self,
        summary: &Summary,
        record_grader_digests: BTreeSet<String>,
    ) -> Observations {
        let mut latency = self.latency;
        let conversation_latency = summary
            .groups
            .keys()
            .map(|key| {
                let mut by_model = latency.remove(key).unwrap_or_default();
                for v in by_model.values_mut() {
                    v.sort_by(f64::total_cmp);
                }
                (key.clone(), by_model)
            })
            .collect();
        Observations {
            conversation_latency,
            gpu_timeline: gpu_timeline(self.calls),
            record_grader_digests,
        }
    }
}

/// The calls with a start time, in time order (then by model), placed in seconds since the first.
fn gpu_timeline(mut raw: Vec<(u64, f64, Option<f64>, Arc<str>)>) -> Vec<GpuPoint> {
    raw.sort_by(|a, b| {
        (a.0, &a.3)
            .cmp(&(b.0, &b.3))
            .then(a.1.total_cmp(&b.1))
            .then(a.2.unwrap_or(-1.0).total_cmp(&b.2.unwrap_or(-1.0)))
    });
    let Some(first) = raw.first().map(|r| r.0) else {
        return Vec::new();
    };
    raw.into_iter()
        .map(|(start, wall, util, model)| {
            let from = (start - first) as f64 / 1000.0;
            GpuPoint {
                t_s: from + wall / 2.0,
                util_pct: util,
                model,
                span: (from, from + wall),
            }
        })
        .collect()
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
        let timeline = |recs: &[ConversationRecord]| {
            let s = crate::analysis::summarize(
                &Manifest::default(),
                recs,
                &[],
                &crate::analysis::AnalysisOptions::default(),
            );
            Observations::of(&Manifest::default(), &s, recs, &[], BTreeSet::new()).gpu_timeline
        };
        assert!(timeline(&recs).is_empty(), "no reading: no timeline");
        recs[2].calls[0].gpu = Some(Box::new(GpuWindow {
            samples: 1,
            util_mean: Some(40.0),
            ..GpuWindow::default()
        }));
        let timeline = timeline(&recs);
        let utils: Vec<Option<f64>> = timeline.iter().map(|p| p.util_pct).collect();
        assert_eq!(utils, [None, None, Some(40.0)]);
        assert_eq!(timeline[2].span, (2.0, 3.0));
    }
}
