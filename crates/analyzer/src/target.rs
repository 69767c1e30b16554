//! Targets: the device a graph is checked for, as a named profile or read off a live device.
//!
//! Support decisions need no GPU: a target is plain data. Free memory is part of it because
//! route selection depends on it (the two_kernel route's workspace must fit a fraction of it).

use std::fmt;

/// Fraction of total memory assumed free when free memory was not measured.
pub const DEFAULT_FREE_FRACTION: f64 = 0.9;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The kind of device a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// A CUDA GPU with the given compute capability as `major * 10 + minor` (120, 90, 80).
    Gpu {
        /// Compute capability, e.g. 120 for sm_120.
        sm: u32,
    },
    /// The host CPU (no GPU).
    Cpu,
}

/// A device profile: what the analyzer needs to know about where a graph will run.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// Profile name (`rtx-5090`, ...; `auto:<device name>` for a live device).
    pub name: String,
    /// GPU with compute capability, or CPU.
    pub device: DeviceKind,
    /// Streaming multiprocessors (0 for the CPU).
    pub sm_count: u32,
    /// Maximum dynamic shared memory per block (opt-in), bytes (0 for the CPU).
    pub smem_per_block: u64,
    /// Shared memory per SM, bytes: with the per-block size it decides blocks per SM.
    pub smem_per_sm: u64,
    /// Resident threads per SM.
    pub max_threads_per_sm: u32,
    /// Total device memory, bytes.
    pub memory_bytes: u64,
    /// Free device memory, bytes (measured, or [`DEFAULT_FREE_FRACTION`] of the total).
    pub free_memory_bytes: u64,
    /// True when `free_memory_bytes` was measured on a live device or set by the user.
    pub free_memory_measured: bool,
    /// Dense f16/bf16 tensor rate with f32 accumulation through mma.sync, TFLOP/s (for the
    /// CPU: the host's f32 rate for the reference engine's loops).
    pub mma_tflops: f64,
    /// Memory bandwidth, GB/s.
    pub bandwidth_gbs: f64,
}

/// Properties read off a live device (by the engines crate) to build an `auto` target.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceProperties {
    /// Device name as the driver reports it.
    pub name: String,
    /// Compute capability, `major * 10 + minor`.
    pub sm: u32,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Opt-in maximum shared memory per block, bytes.
    pub smem_per_block: u64,
    /// Total memory, bytes.
    pub memory_bytes: u64,
    /// Free memory now, bytes.
    pub free_memory_bytes: u64,
}

struct Profile {
    name: &'static str,
    device: DeviceKind,
    sm_count: u32,
    smem_per_block: u64,
    memory_bytes: u64,
    mma_tflops: f64,
    bandwidth_gbs: f64,
}

/// The named profiles. Rates are dense mma.sync with f16 / bf16 in and f32 accumulate: the
/// RTX 5090 runs that at half its 419 TFLOP/s f16-accumulate rate (about 209.5 at its 2.41 GHz
/// boost), the RTX PRO 6000 at full rate; Hopper's mma.sync is measured at about 650 TFLOP/s,
/// below its wgmma peak; the A100's is its 312 TFLOP/s data-sheet rate. Bandwidths are the
/// data sheets' DRAM rates. Memory totals are the data sheets' sizes, which NVIDIA states in GiB
/// ("80 GB" is 80 GiB), except the H200's: its "141 GB" misstates the total either way it is
/// read (144,384 MiB as GiB, 134,468 MiB as 10^9 bytes), so it is the total its driver reports,
/// 143,771 MiB (nvidia-smi on the H200 this project measures on).
const PROFILES: &[Profile] = &[
    Profile {
        name: "rtx-5090",
        device: DeviceKind::Gpu { sm: 120 },
        sm_count: 170,
        smem_per_block: 101_376,
        memory_bytes: 32 * GIB,
        mma_tflops: 209.5,
        bandwidth_gbs: 1792.0,
    },
    Profile {
        name: "rtx-pro-6000",
        device: DeviceKind::Gpu { sm: 120 },
        sm_count: 188,
        smem_per_block: 101_376,
        memory_bytes: 96 * GIB,
        mma_tflops: 430.0,
        bandwidth_gbs: 1792.0,
    },
    Profile {
        name: "h100",
        device: DeviceKind::Gpu { sm: 90 },
        sm_count: 132,
        smem_per_block: 232_448,
        memory_bytes: 80 * GIB,
        mma_tflops: 650.0,
        bandwidth_gbs: 3350.0,
    },
    Profile {
        name: "h200",
        device: DeviceKind::Gpu { sm: 90 },
        sm_count: 132,
        smem_per_block: 232_448,
        memory_bytes: 143_771 * MIB,
        mma_tflops: 650.0,
        bandwidth_gbs: 4800.0,
    },
    Profile {
        name: "a100",
        device: DeviceKind::Gpu { sm: 80 },
        sm_count: 108,
        smem_per_block: 166_912,
        memory_bytes: 80 * GIB,
        mma_tflops: 312.0,
        bandwidth_gbs: 2039.0,
    },
    Profile {
        name: "cpu",
        device: DeviceKind::Cpu,
        sm_count: 0,
        smem_per_block: 0,
        memory_bytes: 64 * GIB,
        mma_tflops: 0.05,
        bandwidth_gbs: 20.0,
    },
];

