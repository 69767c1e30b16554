//! Engines, SM120 backward routes, and the engine configuration the analyzer approves.

use std::fmt;

use crate::sm120::KernelConfig;
use crate::WorkspaceLayout;

/// An engine that can execute SDPA nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EngineKind {
    /// The CPU reference engine (f32 math, deterministic by construction).
    CpuReference,
    /// The SM120 CUDA engine (mma.sync kernels; also runs on sm_80 / sm_90).
    Sm120,
}

impl EngineKind {
    /// Every engine, in report order.
    pub const ALL: [EngineKind; 2] = [EngineKind::CpuReference, EngineKind::Sm120];

    /// The stable name (`cpu_reference`, `sm120`).
    pub const fn name(self) -> &'static str {
        match self {
            EngineKind::CpuReference => "cpu_reference",
            EngineKind::Sm120 => "sm120",
        }
    }

    /// Parses a stable name.
    pub fn from_name(name: &str) -> Option<EngineKind> {
        EngineKind::ALL.into_iter().find(|e| e.name() == name)
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the SM120 backward produces dQ (docs/sdpa-backward.md, section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Route {
    /// fp32 dQ accumulator with red.global.add from every KV-tile block; not deterministic.
    Atomic,
    /// The same accumulator, but the KV-tile blocks of one Q tile add in a fixed turn passed by
    /// a per-Q-tile counter; deterministic.
    Relay,
    /// The main kernel writes dS to the workspace; a second GEMM kernel computes dQ = scale dS K
    /// with no atomics; deterministic.
    TwoKernel,
    /// relay's dQ, and a broadcast bias's dBias written per (batch, head) as f32 partials that
    /// the convert kernel sums in a fixed order; deterministic, dBias included. Offered only for
    /// graphs whose dBias sums over a broadcast (elsewhere it would be relay).
    OrderedDbias,
}

impl Route {
    /// Every route, in report order.
    pub const ALL: [Route; 4] = [
        Route::Atomic,
        Route::Relay,
        Route::TwoKernel,
        Route::OrderedDbias,
    ];

    /// The stable name (`atomic`, `relay`, `two_kernel`, `ordered_dbias`).
    pub const fn name(self) -> &'static str {
        match self {
            Route::Atomic => "atomic",
            Route::Relay => "relay",
            Route::TwoKernel => "two_kernel",
            Route::OrderedDbias => "ordered_dbias",
        }
    }

    /// Parses a stable name.
    pub fn from_name(name: &str) -> Option<Route> {
        Route::ALL.into_iter().find(|r| r.name() == name)
    }

    /// True when dQ is reduced as on relay (ordered turns per Q tile): relay and ordered_dbias.
    pub const fn relays_dq(self) -> bool {
        matches!(self, Route::Relay | Route::OrderedDbias)
    }

    /// True when the route's dQ is bitwise reproducible (and, on ordered_dbias, a broadcast
    /// bias's dBias too).
    pub const fn is_deterministic(self) -> bool {
        !matches!(self, Route::Atomic)
    }
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One way to run one node: engine, route (SM120 backward only), main kernel (SM120 only) and
/// the exact workspace the engine must use and never exceed.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    /// The engine.
    pub engine: EngineKind,
    /// The dQ route, for SM120 backward nodes.
    pub route: Option<Route>,
    /// The main kernel's tile configuration (forward or backward main), for SM120.
    pub kernel: Option<&'static KernelConfig>,
    /// The dQ GEMM kernel, for the two_kernel route.
    pub dq_kernel: Option<&'static KernelConfig>,
    /// Exact workspace layout.
    pub workspace: WorkspaceLayout,
}

impl EngineConfig {
    /// `engine` or `engine/route`, e.g. `sm120/relay`: the name users deselect or pin.
    pub fn label(&self) -> String {
        label(self.engine, self.route)
    }
}

/// `engine` or `engine/route`.
pub fn label(engine: EngineKind, route: Option<Route>) -> String {
    match route {
        Some(r) => format!("{engine}/{r}"),
        None => engine.name().to_owned(),
    }
}
