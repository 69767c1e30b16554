//! The CPU reference engine's support surface.
//!
//! It implements everything in the graph model except a Dropout_mask or RNG_DUMP of a
//! non-floating type: forward and backward, bias with any broadcast and dBias, every mask,
//! padding, ALiBi, GQA/MQA, Dqk != Dv, sink and dSink, Philox dropout (probability, Seed,
//! Offset, RNG_DUMP) and dropout with a given floating-point mask, any strides, ragged (THD) Q, K, V, O, dO, Stats, dQ, dK and dV (offsets checked at
//! execution), f16 and bf16 io. It is deterministic by construction (fixed summation order)
//! and declares no device workspace (its scratch is host memory it allocates itself).

use rime_graph::Port;

use crate::report::{ConfigReport, Verdict};
use crate::rules::NodeCtx;
use crate::{EngineKind, ReasonCode, Rejection, WorkspaceLayout};

/// The CPU reference engine's verdict on one node.
pub(crate) fn check(ctx: &NodeCtx<'_>) -> ConfigReport {
    let mut rejections = Vec::new();
    // Philox dropout and a floating-point Dropout_mask run; masks are read, and the dump
    // written, as floating-point numbers.
    for (port, what) in [
        (Port::DropoutMask, "reads a floating-point Dropout_mask"),
        (
            Port::RngDump,
            "writes RNG_DUMP (the 0 / 1 keep mask) as floating-point",
        ),
    ] {
        let Some(id) = ctx.node.port(port) else {
            continue;
        };
        if let Some(dt) = ctx.graph.data_type(id).filter(|d| !d.is_float()) {
            rejections.push(Rejection::new(
                ReasonCode::CpuDropout,
                ctx.port(port),
                format!("the CPU reference engine {what}, not {dt}"),
            ));
        }
    }
    ConfigReport {
        engine: EngineKind::CpuReference,
        route: None,
        kernel: None,
        dq_kernel: None,
        workspace: Some(WorkspaceLayout::empty()),
        verdict: if rejections.is_empty() {
            Verdict::Supported
        } else {
            Verdict::Rejected
        },
        rejections,
    }
}