impl Target {
    /// Names of the built-in profiles, in a stable order.
    pub const NAMES: [&'static str; 6] =
        ["rtx-5090", "rtx-pro-6000", "h100", "h200", "a100", "cpu"];

    /// The built-in profile with this name, free memory at [`DEFAULT_FREE_FRACTION`].
    pub fn by_name(name: &str) -> Option<Target> {
        PROFILES.iter().find(|p| p.name == name).map(|p| Target {
            name: p.name.to_owned(),
            device: p.device,
            sm_count: p.sm_count,
            smem_per_block: p.smem_per_block,
            smem_per_sm: per_sm_limits(p.device).0,
            max_threads_per_sm: per_sm_limits(p.device).1,
            memory_bytes: p.memory_bytes,
            free_memory_bytes: default_free(p.memory_bytes),
            free_memory_measured: false,
            mma_tflops: p.mma_tflops,
            bandwidth_gbs: p.bandwidth_gbs,
        })
    }

    /// Every built-in profile.
    pub fn all() -> Vec<Target> {
        Target::NAMES
            .iter()
            .filter_map(|n| Target::by_name(n))
            .collect()
    }

    /// A target read off a live device (`auto`). Rates come from the closest built-in profile
    /// (the architecture's; a GeForce sm_120 card the RTX 5090's, a Hopper of at most 100 GiB
    /// the H100's), the tensor rate scaled by SM count; free memory is as measured.
    pub fn from_device(props: &DeviceProperties) -> Target {
        let base = closest_profile(props);
        let fallback = PROFILES.iter().find(|p| p.name == base);
        let per_sm = |p: &Profile, v: f64| v / f64::from(p.sm_count.max(1));
        let (tflops, bandwidth) = fallback.map_or((0.0, 0.0), |p| {
            (
                per_sm(p, p.mma_tflops) * f64::from(props.sm_count),
                p.bandwidth_gbs,
            )
        });
        Target {
            name: format!("auto:{}", props.name),
            device: DeviceKind::Gpu { sm: props.sm },
            sm_count: props.sm_count,
            smem_per_block: props.smem_per_block,
            smem_per_sm: per_sm_limits(DeviceKind::Gpu { sm: props.sm }).0,
            max_threads_per_sm: per_sm_limits(DeviceKind::Gpu { sm: props.sm }).1,
            memory_bytes: props.memory_bytes,
            free_memory_bytes: props.free_memory_bytes.min(props.memory_bytes),
            free_memory_measured: true,
            mma_tflops: tflops,
            bandwidth_gbs: bandwidth,
        }
    }

    /// The same target with `bytes` of free memory (measured or chosen by the user).
    pub fn with_free_memory(mut self, bytes: u64) -> Target {
        self.free_memory_bytes = bytes;
        self.free_memory_measured = true;
        self
    }

    /// Compute capability, `None` for the CPU.
    pub fn sm(&self) -> Option<u32> {
        match self.device {
            DeviceKind::Gpu { sm } => Some(sm),
            DeviceKind::Cpu => None,
        }
    }

    /// True for a GPU target.
    pub fn is_gpu(&self) -> bool {
        self.sm().is_some()
    }
}

/// The built-in profile whose rates a live device borrows: its architecture's, and within it
/// the part whose rates differ. A GeForce Blackwell runs f32-accumulate mma.sync at half the
/// workstation rate; a Hopper with more than 100 GiB is an H200 (HBM3e, 4.8 TB/s), one with
/// less an H100 (3.35 TB/s). Without this split every Hopper got the H200's bandwidth and every
/// GeForce card twice its tensor rate.
fn closest_profile(props: &DeviceProperties) -> &'static str {
    match props.sm {
        120.. if props.name.contains("GeForce") => "rtx-5090",
        120.. => "rtx-pro-6000",
        90..=119 if props.memory_bytes > 100 * GIB => "h200",
        90..=119 => "h100",
        _ => "a100",
    }
}

