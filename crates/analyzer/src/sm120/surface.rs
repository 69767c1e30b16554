//! Engine-wide SM120 rules: target, head dims and envelopes, dtypes, strides, features.

use rime_graph::{DataType, Port};

use super::kernels::{self, KernelConfig, KernelRole};
use crate::rules::NodeCtx;
use crate::{ReasonCode, Rejection, Subject};

/// Oldest architecture the kernels' instructions exist on (mma.sync bf16, cp.async).
const MIN_SM: u32 = 80;

/// Blocks a CUDA grid holds in its y and z dimensions (heads and batch).
pub const MAX_GRID_YZ: i64 = 65_535;

/// Longest Sq or Skv the kernels' 32-bit row and band arithmetic is exact for.
pub const MAX_SEQUENCE: i64 = 1 << 30;

/// Attention operands the kernels move with 16-byte vectors: their strides are multiples of 8
/// elements (SMX005) and their buffers 16-byte aligned (the engine checks at execution).
pub const VECTOR_PORTS: [Port; 8] = [
    Port::Q,
    Port::K,
    Port::V,
    Port::O,
    Port::DO,
    Port::DQ,
    Port::DK,
    Port::DV,
];

pub(super) fn check(ctx: &NodeCtx<'_>, kernel: Option<&KernelConfig>) -> Vec<Rejection> {
    let mut out = Vec::new();
    target(ctx, kernel, &mut out);
    head_dims(ctx, kernel, &mut out);
    limits(ctx, &mut out);
    strides(ctx, &mut out);
    features(ctx, &mut out);
    out
}

fn target(ctx: &NodeCtx<'_>, kernel: Option<&KernelConfig>, out: &mut Vec<Rejection>) {
    let subject = Subject::Target {
        target: ctx.target.name.clone(),
    };
    let Some(sm) = ctx.target.sm() else {
        out.push(Rejection::new(
            ReasonCode::TargetNoGpu,
            subject,
            "the SM120 engine needs a GPU",
        ));
        return;
    };
    if sm < MIN_SM {
        out.push(
            Rejection::new(
                ReasonCode::TargetArchTooOld,
                subject.clone(),
                format!("sm_{sm} lacks the kernels' instructions"),
            )
            .limit(
                "compute capability",
                format!("sm_{sm}"),
                format!(">= sm_{MIN_SM}"),
            ),
        );
    }
    if let Some(k) = kernel.filter(|k| u64::from(k.smem_bytes) > ctx.target.smem_per_block) {
        out.push(
            Rejection::new(
                ReasonCode::Sm120SharedMemory,
                subject,
                format!(
                    "kernel {} needs more shared memory than a block may use",
                    k.name
                ),
            )
            .limit(
                "shared memory per block (B)",
                k.smem_bytes,
                ctx.target.smem_per_block,
            ),
        );
    }
}

fn head_dims(ctx: &NodeCtx<'_>, kernel: Option<&KernelConfig>, out: &mut Vec<Rejection>) {
    let s = ctx.shape;
    for (port, name, d) in [(Port::Q, "Dqk", s.dqk), (Port::V, "Dv", s.dv)] {
        if d % 8 != 0 {
            out.push(
                Rejection::new(
                    ReasonCode::Sm120HeadDimAlignment,
                    ctx.port(port),
                    format!("{name} = {d} is not a multiple of 8"),
                )
                .limit(name, d, "a multiple of 8"),
            );
        }
    }
    if kernel.is_none() {
        let role = if ctx.is_backward() {
            KernelRole::BackwardMain
        } else {
            KernelRole::Forward
        };
        out.push(
            Rejection::new(
                ReasonCode::Sm120HeadDimEnvelope,
                ctx.port(Port::Q),
                format!(
                    "no compiled configuration holds head dims ({}, {})",
                    s.dqk, s.dv
                ),
            )
            .limit(
                "(Dqk, Dv)",
                format!("({}, {})", s.dqk, s.dv),
                kernels::envelopes(role),
            ),
        );
    }
}

/// Sizes the launch grids and the kernels' integer arithmetic hold.
fn limits(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    let s = ctx.shape;
    for (port, name, v) in [(Port::Q, "B", s.b), (Port::Q, "Hq", s.hq)] {
        if v > MAX_GRID_YZ {
            out.push(
                Rejection::new(
                    ReasonCode::Sm120GridLimit,
                    ctx.port(port),
                    format!("{name} = {v} exceeds a CUDA grid dimension"),
                )
                .limit(name, v, MAX_GRID_YZ),
            );
        }
    }
    for (port, name, v) in [(Port::Q, "Sq", s.sq), (Port::K, "Skv", s.skv)] {
        if v > MAX_SEQUENCE {
            out.push(
                Rejection::new(
                    ReasonCode::Sm120SequenceLimit,
                    ctx.port(port),
                    format!("{name} = {v} exceeds the kernels' 32-bit sequence positions"),
                )
                .limit(name, v, MAX_SEQUENCE),
            );
        }
    }
}

fn strides(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    for port in VECTOR_PORTS {
        let Some(t) = ctx.tensor(port) else { continue };
        let mut outer = t.strides.iter().rev().skip(1);
        if let Some(&bad) = outer.find(|&&st| st % 8 != 0) {
            out.push(
                Rejection::new(
                    ReasonCode::Sm120StrideAlignment,
                    ctx.port(port),
                    format!("stride {bad} is not a multiple of 8 elements"),
                )
                .limit("stride (elements)", bad, "a multiple of 8"),
            );
        }
    }
}

fn features(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    if ctx.has_dropout() {
        out.push(Rejection::new(
            ReasonCode::Sm120Dropout,
            ctx.subject(),
            "the SM120 engine does not implement dropout",
        ));
    }
    if ctx.bias_broadcast().is_some_and(|b| b.seq) {
        let dims = ctx
            .tensor(Port::Bias)
            .map(|t| t.dims.clone())
            .unwrap_or_default();
        out.push(
            Rejection::new(
                ReasonCode::BiasSeqBroadcast,
                ctx.port(Port::Bias),
                "the bias broadcasts along Sq or Skv",
            )
            .limit(
                "Bias dims",
                format!("{dims:?}"),
                format!(
                    "(1|{b}, 1|{h}, {sq}, {skv})",
                    b = ctx.shape.b,
                    h = ctx.shape.hq,
                    sq = ctx.shape.sq,
                    skv = ctx.shape.skv
                ),
            ),
        );
    }
    let scale_tensor = ctx
        .node
        .input(Port::AttnScale)
        .and_then(|id| ctx.graph.get(id));
    if scale_tensor.is_some_and(|t| t.pass_by_value.is_none()) {
        out.push(Rejection::new(
            ReasonCode::Sm120ScaleTensor,
            ctx.port(Port::AttnScale),
            "the Attn_scale tensor is not passed by value",
        ));
    }
    let s = ctx.shape;
    if s.hk != s.hv {
        out.push(
            Rejection::new(
                ReasonCode::Sm120KvHeadsDiffer,
                ctx.port(Port::V),
                format!("K has {} heads and V has {}", s.hk, s.hv),
            )
            .limit("V heads", s.hv, format!("Hk = {}", s.hk)),
        );
    }
    let compute = ctx.graph.context.compute_data_type;
    if let Some(found) = compute.filter(|&d| d != DataType::F32) {
        out.push(
            Rejection::new(
                ReasonCode::Sm120ComputeType,
                Subject::Graph,
                "the kernels accumulate in f32 only",
            )
            .limit("compute data type", found, DataType::F32),
        );
    }
}
