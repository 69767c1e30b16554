//! rime-analyzer: which engine configurations can run a graph on a target, with how much
//! workspace, and if not, exactly why — then which to prefer.
//!
//! - [`analyze`] checks a [`Graph`](rime_graph::Graph) against a [`Target`] with no GPU present
//!   and returns a [`SupportReport`]: per node, per engine configuration ([`EngineKind`] and, for
//!   SM120 backward, [`Route`]), either supported with its exact [`WorkspaceLayout`] or rejected
//!   with every [`Rejection`] (a stable [`ReasonCode`], the subject, the limit and a hint). It
//!   never returns an error and never panics.
//! - [`heuristics()`] ranks the supported configurations ([`Candidate`]s) by a documented cost
//!   model ([`cost`]), with modes, deselection and pinning.
//! - [`SupportReport::approve`] turns a candidate into an [`ApprovedPlan`], the only value
//!   engines accept.
//!
//! ```
//! use rime_analyzer::{analyze, heuristics, HeuristicsOptions, Route, Target};
//! use rime_graph::{Context, DataType, Graph, SdpaBackwardAttrs, Tensor};
//!
//! let mut g = Graph::new(Context::with_io(DataType::Bf16));
//! let t = |n: &str, d: i64| Tensor::packed(n, &[2, 8, 256, d]);
//! let (q, k, v) = (g.tensor(t("Q", 128)), g.tensor(t("K", 128)), g.tensor(t("V", 128)));
//! let (o, d_o) = (g.tensor(t("O", 128)), g.tensor(t("dO", 128)));
//! let stats = g.tensor(t("Stats", 1).with_data_type(DataType::F32));
//! g.sdpa_backward(q, k, v, o, d_o, stats, SdpaBackwardAttrs::new().causal().deterministic())
//!     .unwrap();
//!
//! let report = analyze(&g, &Target::by_name("rtx-pro-6000").unwrap());
//! let ranked = heuristics(&report, &HeuristicsOptions::default());
//! // Deterministic graphs never get the atomic route.
//! assert!(ranked.iter().all(|c| c.config.route != Some(Route::Atomic)));
//! let plan = report.approve(&ranked[0]).unwrap();
//! assert!(plan.workspace().total_bytes() > 0);
//! ```

mod analyze;
pub mod cost;
mod cpu_reference;
mod engine;
#[cfg(test)]
mod generated;
pub mod heuristics;
mod plan;
mod problem;
mod reason;
mod rejection;
mod render;
mod report;
pub mod report_json;
mod rules;
mod selector;
pub mod sm120;
mod target;
mod workspace;

pub use analyze::analyze;
pub use engine::{EngineConfig, EngineKind, Route};
pub use heuristics::{heuristics, Candidate, HeuristicsMode, HeuristicsOptions};
pub use plan::{ApproveError, ApprovedPlan, AttnScale};
pub use problem::{Band, BiasShape, ProblemShape, SdpaProblem, TensorSpec};
pub use reason::{reasons_markdown, Area, ReasonCode};
pub use rejection::{Limit, Rejection, Subject};
pub use render::{render_candidates, render_report};
pub use report::{ConfigReport, NodeReport, SupportReport, Verdict};
pub use rules::structure::code_of as structural_code;
pub use selector::{known_selectors, Selector, UnknownSelector};
pub use sm120::{KernelConfig, KernelRole};
pub use target::{DeviceKind, DeviceProperties, Target, DEFAULT_FREE_FRACTION};
pub use workspace::{
    human_bytes, Region, RegionKind, WorkspaceLayout, WorkspaceOverflow, REGION_ALIGN,
};
