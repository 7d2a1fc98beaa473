//! This machine's GPU 0, read through NVIDIA's management library (NVML).

use super::{GpuReading, GpuSource};
use crate::runner::record::GpuInfo;

/// GPU 0 of this machine.
pub struct NvmlSource {
    nvml: nvml_wrapper::Nvml,
}

/// What [`NvmlSource`] records as its source.
pub const SOURCE: &str = "NVML on this machine (GPU 0)";

impl NvmlSource {
    /// Loads NVML and finds GPU 0; on failure, why there is no GPU telemetry.
    pub fn open() -> Result<(NvmlSource, GpuInfo), String> {
        let nvml = nvml_wrapper::Nvml::init()
            .map_err(|e| format!("no NVIDIA management library (NVML): {e}"))?;
        let info = {
            let d = nvml
                .device_by_index(0)
                .map_err(|e| format!("NVML found no GPU 0: {e}"))?;
            GpuInfo {
                unavailable: None,
                name: d.name().ok(),
                driver: nvml.sys_driver_version().ok(),
                memory_mib: d.memory_info().ok().map(|m| m.total / (1024 * 1024)),
                source: Some(SOURCE.into()),
            }
        };
        Ok((NvmlSource { nvml }, info))
    }
}

impl GpuSource for NvmlSource {
    fn read(&self) -> GpuReading {
        let Ok(d) = self.nvml.device_by_index(0) else {
            return GpuReading::default();
        };
        GpuReading {
            util: d.utilization_rates().ok().map(|u| f64::from(u.gpu)),
            mem_mib: d
                .memory_info()
                .ok()
                .map(|m| m.used as f64 / (1024.0 * 1024.0)),
            power_w: d.power_usage().ok().map(|mw| f64::from(mw) / 1000.0),
        }
    }

    fn energy_mj(&self) -> Option<u64> {
        self.nvml
            .device_by_index(0)
            .ok()?
            .total_energy_consumption()
            .ok()
    }

    fn on_this_machine(&self) -> bool {
        true
    }
}
