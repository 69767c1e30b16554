//! `rime run --json`: what ran where, how long it took, and a checksum of every output.
//!
//! The checksum of a tensor is over its logical elements in row-major order (its dims, not
//! its strides): `fnv1a64`, the 64-bit FNV-1a hash of their little-endian bytes in the
//! tensor's own type — exactly the bytes of that tensor in the `--outputs` safetensors file —
//! and `sum` / `sum_of_squares`, the finite elements widened to f64 and added in that order.

use schemars::JsonSchema;
use serde::Serialize;

use super::ReadAsDoc;

/// Format tag of the document.
pub const FORMAT: &str = "rime.run";
/// Version of the document's format.
pub const VERSION: u32 = 1;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every node ran; `nodes` and `outputs` say how (exit 0).
    Ran,
    /// The graph file could not be read, or the graph is not valid; `errors` lists why (exit 1).
    Invalid,
    /// No engine of this build (on this machine) can run some node; `errors` names it and the
    /// reasons (exit 1).
    Unsupported,
    /// The run was refused or failed (an `--inputs` or `--outputs` problem, memory, the
    /// engine); `errors` says why (exit 1).
    Error,
}

/// One `rime run`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunDoc {
    /// Always `rime.run`.
    pub format: String,
    /// Always 1.
    pub version: u32,
    /// The graph file as given.
    pub file: String,
    /// What the graph file was read as; null when it could not be read or its format not told.
    pub read_as: Option<ReadAsDoc>,
    /// How the run ended.
    pub status: RunStatus,
    /// The target analysed for (`cpu`, a device profile, or the live device's name); null
    /// when the run ended before it was chosen.
    pub target: Option<String>,
    /// The seed of the generated inputs.
    pub seed: u64,
    /// Why the run did not complete; empty when `status` is `ran`.
    pub errors: Vec<String>,
    /// The executions, in the order they ran (forward twins included).
    pub nodes: Vec<NodeRunDoc>,
    /// The output tensors of the nodes that ran, in node order.
    pub outputs: Vec<OutputDoc>,
    /// The safetensors file the outputs were written to (`--outputs`); null when none was.
    pub outputs_file: Option<String>,
}

/// One execution of a node.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct NodeRunDoc {
    /// Node name (a forward twin is `<backward>::forward`).
    pub name: String,
    /// `SDPA_FWD` or `SDPA_BWD`.
    pub op: String,
    /// True for the forward run that made a backward's O and Stats (not a node of the file).
    pub forward_twin: bool,
    /// The engine that ran it: `cpu_reference` or `sm120`.
    pub engine: String,
    /// The route (`atomic`, `relay`, `two_kernel`), null when the engine has none.
    pub route: Option<String>,
    /// Workspace of the plan, bytes.
    pub workspace_bytes: u64,
    /// Wall time of the execution (the plan's `execute`, not the plan build), milliseconds.
    pub milliseconds: f64,
}

/// One output tensor.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OutputDoc {
    /// Tensor name.
    pub name: String,
    /// Element type (`bf16`, `f16`, `f32`, ...).
    pub data_type: String,
    /// Logical dims.
    pub dims: Vec<i64>,
    /// Checksum of its values.
    pub checksum: ChecksumDoc,
    /// NaN elements.
    pub nan: u64,
    /// Infinite elements.
    pub inf: u64,
    /// NaN and infinite elements.
    pub non_finite: u64,
}

/// A tensor's checksum (see the module documentation for the element order).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChecksumDoc {
    /// FNV-1a (64 bits) of the elements' little-endian bytes, as 16 lower-case hex digits:
    /// equal for bit-identical tensors.
    pub fnv1a64: String,
    /// Sum of the finite elements in f64; null when it overflows to infinity.
    pub sum: Option<f64>,
    /// Sum of the squares of the finite elements in f64; null when it overflows to infinity.
    pub sum_of_squares: Option<f64>,
}
