//! The SM120 engine's support surface: kernel table, engine-wide rules, routes and workspace.
//!
//! Forward nodes get one configuration (the forward kernel; a workspace only for the offsets of
//! ragged tensors). Backward nodes get
//! one configuration per route (atomic, relay, two_kernel, and ordered_dbias when dBias sums
//! over a broadcast bias), each with its own rejections and exact workspace.

pub mod kernels;
mod routes;
mod surface;
mod workspace;

pub use kernels::{KernelConfig, KernelRole, KERNELS, SM120_SMEM_PER_BLOCK};
pub use routes::{
    two_kernel_pair_rejections, ORDERED_DBIAS_FREE_MEMORY_DIVISOR, TWO_KERNEL_FREE_MEMORY_DIVISOR,
};
pub use surface::{MAX_GRID_YZ, MAX_SEQUENCE, VECTOR_PORTS};
pub use workspace::{backward_workspace, forward_workspace, WorkspaceNeeds, DS_PITCH_COLUMNS};

use crate::report::{ConfigReport, Verdict};
use crate::rules::NodeCtx;
use crate::{EngineKind, Rejection, Route, WorkspaceLayout};

/// The SM120 engine's verdicts on one node.
pub(crate) fn check(ctx: &NodeCtx<'_>) -> Vec<ConfigReport> {
    let (dqk, dv) = (ctx.shape.dqk, ctx.shape.dv);
    if !ctx.is_backward() {
        let kernel = kernels::select(KernelRole::Forward, dqk, dv);
        let mut rejections = surface::check(ctx, kernel);
        let workspace = routes::forward_workspace(ctx, &mut rejections);
        return vec![config(None, kernel, None, workspace, rejections)];
    }
    // ordered_dbias differs from relay only in how a broadcast bias's dBias is summed.
    let reduces_dbias = workspace::needs(ctx).dbias_accum_elements.is_some();
    Route::ALL
        .into_iter()
        .filter(|&r| r != Route::OrderedDbias || reduces_dbias)
        .map(|route| {
            // The envelope's entry built for this route (the tiles are the same in each).
            let kernel = kernels::select_main(route, dqk, dv);
            let mut rejections = surface::check(ctx, kernel);
            let dq = kernel
                .filter(|_| route == Route::TwoKernel)
                .and_then(|k| kernels::companion(KernelRole::DqGemm, k));
            let workspace =
                kernel.and_then(|k| routes::sized_workspace(ctx, route, k, &mut rejections));
            if let Some(k) = kernel {
                routes::check(ctx, route, k, dq, workspace.as_ref(), &mut rejections);
            }
            config(Some(route), kernel, dq, workspace, rejections)
        })
        .collect()
}

fn config(
    route: Option<Route>,
    kernel: Option<&'static KernelConfig>,
    dq_kernel: Option<&'static KernelConfig>,
    workspace: Option<WorkspaceLayout>,
    rejections: Vec<Rejection>,
) -> ConfigReport {
    ConfigReport {
        engine: EngineKind::Sm120,
        route,
        kernel,
        dq_kernel,
        workspace,
        verdict: if rejections.is_empty() {
            Verdict::Supported
        } else {
            Verdict::Rejected
        },
        rejections,
    }
}
