//! GPU and host telemetry: an NVML sampler thread (about every 200 ms) and sysinfo readings of the
//! `ollama` and `llama-server` processes, turned into one [`GpuWindow`] per model call.
//!
//! No NVIDIA library, no GPU, or a metric the device does not support (MIG, old drivers) is a
//! recorded absence, never a zero: the run goes on and the fields stay `None`. The energy of a call
//! comes from the NVML energy counter, read directly whenever a call starts or ends, which is more
//! accurate than integrating power samples. Calls played at once on one GPU (`--parallel`, or
//! several servers on this machine) share it: what the counter gains between two readings is split
//! evenly among the calls in flight ([`Apportioner`]), so the energies of a run's calls add up to
//! the GPU's energy while any call was in flight, never more.

use crate::runner::record::{GpuInfo, GpuWindow, HostInfo};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Default sampling interval.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(200);

/// Names of the processes whose CPU and memory are attributed to the model server.
const SERVER_PROCESSES: [&str; 2] = ["ollama", "llama-server"];

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
    /// CPU of the server processes, percent of one core.
    pub server_cpu_pct: Option<f64>,
    /// Resident memory of the server processes, MiB.
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
    nvml: Option<Arc<nvml_wrapper::Nvml>>,
    energy: Mutex<Apportioner>,
}

/// The start of one model call, as [`Telemetry::begin`] marked it.
#[derive(Debug, Clone, Copy)]
pub struct CallMark {
    at: Instant,
    id: u64,
}

/// One call's share of the GPU's energy so far.
#[derive(Debug, Clone, Copy)]
struct Share {
    /// Joules apportioned to it (`None`: the counter could not be read when it began).
    joules: Option<f64>,
    /// Most calls in flight at once while it ran, itself included.
    most_in_flight: u32,
}

/// Splits the GPU's energy counter among the calls in flight. At each reading (a call starting or
/// ending) what the counter gained since the previous reading is shared evenly among the calls
/// that were in flight over that interval; a call's energy is the sum of its shares. The shares of
/// all calls add up to the counter's gain over the time any call was in flight, so summing calls'
/// energies never counts an interval twice, however many calls overlapped. With one call at a
/// time a call's share is exactly the counter's delta over its interval.
#[derive(Debug, Default)]
pub struct Apportioner {
    last_mj: Option<u64>,
    calls: BTreeMap<u64, Share>,
    next_id: u64,
}

impl Apportioner {
    /// Shares the counter's gain since the last reading among the calls in flight.
    fn advance(&mut self, counter_mj: Option<u64>) {
        if let (Some(last), Some(now)) = (self.last_mj, counter_mj) {
            let each = now.saturating_sub(last) as f64 / 1000.0 / self.calls.len().max(1) as f64;
            for share in self.calls.values_mut() {
                share.joules = share.joules.map(|j| j + each);
            }
        }
        if counter_mj.is_some() {
            self.last_mj = counter_mj;
        }
    }

    /// A call starts with the counter reading `counter_mj`; returns its id.
    pub fn begin(&mut self, counter_mj: Option<u64>) -> u64 {
        self.advance(counter_mj);
        let id = self.next_id;
        self.next_id += 1;
        self.calls.insert(
            id,
            Share {
                joules: counter_mj.map(|_| 0.0),
                most_in_flight: 1,
            },
        );
        let in_flight = self.calls.len() as u32;
        for share in self.calls.values_mut() {
            share.most_in_flight = share.most_in_flight.max(in_flight);
        }
        id
    }

    /// Call `id` ends with the counter reading `counter_mj`: its energy in joules (`None` when the
    /// counter was not read at both ends) and the most calls in flight at once while it ran.
    pub fn finish(&mut self, id: u64, counter_mj: Option<u64>) -> (Option<f64>, u32) {
        self.advance(counter_mj);
        match self.calls.remove(&id) {
            Some(share) => (
                share.joules.filter(|_| counter_mj.is_some()),
                share.most_in_flight,
            ),
            None => (None, 1),
        }
    }
}

