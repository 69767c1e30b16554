//! Errors of the graph crate: building, structural validation, and JSON load/save.

use crate::{DataType, Port};

/// Everything that can be wrong with a graph's structure, or with building one.
///
/// Every variant names the tensor, node or port at fault and, where a limit is involved, the
/// value found and the value allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GraphError {
    /// A node refers to a tensor id that is not in the graph.
    #[error("node `{node}` port {port}: tensor #{index} does not exist in this graph")]
    UnknownTensor {
        /// Node name.
        node: String,
        /// Port.
        port: Port,
        /// The dangling index.
        index: usize,
    },
    /// A tensor's ragged-offset link points to no tensor.
    #[error("tensor `{tensor}`: ragged offset refers to tensor #{index}, which does not exist")]
    UnknownRaggedOffset {
        /// Tensor name.
        tensor: String,
        /// The dangling index.
        index: usize,
    },
    /// A required port is not bound.
    #[error("node `{node}`: required port {port} is missing")]
    MissingPort {
        /// Node name.
        node: String,
        /// Port.
        port: Port,
    },
    /// A port that the node's op does not have.
    #[error("node `{node}` ({op}): port {port} is not a port of this op")]
    UnexpectedPort {
        /// Node name.
        node: String,
        /// Op tag.
        op: &'static str,
        /// Port.
        port: Port,
    },
    /// A tensor with an empty name.
    #[error("tensor #{index} has an empty name")]
    EmptyName {
        /// Tensor index.
        index: usize,
    },
    /// Two tensors share a name.
    #[error("tensor name `{name}` is used by more than one tensor")]
    DuplicateName {
        /// The name.
        name: String,
    },
    /// Two nodes share a name.
    #[error("node name `{name}` is used by more than one node")]
    DuplicateNodeName {
        /// The name.
        name: String,
    },
    /// Two tensors share a uid.
    #[error("uid {uid} is assigned to both `{first}` and `{second}`")]
    DuplicateUid {
        /// The uid.
        uid: i64,
        /// First tensor.
        first: String,
        /// Second tensor.
        second: String,
    },
    /// A tensor whose rank is not what its port needs.
    #[error("tensor `{tensor}` (port {port}): rank {found}, expected {expected}")]
    BadRank {
        /// Tensor name.
        tensor: String,
        /// Port.
        port: Port,
        /// Rank found.
        found: usize,
        /// Rank needed.
        expected: usize,
    },
    /// Dims and strides of different lengths, or no dims at all.
    #[error("tensor `{tensor}`: {dims} dims but {strides} strides (need the same non-zero count)")]
    StrideCount {
        /// Tensor name.
        tensor: String,
        /// Number of dims.
        dims: usize,
        /// Number of strides.
        strides: usize,
    },
    /// A dim that is zero or negative.
    #[error("tensor `{tensor}`: dim {axis} is {value}, must be >= 1")]
    NonPositiveDim {
        /// Tensor name.
        tensor: String,
        /// Axis.
        axis: usize,
        /// Value found.
        value: i64,
    },
    /// A negative stride.
    #[error("tensor `{tensor}`: stride {axis} is {value}, must be >= 0")]
    NegativeStride {
        /// Tensor name.
        tensor: String,
        /// Axis.
        axis: usize,
        /// Value found.
        value: i64,
    },
    /// The last stride of an attention tensor is not 1.
    #[error("tensor `{tensor}` (port {port}): last-dim stride is {found}, must be 1")]
    LastStrideNotOne {
        /// Tensor name.
        tensor: String,
        /// Port.
        port: Port,
        /// Stride found.
        found: i64,
    },
    /// Element count or byte size does not fit in 63 bits.
    #[error("tensor `{tensor}`: size overflows (dims {dims:?}, strides {strides:?})")]
    SizeOverflow {
        /// Tensor name.
        tensor: String,
        /// Dims.
        dims: Vec<i64>,
        /// Strides.
        strides: Vec<i64>,
    },
    /// A tensor whose dims disagree with what its port requires (e.g. dQ vs Q).
    #[error(
        "node `{node}` port {port}: tensor `{tensor}` has dims {found:?}, expected {expected:?}"
    )]
    ShapeMismatch {
        /// Node name.
        node: String,
        /// Port.
        port: Port,
        /// Tensor name.
        tensor: String,
        /// Dims found.
        found: Vec<i64>,
        /// Dims required.
        expected: Vec<i64>,
    },
    /// A tensor that must broadcast to a shape but does not (each dim equal or 1).
    #[error("node `{node}` port {port}: tensor `{tensor}` has dims {found:?}, each must be 1 or equal {full:?}")]
    NotBroadcastable {
        /// Node name.
        node: String,
        /// Port.
        port: Port,
        /// Tensor name.
        tensor: String,
        /// Dims found.
        found: Vec<i64>,
        /// The full shape.
        full: Vec<i64>,
    },
    /// A tensor with no declared type and no context type to infer one from.
    #[error("tensor `{tensor}`: no data type set and the context's {which} data type is unset")]
    DataTypeUnset {
        /// Tensor name.
        tensor: String,
        /// "io" or "intermediate".
        which: &'static str,
    },
    /// A data type the port does not take.
    #[error(
        "tensor `{tensor}` (port {port}): data type {found} not allowed, expected one of {}",
        type_names(allowed)
    )]
    DataTypeNotAllowed {
        /// Tensor name.
        tensor: String,
        /// Port.
        port: Port,
        /// Type found.
        found: DataType,
        /// Types allowed.
        allowed: Vec<DataType>,
    },
    /// A data type that must equal Q's.
    #[error("tensor `{tensor}` (port {port}): data type {found}, must match Q's {expected}")]
    DataTypeMismatch {
        /// Tensor name.
        tensor: String,
        /// Port.
        port: Port,
        /// Type found.
        found: DataType,
        /// Q's type.
        expected: DataType,
    },
    /// A virtual tensor with a pass-by-value payload.
    #[error("tensor `{tensor}`: a virtual tensor cannot be passed by value")]
    VirtualByValue {
        /// Tensor name.
        tensor: String,
    },
    /// A pass-by-value tensor of more than one element (a by-value payload is one scalar).
    #[error("tensor `{tensor}`: passed by value but has dims {dims:?}; a by-value tensor holds one element (all dims 1)")]
    ByValueNotScalar {
        /// Tensor name.
        tensor: String,
        /// Dims.
        dims: Vec<i64>,
    },
    /// An output whose strides map two elements to one memory location.
    #[error("node `{node}` port {port}: output `{tensor}` has overlapping strides {strides:?} for dims {dims:?}; each element of an output needs its own memory")]
    OverlappingOutput {
        /// Node name.
        node: String,
        /// Port.
        port: Port,
        /// Tensor name.
        tensor: String,
        /// Dims.
        dims: Vec<i64>,
        /// Strides.
        strides: Vec<i64>,
    },
    /// A pass-by-value payload whose type differs from the declared one.
    #[error("tensor `{tensor}`: passed-by-value {found} differs from its data type {declared}")]
    ByValueTypeMismatch {
        /// Tensor name.
        tensor: String,
        /// Payload type.
        found: DataType,
        /// Declared type.
        declared: DataType,
    },
    /// A pass-by-value tensor bound to an output port.
    #[error("node `{node}` port {port}: output `{tensor}` cannot be passed by value")]
    ByValueOutput {
        /// Node name.
        node: String,
        /// Port.
        port: Port,
        /// Tensor name.
        tensor: String,
    },
    /// A virtual input that no node produces.
    #[error("tensor `{tensor}` is virtual but no node produces it (an input needs a buffer)")]
    VirtualWithoutProducer {
        /// Tensor name.
        tensor: String,
    },
    /// A tensor written by more than one port or node.
    #[error("tensor `{tensor}` is written by more than one output (node `{node}` port {port})")]
    MultipleWriters {
        /// Tensor name.
        tensor: String,
        /// Second writer node.
        node: String,
        /// Second writer port.
        port: Port,
    },
    /// An output bound to the same tensor as one of the node's inputs.
    #[error("node `{node}`: output {port} aliases input tensor `{tensor}`")]
    AliasedOutput {
        /// Node name.
        node: String,
        /// Output port.
        port: Port,
        /// Tensor name.
        tensor: String,
    },
    /// Nodes that depend on each other.
    #[error("node `{node}` is on a dependency cycle")]
    Cycle {
        /// A node on the cycle.
        node: String,
    },
}

/// All structural problems of a graph, as returned by [`Graph::validate`](crate::Graph::validate).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{} structural error(s); first: {}", .0.len(), .0.first().map(ToString::to_string).unwrap_or_default())]
pub struct ValidationErrors(pub Vec<GraphError>);

/// `f16, bf16` for messages (the JSON names, not Rust's Debug).
fn type_names(types: &[DataType]) -> String {
    types
        .iter()
        .map(|d| d.name())
        .collect::<Vec<_>>()
        .join(", ")
}