/// (shared memory per SM in bytes, resident threads per SM) by architecture (CUDA occupancy
/// tables: sm_80 164 KiB / 2048, sm_86/89/120 100 KiB / 1536, sm_90 228 KiB / 2048).
const fn per_sm_limits(device: DeviceKind) -> (u64, u32) {
    match device {
        DeviceKind::Cpu => (0, 0),
        DeviceKind::Gpu { sm: 80 } => (167_936, 2048),
        DeviceKind::Gpu { sm: 90..=99 } => (233_472, 2048),
        DeviceKind::Gpu { .. } => (102_400, 1536),
    }
}

fn default_free(total: u64) -> u64 {
    // Integer arithmetic, the same on every platform: at most 9 bytes under 0.9 x total.
    (total / 10).saturating_mul(9)
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let device = match self.device {
            DeviceKind::Gpu { sm } => format!("sm_{sm}, {} SMs", self.sm_count),
            DeviceKind::Cpu => "host CPU".to_owned(),
        };
        write!(
            f,
            "{} ({device}, {} B smem/block, {} free of {} bytes{})",
            self.name,
            self.smem_per_block,
            self.free_memory_bytes,
            self.memory_bytes,
            if self.free_memory_measured {
                ""
            } else {
                " (assumed)"
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_resolve_and_carry_free_memory() {
        for name in Target::NAMES {
            let t = Target::by_name(name).expect(name);
            assert_eq!(t.name, name);
            assert!(t.free_memory_bytes < t.memory_bytes);
            assert!(!t.free_memory_measured);
        }
        let pro = Target::by_name("rtx-pro-6000").unwrap();
        assert_eq!(
            (pro.sm(), pro.sm_count, pro.smem_per_block),
            (Some(120), 188, 101_376)
        );
        assert_eq!(Target::by_name("rtx-5090").unwrap().sm_count, 170);
        assert!(Target::by_name("cpu").unwrap().sm().is_none());
        assert!(Target::by_name("rtx-4090").is_none());
        let small = pro.with_free_memory(1 << 30);
        assert!(small.free_memory_measured);
        assert_eq!(small.free_memory_bytes, 1 << 30);
    }

    #[test]
    fn live_devices_scale_from_their_architecture() {
        let t = Target::from_device(&DeviceProperties {
            name: "NVIDIA H200".into(),
            sm: 90,
            sm_count: 66,
            smem_per_block: 232_448,
            memory_bytes: 100,
            free_memory_bytes: 200,
        });
        assert_eq!(t.name, "auto:NVIDIA H200");
        assert_eq!(t.free_memory_bytes, 100);
        assert!((t.mma_tflops - 325.0).abs() < 1e-9);
    }

    #[test]
    fn live_devices_take_the_rates_of_their_own_part() {
        // (name, sm, SMs, total memory as the driver reports it) -> (bandwidth, TFLOP/s) of the
        // profile it should take.
        let cases = [
            (
                "NVIDIA H100 80GB HBM3",
                90,
                132,
                81_559 * MIB,
                3350.0,
                650.0,
            ),
            ("NVIDIA H200", 90, 132, 143_771 * MIB, 4800.0, 650.0),
            (
                "NVIDIA GeForce RTX 5090",
                120,
                170,
                32_607 * MIB,
                1792.0,
                209.5,
            ),
            (
                "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
                120,
                188,
                97_887 * MIB,
                1792.0,
                430.0,
            ),
            (
                "NVIDIA A100-SXM4-80GB",
                80,
                108,
                81_920 * MIB,
                2039.0,
                312.0,
            ),
        ];
        for (name, sm, sm_count, memory_bytes, bandwidth, tflops) in cases {
            let t = Target::from_device(&DeviceProperties {
                name: name.into(),
                sm,
                sm_count,
                smem_per_block: 101_376,
                memory_bytes,
                free_memory_bytes: memory_bytes / 2,
            });
            assert_eq!(t.bandwidth_gbs, bandwidth, "{name}");
            assert!(
                (t.mma_tflops - tflops).abs() < 1e-9,
                "{name}: {}",
                t.mma_tflops
            );
        }
    }
}
