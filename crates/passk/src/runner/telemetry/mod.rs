//! GPU and host telemetry: a sampler thread and the readings of one model call.
//!
//! The GPU is read from a [`GpuSource`]: NVML for a GPU on this machine ([`nvml`]), or the
//! dcgm-exporter of a server on another machine ([`dcgm`]). The sampler also reads, with sysinfo,
//! the CPU and memory of the server process passk talks to when it runs here: the one listening
//! on the server's port, and its children ([`server_process`]). Each model call gets one
//! [`GpuWindow`]: the samples over it, and its share of the GPU's energy counter ([`energy`]).
//!
//! No NVIDIA library, no GPU, an exporter that does not answer, or a metric the device does not
//! support (MIG, old drivers) is a recorded absence, never a zero: the run goes on and the fields
//! stay `None`. The energy of a call comes from the energy counter read whenever a call starts or
//! ends, which is more accurate than integrating power samples. Calls played at once on one GPU
//! (`--parallel`, or several servers on one machine) share it: what the counter gains between two
//! readings is split evenly among the calls in flight ([`energy::Apportioner`]), so the energies
//! of a run's calls add up to the GPU's energy while any call was in flight, never more.

pub mod dcgm;
pub mod energy;
pub mod nvml;
pub mod server_process;

use crate::runner::record::{GpuInfo, GpuWindow, HostInfo};
use energy::Apportioner;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Default sampling interval of a GPU on this machine.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(200);

/// Default scrape interval of a remote exporter (`--scrape-interval`).
pub const DEFAULT_SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

/// One reading of a GPU (each field absent when it could not be read).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GpuReading {
    /// Utilization, percent.
    pub util: Option<f64>,
    /// Memory in use, MiB.
    pub mem_mib: Option<f64>,
    /// Power draw, watts.
    pub power_w: Option<f64>,
}

/// Where a GPU's readings come from.
pub trait GpuSource: Send + Sync {
    /// Utilization, memory and power now (called by the sampler thread, may block briefly).
    fn read(&self) -> GpuReading;
    /// The energy counter, millijoules; called as calls start and end, so it never waits on the
    /// network.
    fn energy_mj(&self) -> Option<u64>;
    /// Whether the GPU is on this machine (its model-server processes can then be read too).
    fn on_this_machine(&self) -> bool;
}

/// One reading of the sampler thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sample {
    /// When it was taken, relative to the sampler's start.
    pub at: Duration,
    /// GPU utilization, percent.
    pub util: Option<f64>,
    /// Memory in use, MiB.
    pub mem_mib: Option<f64>,
    /// Power draw, watts.
    pub power_w: Option<f64>,
    /// CPU of the server process and its children, percent of one core.
    pub server_cpu_pct: Option<f64>,
    /// Resident memory of the server process and its children, MiB.
    pub server_rss_mib: Option<f64>,
}

/// The sampler thread and what it has read so far.
pub struct Telemetry {
    origin: Instant,
    samples: Arc<Mutex<Vec<Sample>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    gpu: GpuInfo,
    interval: Duration,
    source: Option<Arc<dyn GpuSource>>,
    energy: Mutex<Apportioner>,
}

/// The start of one model call, as [`Telemetry::begin`] marked it.
#[derive(Debug, Clone, Copy)]
pub struct CallMark {
    at: Instant,
    id: u64,
}

impl Telemetry {
    /// Samples this machine every `interval`: GPU 0 through NVML, and the server processes
    /// listening on `server_ports` of this machine (none: no process samples). Never fails: what
    /// cannot be read is recorded as absent and explained in [`Telemetry::gpu_info`]'s
    /// `unavailable`.
    pub fn start(interval: Duration, server_ports: &[u16]) -> Telemetry {
        match nvml::NvmlSource::open() {
            Ok((source, gpu)) => {
                Telemetry::sample(Some(Arc::new(source)), gpu, server_ports, interval)
            }
            Err(why) => {
                let gpu = GpuInfo {
                    unavailable: Some(why),
                    ..GpuInfo::default()
                };
                Telemetry::sample(None, gpu, server_ports, interval)
            }
        }
    }

    /// Samples a GPU on another machine from its exporter every `interval`; `gpu` is what the
    /// preflight's probe found of it.
    pub fn start_remote(source: dcgm::DcgmSource, gpu: GpuInfo, interval: Duration) -> Telemetry {
        Telemetry::sample(Some(Arc::new(source)), gpu, &[], interval)
    }

