//! GPU readings per model (new in passk): utilization and memory over the calls' wall intervals,
//! energy in all and per successful task.

use crate::analysis::figures::latency::{RunningMean, max_with};
use crate::runner::record::{CallRecord, GpuWindow};
use serde::{Deserialize, Serialize};

/// GPU readings of one model's calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuSummary {
    /// Calls that carry at least one GPU reading (a sample of the server's process alone is not
    /// one).
    pub calls_with_samples: usize,
    /// Mean of the calls' mean utilization, percent.
    pub util_mean_pct: Option<f64>,
    /// Highest utilization seen, percent.
    pub util_max_pct: Option<f64>,
    /// Highest memory in use, MiB.
    pub mem_used_max_mib: Option<f64>,
    /// Mean of the calls' mean power, watts.
    pub power_mean_w: Option<f64>,
    /// Calls that carry an energy reading.
    #[serde(default)]
    pub calls_with_energy: usize,
    /// All calls considered (with or without readings).
    #[serde(default)]
    pub calls: usize,
    /// Energy over all calls (NVML counter deltas), joules; absent unless every call has a reading,
    /// since a sum over some calls would pass for a total.
    pub energy_j: Option<f64>,
    /// Energy per successful task, joules (same condition).
    pub energy_per_success_j: Option<f64>,
}

/// Whether a call's window holds anything read from a GPU (utilization, memory, power or energy),
/// not only the server process's CPU and memory.
pub fn has_gpu_reading(g: &GpuWindow) -> bool {
    [
        g.util_mean,
        g.util_max,
        g.mem_used_mib,
        g.power_w,
        g.energy_j,
    ]
    .iter()
    .any(Option::is_some)
}

/// GPU readings as running totals over one model's calls.
#[derive(Debug, Default)]
pub struct GpuSums {
    calls: usize,
    windows: usize,
    util: RunningMean,
    util_max: Option<f64>,
    mem_max: Option<f64>,
    power: RunningMean,
    energy: RunningMean,
}

impl GpuSums {
    /// Adds one call.
    pub fn add(&mut self, c: &CallRecord) {
        self.calls += 1;
        let Some(g) = c.gpu.as_deref().filter(|g| has_gpu_reading(g)) else {
            return;
        };
        self.windows += 1;
        g.util_mean.inspect(|&x| self.util.add(x));
        max_with(&mut self.util_max, g.util_max);
        max_with(&mut self.mem_max, g.mem_used_mib);
        g.power_w.inspect(|&x| self.power.add(x));
        g.energy_j.inspect(|&x| self.energy.add(x));
    }

    /// The summary over calls that made `passes` passes; `None` when no call carried a GPU
    /// reading.
    pub fn finish(self, passes: usize) -> Option<GpuSummary> {
        if self.windows == 0 {
            return None;
        }
        let with_energy = self.energy.count();
        let complete = with_energy > 0 && with_energy == self.calls;
        let energy_j = complete.then(|| self.energy.sum());
        Some(GpuSummary {
            calls_with_samples: self.windows,
            calls_with_energy: with_energy,
            calls: self.calls,
            util_mean_pct: self.util.mean(),
            util_max_pct: self.util_max,
            mem_used_max_mib: self.mem_max,
            power_mean_w: self.power.mean(),
            energy_j,
            energy_per_success_j: energy_j.and_then(|e| (passes > 0).then(|| e / passes as f64)),
        })
    }
}

/// The readings over these calls; `None` when no call carries a GPU reading.
/// For the tests: the running totals fed these records.
#[cfg(test)]
pub fn gpu_summary<'a>(
    calls: impl IntoIterator<Item = &'a CallRecord>,
    passes: usize,
) -> Option<GpuSummary> {
    let mut sums = GpuSums::default();
    calls.into_iter().for_each(|c| sums.add(c));
    sums.finish(passes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::call;

    #[test]
    fn sums_energy_and_takes_maxima() {
        let mut a = call(1, 1);
        a.gpu = Some(Box::new(GpuWindow {
            samples: 2,
            util_mean: Some(50.0),
            util_max: Some(80.0),
            mem_used_mib: Some(4000.0),
            power_w: Some(100.0),
            energy_j: Some(30.0),
            ..GpuWindow::default()
        }));
        let mut b = call(1, 1);
        b.gpu = Some(Box::new(GpuWindow {
            samples: 1,
            util_mean: Some(70.0),
            util_max: Some(90.0),
            mem_used_mib: Some(3000.0),
            power_w: Some(200.0),
            energy_j: Some(10.0),
            ..GpuWindow::default()
        }));
        let g = gpu_summary([&a, &b], 4).unwrap();
        assert_eq!(g.calls_with_samples, 2);
        assert_eq!(g.util_mean_pct, Some(60.0));
        assert_eq!(g.util_max_pct, Some(90.0));
        assert_eq!(g.mem_used_max_mib, Some(4000.0));
        assert_eq!(g.energy_j, Some(40.0));
        assert_eq!(g.energy_per_success_j, Some(10.0));
        assert!(gpu_summary([&call(1, 1)], 1).is_none());
        // A call without an energy reading: no total, since a partial sum would pass for one.
        let g = gpu_summary([&a, &b, &call(1, 1)], 4).unwrap();
        assert_eq!((g.calls_with_energy, g.calls), (2, 3));
        assert_eq!((g.energy_j, g.energy_per_success_j), (None, None));
    }

    #[test]
    fn server_process_samples_alone_are_no_gpu_telemetry() {
        let mut a = call(1, 1);
        a.gpu = Some(Box::new(GpuWindow {
            samples: 3,
            server_cpu_pct: Some(120.0),
            server_rss_mib: Some(900.0),
            ..GpuWindow::default()
        }));
        assert!(gpu_summary([&a], 1).is_none(), "no NVML: no GPU summary");
    }
}
