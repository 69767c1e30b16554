//! Route eligibility (docs/sdpa-backward.md, section 4): atomic, relay, two_kernel,
//! ordered_dbias.
//!
//! - atomic: never for deterministic graphs.
//! - atomic, relay: a broadcast bias's dBias is summed with fp32 atomics, so a deterministic
//!   graph that asks for it is refused (BIA003). two_kernel sums it from its dS workspace in a
//!   fixed order, and ordered_dbias from its own partials.
//! - relay: always eligible otherwise (when the engine-wide rules pass).
//! - ordered_dbias (offered only when dBias sums over a broadcast): its f32 partials within
//!   1 / [`ORDERED_DBIAS_FREE_MEMORY_DIVISOR`] of the free memory.
//! - two_kernel: no head-dim padding, packed K and dQ, a dQ GEMM whose Q tile is a multiple of
//!   (and not smaller than) the main kernel's, its shared memory within the target's cap, and a
//!   workspace within 1 / [`TWO_KERNEL_FREE_MEMORY_DIVISOR`] of the free memory. When it is not
//!   eligible a deterministic graph falls back to relay.
//!
//! Every route's workspace must fit the free memory at all.

use rime_graph::Port;

use super::kernels::{ragged_dbias_sum_fits, KernelConfig};
use super::workspace::{backward_workspace, needs};
use crate::rules::NodeCtx;
use crate::workspace::human_bytes;
use crate::{ReasonCode, RegionKind, Rejection, Route, Subject, WorkspaceLayout};

/// two_kernel's workspace may use at most free memory / this (a quarter).
pub const TWO_KERNEL_FREE_MEMORY_DIVISOR: u64 = 4;

/// ordered_dbias's dBias partials may use at most free memory / this (a quarter, as two_kernel's
/// dS: the rest stays for the model).
pub const ORDERED_DBIAS_FREE_MEMORY_DIVISOR: u64 = 4;

/// Sizes the workspace of `route`; an overflow becomes a rejection.
pub(super) fn sized_workspace(
    ctx: &NodeCtx<'_>,
    route: Route,
    main: &KernelConfig,
    out: &mut Vec<Rejection>,
) -> Option<WorkspaceLayout> {
    sized(
        ctx,
        backward_workspace(&ctx.shape, route, main, needs(ctx)),
        out,
    )
}

/// The forward's workspace (the ragged tensors' offsets, if any), or a rejection when its size
/// overflows.
pub(super) fn forward_workspace(
    ctx: &NodeCtx<'_>,
    out: &mut Vec<Rejection>,
) -> Option<WorkspaceLayout> {
    sized(
        ctx,
        super::workspace::forward_workspace(&ctx.shape, needs(ctx)),
        out,
    )
}

fn sized(
    ctx: &NodeCtx<'_>,
    layout: Result<WorkspaceLayout, crate::workspace::WorkspaceOverflow>,
    out: &mut Vec<Rejection>,
) -> Option<WorkspaceLayout> {
    match layout {
        Ok(w) => Some(w),
        Err(e) => {
            out.push(
                Rejection::new(ReasonCode::WorkspaceOverflow, ctx.subject(), e.to_string()).limit(
                    format!("{} bytes", e.kind),
                    "more than 2^64 - 1",
                    u64::MAX,
                ),
            );
            None
        }
    }
}

/// The route's own rules.
pub(super) fn check(
    ctx: &NodeCtx<'_>,
    route: Route,
    main: &KernelConfig,
    dq: Option<&KernelConfig>,
    workspace: Option<&WorkspaceLayout>,
    out: &mut Vec<Rejection>,
) {
    // Without a GPU only TGT001 applies: device-memory and shared-memory limits have no meaning.
    let gpu = ctx.target.is_gpu();
    let free = ctx.target.free_memory_bytes;
    if let Some(w) = workspace.filter(|w| gpu && w.total_bytes() > free) {
        out.push(
            Rejection::new(
                ReasonCode::WorkspaceExceedsFreeMemory,
                target(ctx),
                format!("the {route} workspace does not fit the free memory"),
            )
            .limit("workspace (B)", w.total_bytes(), free),
        );
    }
    match route {
        Route::Atomic if ctx.options().deterministic => out.push(Rejection::new(
            ReasonCode::AtomicNotDeterministic,
            ctx.subject(),
            "the graph is deterministic; atomic dQ accumulation is not",
        )),
        Route::TwoKernel => two_kernel(ctx, main, dq, workspace.filter(|_| gpu), out),
        Route::OrderedDbias => ordered_dbias(ctx, workspace.filter(|_| gpu), out),
        _ => {}
    }
    if matches!(route, Route::Atomic | Route::Relay) {
        atomic_dbias_order(ctx, out);
    }
    if route != Route::TwoKernel {
        ragged_dbias_sum(ctx, main, out);
    }
}

/// SMX014: the kernel's ragged builds cannot sum a broadcast bias's dBias at these head dims.
fn ragged_dbias_sum(ctx: &NodeCtx<'_>, main: &KernelConfig, out: &mut Vec<Rejection>) {
    let reduces = ctx.has(Port::DBias) && ctx.bias_broadcast().is_some_and(|b| b.reduces());
    let Some(port) = ctx
        .ragged_port()
        .filter(|_| reduces && !ragged_dbias_sum_fits(main))
    else {
        return;
    };
    out.push(
        Rejection::new(
            ReasonCode::Sm120RaggedBroadcastDbias,
            ctx.port(port),
            format!(
                "{port} is ragged and dBias sums a broadcast bias in {}, which has no ragged \
                 build for it",
                main.name
            ),
        )
        .limit(
            "head dims (Dqk, Dv)",
            format!("({}, {})", main.head_dim_qk, main.head_dim_v),
            "at most (128, 128)",
        ),
    );
}