    fn sample(
        source: Option<Arc<dyn GpuSource>>,
        mut gpu: GpuInfo,
        server_ports: &[u16],
        interval: Duration,
    ) -> Telemetry {
        let origin = Instant::now();
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let samples = Arc::clone(&samples);
            let stop = Arc::clone(&stop);
            let source = source.clone();
            let processes = server_process::ServerProcesses::new(server_ports);
            std::thread::Builder::new()
                .name("passk-telemetry".into())
                .spawn(move || {
                    sample_loop(
                        origin,
                        interval,
                        source.as_deref(),
                        processes,
                        &samples,
                        &stop,
                    )
                })
                .ok()
        };
        if thread.is_none() {
            gpu.unavailable = Some("could not start the telemetry thread".into());
        }
        Telemetry {
            origin,
            samples,
            stop,
            thread,
            gpu,
            interval,
            source,
            energy: Mutex::default(),
        }
    }

    /// Marks the start of a model call: the time, and the GPU's energy counter read right now.
    pub fn begin(&self) -> CallMark {
        let mut energy = self.energy.lock().unwrap_or_else(|e| e.into_inner());
        let id = energy.begin(self.energy_mj());
        CallMark {
            at: Instant::now(),
            id,
        }
    }

    /// Readings over the call begun at `mark`, ending now: utilization, memory, power and server
    /// process figures from the sampler, and the call's share of the energy counter read at every
    /// start and end (the sampling period is longer than many calls). `None` when nothing was
    /// read.
    pub fn finish(&self, mark: CallMark) -> Option<GpuWindow> {
        let (energy_j, most_in_flight) = {
            let mut energy = self.energy.lock().unwrap_or_else(|e| e.into_inner());
            energy.finish(mark.id, self.energy_mj())
        };
        let end = Instant::now();
        let mut window = self.window(mark.at, end).unwrap_or_default();
        window.energy_j = energy_j;
        if energy_j.is_some() && most_in_flight > 1 {
            window.calls_in_flight = Some(most_in_flight);
        }
        (window != GpuWindow::default()).then_some(window)
    }

    /// The GPU's energy counter, millijoules.
    fn energy_mj(&self) -> Option<u64> {
        self.source.as_ref()?.energy_mj()
    }

    /// A telemetry source that never samples (tests and the stub backend).
    pub fn disabled(reason: &str) -> Telemetry {
        Telemetry {
            origin: Instant::now(),
            samples: Arc::new(Mutex::new(Vec::new())),
            stop: Arc::new(AtomicBool::new(true)),
            thread: None,
            gpu: GpuInfo {
                unavailable: Some(reason.to_string()),
                ..GpuInfo::default()
            },
            interval: DEFAULT_INTERVAL,
            source: None,
            energy: Mutex::default(),
        }
    }

    /// GPU identity, or why there is none.
    pub fn gpu_info(&self) -> &GpuInfo {
        &self.gpu
    }

    /// Readings over `[start, end]`; `None` when nothing at all was sampled.
    pub fn window(&self, start: Instant, end: Instant) -> Option<GpuWindow> {
        let samples = self.samples.lock().ok()?;
        let from = start.saturating_duration_since(self.origin);
        let to = end.saturating_duration_since(self.origin);
        window_of(&samples, from, to, self.interval)
    }

    /// Every sample taken so far.
    pub fn samples(&self) -> Vec<Sample> {
        self.samples.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The host that runs passk.
pub fn host_info() -> HostInfo {
    let mut sys = match sysinfo::System::new() {
        Ok(s) => s,
        Err(_) => return HostInfo::default(),
    };
    sys.refresh_memory();
    sys.refresh_cpu_list(sysinfo::CpuRefreshKind::nothing());
    HostInfo {
        os: sysinfo::System::long_os_version().unwrap_or_default(),
        cpu: sys
            .cpus()
            .first()
            .map(|c| c.brand().trim().to_string())
            .unwrap_or_default(),
        cores: sys.cpus().len(),
        memory_mib: sys.total_memory() / (1024 * 1024),
    }
}

fn sample_loop(
    origin: Instant,
    interval: Duration,
    source: Option<&dyn GpuSource>,
    mut processes: Option<server_process::ServerProcesses>,
    samples: &Mutex<Vec<Sample>>,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let at = origin.elapsed();
        let gpu = source.map(|s| s.read()).unwrap_or_default();
        let mut s = Sample {
            at,
            util: gpu.util,
            mem_mib: gpu.mem_mib,
            power_w: gpu.power_w,
            ..Sample::default()
        };
        if let Some(p) = processes.as_mut() {
            (s.server_cpu_pct, s.server_rss_mib) = p.read();
        }
        // A source that could not be read this time (a failed scrape) gives no sample, rather
        // than one that reads as nothing.
        let read_something = [
            s.util,
            s.mem_mib,
            s.power_w,
            s.server_cpu_pct,
            s.server_rss_mib,
        ]
        .iter()
        .any(Option::is_some);
        if read_something && let Ok(mut v) = samples.lock() {
            v.push(s);
        }
        pause(interval.saturating_sub(started.elapsed()), stop);
    }
}

