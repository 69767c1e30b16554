//! The CPU reference engine's support surface.
//!
//! It implements everything in the graph model except Philox dropout (probability, Seed,
//! Offset, RNG_DUMP): forward and backward, bias with any broadcast and dBias, every mask,
//! padding, ALiBi, GQA/MQA, Dqk != Dv, sink and dSink, dropout with a given floating-point
//! mask, any strides, ragged (THD) Q, K, V, O, dO, Stats, dQ, dK and dV (offsets checked at
//! execution), f16 and bf16 io. It is deterministic by construction (fixed summation order)
//! and declares no device workspace (its scratch is host memory it allocates itself).

use rime_graph::Port;

use crate::report::{ConfigReport, Verdict};
use crate::rules::NodeCtx;
use crate::{EngineKind, ReasonCode, Rejection, WorkspaceLayout};

/// The CPU reference engine's verdict on one node.
pub(crate) fn check(ctx: &NodeCtx<'_>) -> ConfigReport {
    let mut rejections = Vec::new();
    // Dropout with a given floating-point mask runs; the Philox stream (probability, Seed,
    // Offset) and its RNG_DUMP do not.
    if ctx.options().dropout_probability.is_some() {
        rejections.push(Rejection::new(
            ReasonCode::CpuDropout,
            ctx.subject(),
            "the CPU reference engine does not implement Philox dropout (dropout_probability); \
             a given Dropout_mask is supported",
        ));
    } else if ctx.has(Port::RngDump) {
        rejections.push(Rejection::new(
            ReasonCode::CpuDropout,
            ctx.port(Port::RngDump),
            "the CPU reference engine does not implement RNG_DUMP",
        ));
    }
    if let Some(id) = ctx.node.port(Port::DropoutMask) {
        if let Some(dt) = ctx.graph.data_type(id).filter(|d| !d.is_float()) {
            rejections.push(Rejection::new(
                ReasonCode::CpuDropout,
                ctx.port(Port::DropoutMask),
                format!("the CPU reference engine reads a floating-point Dropout_mask, not {dt}"),
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
