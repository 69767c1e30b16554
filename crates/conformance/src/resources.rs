//! `rime selftest --resources`: what happens when device memory runs short, on the live device.
//!
//! 1. A backward graph whose two_kernel dS workspace (B * Hq * Sq * round_up(Skv, 128) * 2
//!    bytes) is larger than the device's free memory, analysed for the `auto` target (free
//!    memory read now), deterministic, must rank relay first for sm120 and carry the analyzer's
//!    RTE006 reason.
//! 2. A workspace allocation larger than the free memory must fail with
//!    `CudaError::OutOfMemory` (what, bytes needed, free and total), and the device must still
//!    work afterwards (a small allocation and a synchronize succeed).

use rime_analyzer::{
    analyze, heuristics, EngineKind, HeuristicsOptions, ReasonCode, Route, Target,
};
use rime_engines::cuda::{CudaDevice, CudaError, DeviceWorkspace};
use rime_graph::{Graph, GraphError};

use crate::spec::CaseSpec;

/// The result of one resource check.
#[derive(Debug, Clone)]
pub struct ResourceReport {
    /// Check name.
    pub name: &'static str,
    /// True when the behaviour was the expected one.
    pub passed: bool,
    /// What was observed (the analyzer's reason, the error message).
    pub detail: String,
}

/// Smallest square Sq = Skv (a multiple of 128) whose dS for `b` x `hq` heads exceeds `bytes`.
fn seq_len_exceeding(b: u64, hq: u64, bytes: u64) -> u64 {
    let per_row_pair = b * hq * 2;
    let s = ((bytes / per_row_pair) as f64).sqrt() as u64 + 1;
    s.div_ceil(128) * 128
}

/// A deterministic bf16 backward of B = 1, Hq = Hk = 16, D = 64 with Sq = Skv = `s` (only
/// analysed, nothing allocated). Deterministic, so that the choice is between the two
/// deterministic routes, two_kernel (fastest when its dS fits) and relay.
fn big_backward(s: usize) -> Result<Graph, GraphError> {
    let spec = CaseSpec {
        deterministic: true,
        ..CaseSpec::new(1, 16, 16, s, s, 64)
    };
    Ok(spec.backward_graph()?.graph)
}

fn relay_when_ds_does_not_fit(target: &Target) -> ResourceReport {
    let name = "two_kernel-dS-exceeds-free-memory";
    let free = target.free_memory_bytes;
    let s = seq_len_exceeding(1, 16, free);
    let ds = 16 * s * s * 2;
    let graph = match usize::try_from(s).map(big_backward) {
        Ok(Ok(g)) => Ok(g),
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    let graph = match graph {
        Ok(g) => g,
        Err(e) => {
            return ResourceReport {
                name,
                passed: false,
                detail: e,
            }
        }
    };
    let report = analyze(&graph, target);
    let ranked = heuristics(&report, &HeuristicsOptions::default());
    let top = ranked.iter().find(|c| c.config.engine == EngineKind::Sm120);
    let reason = report
        .all_rejections()
        .find(|r| r.code == ReasonCode::TwoKernelWorkspace)
        .map(|r| format!("{}: {}", r.code.code(), r.message));
    let route = top.and_then(|c| c.config.route);
    ResourceReport {
        name,
        passed: route == Some(Route::Relay) && reason.is_some(),
        detail: format!(
            "B=1 Hq=16 Sq=Skv={s} D=64: dS {ds} B, free {free} B; top sm120 route {}; {}",
            route.map_or("none".to_string(), |r| r.to_string()),
            reason.unwrap_or_else(|| "no RTE006 rejection".to_string())
        ),
    }
}

fn allocation_beyond_free_memory(dev: &CudaDevice) -> ResourceReport {
    let name = "allocation-exceeds-free-memory";
    let fail = |detail: String| ResourceReport {
        name,
        passed: false,
        detail,
    };
    let (free, _) = match dev.memory_info() {
        Ok(m) => m,
        Err(e) => return fail(e.to_string()),
    };
    let bytes = free + (1 << 30);
    let outcome = DeviceWorkspace::new(dev, bytes as usize);
    // The device must still be usable after the refusal.
    let after = DeviceWorkspace::new(dev, 1 << 20)
        .and_then(|_| dev.synchronize())
        .map_err(|e| e.to_string());
    match (outcome, after) {
        (
            Err(
                e @ CudaError::OutOfMemory {
                    needed, free: f, ..
                },
            ),
            Ok(()),
        ) => ResourceReport {
            name,
            passed: needed == bytes && f < needed,
            detail: e.to_string(),
        },
        (Err(e), Ok(())) => fail(format!("expected OutOfMemory, got: {e}")),
        (Ok(_), _) => fail(format!("{bytes} B allocated with {free} B free")),
        (_, Err(e)) => fail(format!("the device failed after the refusal: {e}")),
    }
}

/// Runs both checks; `target` is the live device's (`auto_target`).
pub fn run(dev: &CudaDevice, target: &Target) -> Vec<ResourceReport> {
    vec![
        relay_when_ds_does_not_fit(target),
        allocation_beyond_free_memory(dev),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chosen_length_makes_ds_exceed_the_bytes() {
        for bytes in [1u64 << 20, 30 << 30, 140 << 30] {
            let s = seq_len_exceeding(1, 16, bytes);
            assert!(16 * s * s * 2 > bytes);
            assert_eq!(s % 128, 0);
        }
    }

    #[test]
    fn without_free_memory_for_ds_relay_is_ranked_first() {
        // A busy small device up to an idle H200's free memory.
        for free in [8u64 << 30, 140 << 30] {
            let target = Target::by_name("h200").map(|t| t.with_free_memory(free));
            let Some(target) = target else {
                panic!("h200 profile missing");
            };
            let r = relay_when_ds_does_not_fit(&target);
            assert!(r.passed, "{}", r.detail);
            assert!(r.detail.contains("RTE006"), "{}", r.detail);
        }
    }
}