/// Sleeps up to `d`, waking early when asked to stop (a slow scrape interval never delays the end
/// of a run).
fn pause(d: Duration, stop: &AtomicBool) {
    let step = Duration::from_millis(50);
    let until = Instant::now() + d;
    while !stop.load(Ordering::Relaxed) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(step));
    }
}

/// Summarises the samples that fall in `[from, to]`; a call shorter than one interval takes the
/// sample nearest to its middle (when one lies within an interval of it). `None` when no sample
/// holds any reading (no GPU and no model-server process).
pub fn window_of(
    samples: &[Sample],
    from: Duration,
    to: Duration,
    interval: Duration,
) -> Option<GpuWindow> {
    let mut inside: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.at >= from && s.at <= to)
        .collect();
    if inside.is_empty() {
        let mid = from + (to.saturating_sub(from)) / 2;
        let nearest = samples.iter().min_by_key(|s| s.at.abs_diff(mid))?;
        if nearest.at.abs_diff(mid) > interval {
            return None;
        }
        inside.push(nearest);
    }
    let values = |f: fn(&Sample) -> Option<f64>| -> Vec<f64> {
        inside.iter().filter_map(|s| f(s)).collect()
    };
    let util = values(|s| s.util);
    let mem = values(|s| s.mem_mib);
    let power = values(|s| s.power_w);
    let cpu = values(|s| s.server_cpu_pct);
    let rss = values(|s| s.server_rss_mib);
    let window = GpuWindow {
        samples: inside.len() as u32,
        util_mean: mean(&util),
        util_max: util.iter().copied().reduce(f64::max),
        mem_used_mib: mem.iter().copied().reduce(f64::max),
        power_w: mean(&power),
        energy_j: None,
        calls_in_flight: None,
        server_cpu_pct: mean(&cpu),
        server_rss_mib: rss.iter().copied().reduce(f64::max),
    };
    let empty = GpuWindow {
        samples: window.samples,
        ..GpuWindow::default()
    };
    (window != empty).then_some(window)
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(ms: u64, util: f64) -> Sample {
        Sample {
            at: Duration::from_millis(ms),
            util: Some(util),
            ..Sample::default()
        }
    }

    #[test]
    fn window_averages_the_samples_inside() {
        let samples = [s(0, 10.0), s(200, 50.0), s(400, 90.0), s(600, 0.0)];
        let w = window_of(
            &samples,
            Duration::from_millis(100),
            Duration::from_millis(500),
            DEFAULT_INTERVAL,
        )
        .expect("window");
        assert_eq!(w.samples, 2);
        assert_eq!(w.util_mean, Some(70.0));
        assert_eq!(w.util_max, Some(90.0));
        assert_eq!(
            w.energy_j, None,
            "energy comes from direct counter reads, not samples"
        );
        assert_eq!(w.power_w, None, "absent readings stay absent, never 0");
    }

    #[test]
    fn short_call_takes_nearest_sample_and_far_call_none() {
        let samples = [s(0, 10.0), s(200, 50.0)];
        let w = window_of(
            &samples,
            Duration::from_millis(150),
            Duration::from_millis(160),
            DEFAULT_INTERVAL,
        )
        .expect("nearest");
        assert_eq!(w.util_mean, Some(50.0));
        assert!(
            window_of(
                &samples,
                Duration::from_secs(5),
                Duration::from_secs(6),
                DEFAULT_INTERVAL
            )
            .is_none()
        );
    }

    #[test]
    fn no_nvml_is_recorded_not_fatal() {
        let t = Telemetry::start(Duration::from_millis(20), &[]);
        // On a machine without NVIDIA's library the reason is recorded and sampling goes on.
        if t.gpu_info().unavailable.is_some() {
            assert!(t.gpu_info().name.is_none());
        }
        drop(t);
    }
}