impl Telemetry {
    /// Starts sampling every `interval`. Never fails: what cannot be read is recorded as absent and
    /// explained in [`Telemetry::gpu_info`]'s `unavailable`.
    pub fn start(interval: Duration) -> Telemetry {
        let origin = Instant::now();
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (nvml, mut gpu) = open_nvml();
        let thread = {
            let samples = Arc::clone(&samples);
            let stop = Arc::clone(&stop);
            let nvml = nvml.clone();
            std::thread::Builder::new()
                .name("passk-telemetry".into())
                .spawn(move || sample_loop(origin, interval, nvml.as_deref(), &samples, &stop))
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
            nvml,
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
    /// process figures from the sampler, and the call's share of the energy counter read directly
    /// at every start and end (the sampler's 200 ms period is longer than many calls). `None` when
    /// nothing was read.
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

    /// The GPU's energy counter since driver load, millijoules.
    fn energy_mj(&self) -> Option<u64> {
        let nvml = self.nvml.as_ref()?;
        nvml.device_by_index(0)
            .ok()?
            .total_energy_consumption()
            .ok()
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
            nvml: None,
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

/// Loads NVML and finds GPU 0; on failure, why there is no GPU telemetry.
fn open_nvml() -> (Option<Arc<nvml_wrapper::Nvml>>, GpuInfo) {
    let nvml = match nvml_wrapper::Nvml::init() {
        Ok(n) => n,
        Err(e) => {
            let why = format!("no NVIDIA management library (NVML): {e}");
            return (
                None,
                GpuInfo {
                    unavailable: Some(why),
                    ..GpuInfo::default()
                },
            );
        }
    };
    let info = match nvml.device_by_index(0) {
        Ok(d) => GpuInfo {
            unavailable: None,
            name: d.name().ok(),
            driver: nvml.sys_driver_version().ok(),
            memory_mib: d.memory_info().ok().map(|m| m.total / (1024 * 1024)),
        },
        Err(e) => {
            let why = format!("NVML found no GPU 0: {e}");
            return (
                None,
                GpuInfo {
                    unavailable: Some(why),
                    ..GpuInfo::default()
                },
            );
        }
    };
    (Some(Arc::new(nvml)), info)
}

fn sample_loop(
    origin: Instant,
    interval: Duration,
    nvml: Option<&nvml_wrapper::Nvml>,
    samples: &Mutex<Vec<Sample>>,
    stop: &AtomicBool,
) {
    let device = nvml.and_then(|n| n.device_by_index(0).ok());
    let mut sys = sysinfo::System::new().ok();
    while !stop.load(Ordering::Relaxed) {
        let mut s = Sample {
            at: origin.elapsed(),
            ..Sample::default()
        };
        if let Some(d) = &device {
            s.util = d.utilization_rates().ok().map(|u| f64::from(u.gpu));
            s.mem_mib = d
                .memory_info()
                .ok()
                .map(|m| m.used as f64 / (1024.0 * 1024.0));
            s.power_w = d.power_usage().ok().map(|mw| f64::from(mw) / 1000.0);
        }
        if let Some(sys) = sys.as_mut() {
            (s.server_cpu_pct, s.server_rss_mib) = server_processes(sys);
        }
        if let Ok(mut v) = samples.lock() {
            v.push(s);
        }
        std::thread::sleep(interval);
    }
}

/// CPU (percent of one core) and RSS (MiB) summed over the model server's processes.
fn server_processes(sys: &mut sysinfo::System) -> (Option<f64>, Option<f64>) {
    sys.refresh_processes_specifics(
        sysinfo::ProcessesToUpdate::All,
        true,
        sysinfo::ProcessRefreshKind::nothing()
            .with_cpu()
            .with_memory(),
    );
    let procs: Vec<_> = sys
        .processes()
        .values()
        .filter(|p| {
            SERVER_PROCESSES
                .iter()
                .any(|n| p.name() == std::ffi::OsStr::new(n))
        })
        .collect();
    if procs.is_empty() {
        return (None, None);
    }
    let cpu = procs.iter().map(|p| f64::from(p.cpu_usage())).sum();
    let rss = procs.iter().map(|p| p.memory() as f64).sum::<f64>() / (1024.0 * 1024.0);
    (Some(cpu), Some(rss))
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
    fn overlapping_calls_share_the_energy_and_never_count_it_twice() {
        let mut a = Apportioner::default();
        // Call 0 alone from 1000 mJ to 3000 mJ, then call 1 joins; the 4000 mJ gained while both
        // ran is split in two; call 1 ends alone at 9000 mJ.
        let first = a.begin(Some(1_000));
        a.advance(Some(3_000));
        let second = a.begin(Some(3_000));
        let (e0, n0) = a.finish(first, Some(7_000));
        let (e1, n1) = a.finish(second, Some(9_000));
        assert_eq!((e0, n0), (Some(4.0), 2));
        assert_eq!((e1, n1), (Some(4.0), 2));
        assert_eq!(
            e0.unwrap_or(0.0) + e1.unwrap_or(0.0),
            8.0,
            "the counter's gain, once"
        );
        // One call at a time: exactly the counter's delta, alone.
        let lone = a.begin(Some(10_000));
        assert_eq!(a.finish(lone, Some(10_500)), (Some(0.5), 1));
        // A counter that cannot be read is an absence, never a zero.
        let blind = a.begin(None);
        assert_eq!(a.finish(blind, Some(11_000)).0, None);
        let late = a.begin(Some(11_000));
        assert_eq!(a.finish(late, None).0, None);
    }

    #[test]
    fn no_nvml_is_recorded_not_fatal() {
        let t = Telemetry::start(Duration::from_millis(20));
        // On a machine without NVIDIA's library the reason is recorded and sampling goes on.
        if t.gpu_info().unavailable.is_some() {
            assert!(t.gpu_info().name.is_none());
        }
        drop(t);
    }
}
