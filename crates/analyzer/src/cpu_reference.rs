//! The CPU reference engine's support surface.
//!
//! It implements everything in the graph model except dropout (Philox probability, custom
//! mask, RNG_DUMP) and ragged (THD) layouts: forward and backward, bias with any broadcast and
//! dBias, every mask, padding, ALiBi, GQA/MQA, Dqk != Dv, sink and dSink, any strides, f16 and
//! bf16 io. It is deterministic by construction (fixed summation order) and declares no device
//! workspace (its scratch is host memory it allocates itself).

use rime_graph::Port;

use crate::report::{ConfigReport, Verdict};
use crate::rules::NodeCtx;
use crate::{EngineKind, ReasonCode, Rejection, WorkspaceLayout};

/// The CPU reference engine's verdict on one node.
pub(crate) fn check(ctx: &NodeCtx<'_>) -> ConfigReport {
    let mut rejections = Vec::new();
    if ctx.has_dropout() {
        let port = [Port::DropoutMask, Port::RngDump]
            .into_iter()
            .find(|&p| ctx.has(p));
        let subject = port.map_or_else(|| ctx.subject(), |p| ctx.port(p));
        rejections.push(Rejection::new(
            ReasonCode::CpuDropout,
            subject,
            "the CPU reference engine does not implement dropout",
        ));
    }
    if let Some(port) = ctx.ragged_port() {
        rejections.push(Rejection::new(
            ReasonCode::CpuRagged,
            ctx.port(port),
            format!("{port} has a ragged (THD) offset"),
        ));
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
