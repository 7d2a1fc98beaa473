//! CPU and memory of the model server's process on this machine (the one listening on the port
//! passk talked to, and its children), over the calls that carry such readings.

use crate::analysis::figures::latency::{RunningMean, max_with};
use crate::runner::record::CallRecord;
use serde::{Deserialize, Serialize};

/// The server process's readings over one model's calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerProcessSummary {
    /// Calls with a reading of the server process.
    pub calls_with_samples: usize,
    /// All calls considered.
    pub calls: usize,
    /// Mean of the calls' mean CPU, percent of one core.
    pub cpu_mean_pct: Option<f64>,
    /// Highest resident memory, MiB.
    pub rss_max_mib: Option<f64>,
}

/// The server process's readings as running totals over one model's calls.
#[derive(Debug, Default)]
pub struct ServerProcessSums {
    calls: usize,
    windows: usize,
    cpu: RunningMean,
    rss_max: Option<f64>,
}

impl ServerProcessSums {
    /// Adds one call.
    pub fn add(&mut self, c: &CallRecord) {
        self.calls += 1;
        let Some(g) = c.gpu.as_deref() else {
            return;
        };
        if g.server_cpu_pct.is_none() && g.server_rss_mib.is_none() {
            return;
        }
        self.windows += 1;
        g.server_cpu_pct.inspect(|&x| self.cpu.add(x));
        max_with(&mut self.rss_max, g.server_rss_mib);
    }

    /// The summary; `None` when no call carried a reading.
    pub fn finish(self) -> Option<ServerProcessSummary> {
        (self.windows > 0).then(|| ServerProcessSummary {
            calls_with_samples: self.windows,
            calls: self.calls,
            cpu_mean_pct: self.cpu.mean(),
            rss_max_mib: self.rss_max,
        })
    }
}

/// The server-process readings over these calls; `None` when no call carries one.
/// For the tests: the running totals fed these records.
#[cfg(test)]
pub fn server_process_summary<'a>(
    calls: impl IntoIterator<Item = &'a CallRecord>,
) -> Option<ServerProcessSummary> {
    let mut sums = ServerProcessSums::default();
    calls.into_iter().for_each(|c| sums.add(c));
    sums.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fixtures::call;
    use crate::runner::record::GpuWindow;

    #[test]
    fn averages_cpu_and_takes_the_largest_memory() {
        let with = |cpu: f64, rss: f64| {
            let mut c = call(1, 1);
            c.gpu = Some(Box::new(GpuWindow {
                samples: 1,
                server_cpu_pct: Some(cpu),
                server_rss_mib: Some(rss),
                ..GpuWindow::default()
            }));
            c
        };
        let (a, b, none) = (with(50.0, 100.0), with(150.0, 80.0), call(1, 1));
        let s = server_process_summary([&a, &b, &none]).expect("readings");
        assert_eq!((s.calls_with_samples, s.calls), (2, 3));
        assert_eq!(s.cpu_mean_pct, Some(100.0));
        assert_eq!(s.rss_max_mib, Some(100.0));
        assert!(server_process_summary([&none]).is_none());
    }
}