/// BIA003: a broadcast bias's dBias is summed with fp32 atomics, whose order is not fixed.
fn atomic_dbias_order(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    if !(ctx.options().deterministic && ctx.has(Port::DBias)) {
        return;
    }
    let Some(b) = ctx.bias_broadcast().filter(|b| b.reduces()) else {
        return;
    };
    let dims = ctx
        .tensor(Port::Bias)
        .map(|t| t.dims.clone())
        .unwrap_or_default();
    let over = match (b.batch, b.head) {
        (true, true) => "batches and heads",
        (true, false) => "batches",
        _ => "heads",
    };
    out.push(
        Rejection::new(
            ReasonCode::DeterministicBroadcastDbias,
            ctx.port(Port::DBias),
            format!("deterministic dBias of a broadcast bias sums over {over} with fp32 atomics"),
        )
        .limit(
            "Bias (batch, head) dims",
            format!(
                "({}, {})",
                dims.first().unwrap_or(&0),
                dims.get(1).unwrap_or(&0)
            ),
            format!("({}, {}) when deterministic", ctx.shape.b, ctx.shape.hq),
        ),
    );
}

fn ordered_dbias(ctx: &NodeCtx<'_>, workspace: Option<&WorkspaceLayout>, out: &mut Vec<Rejection>) {
    let allowed = ctx.target.free_memory_bytes / ORDERED_DBIAS_FREE_MEMORY_DIVISOR;
    let partials = workspace.and_then(|w| w.region(RegionKind::DbiasPartials));
    if let Some(r) = partials.filter(|r| r.bytes > allowed) {
        out.push(
            Rejection::new(
                ReasonCode::OrderedDbiasWorkspace,
                target(ctx),
                format!(
                    "dBias partials {} exceed 1/{ORDERED_DBIAS_FREE_MEMORY_DIVISOR} of {} free",
                    human_bytes(r.bytes),
                    human_bytes(ctx.target.free_memory_bytes)
                ),
            )
            .limit("ordered_dbias partials (B)", r.bytes, allowed),
        );
    }
}

fn target(ctx: &NodeCtx<'_>) -> Subject {
    Subject::Target {
        target: ctx.target.name.clone(),
    }
}

fn two_kernel(
    ctx: &NodeCtx<'_>,
    main: &KernelConfig,
    dq: Option<&KernelConfig>,
    workspace: Option<&WorkspaceLayout>,
    out: &mut Vec<Rejection>,
) {
    // Padded head dims need no rule (RTE002, retired): the dQ GEMM zero-fills K past Dqk and
    // stores dQ's first Dqk columns only, as the main kernel does for dK and dV.
    match dq {
        Some(dq) if ctx.target.is_gpu() => out.extend(two_kernel_pair_rejections(
            main,
            dq,
            ctx.target.smem_per_block,
            &target(ctx),
        )),
        Some(_) => {}
        // A table without a dQ GEMM for this envelope has no Q tile to match.
        None => out.push(Rejection::new(
            ReasonCode::TwoKernelTileMismatch,
            target(ctx),
            format!("no dQ GEMM is compiled for the envelope of {}", main.name),
        )),
    }
    let allowed = ctx.target.free_memory_bytes / TWO_KERNEL_FREE_MEMORY_DIVISOR;
    if let Some(w) = workspace.filter(|w| w.total_bytes() > allowed) {
        out.push(
            Rejection::new(
                ReasonCode::TwoKernelWorkspace,
                target(ctx),
                format!(
                    "dS workspace {} exceeds 1/{TWO_KERNEL_FREE_MEMORY_DIVISOR} of {} free; relay is used instead",
                    human_bytes(w.total_bytes()),
                    human_bytes(ctx.target.free_memory_bytes)
                ),
            )
            .limit("two_kernel workspace (B)", w.total_bytes(), allowed),
        );
    }
}

/// The rules on the (main kernel, dQ GEMM) pair: tiles agree and the GEMM fits the target.
pub fn two_kernel_pair_rejections(
    main: &KernelConfig,
    dq: &KernelConfig,
    smem_cap: u64,
    subject: &Subject,
) -> Vec<Rejection> {
    let mut out = Vec::new();
    let (m, g) = (main.block_q, dq.block_q);
    if g < m || m == 0 || g % m != 0 {
        out.push(
            Rejection::new(
                ReasonCode::TwoKernelTileMismatch,
                subject.clone(),
                format!(
                    "dQ GEMM {} Q tile {g} vs main kernel {} Q tile {m}",
                    dq.name, main.name
                ),
            )
            .limit("dQ GEMM Q tile", g, format!("a multiple of {m}, >= {m}")),
        );
    }
    if u64::from(dq.smem_bytes) > smem_cap {
        out.push(
            Rejection::new(
                ReasonCode::TwoKernelSharedMemory,
                subject.clone(),
                format!(
                    "dQ GEMM {} needs more shared memory than a block may use",
                    dq.name
                ),
            )
            .limit("shared memory per block (B)", dq.smem_bytes, smem_cap),
        );
    }
    out
}
