//! Errors of the graph crate: building, structural validation, and JSON load/save.

use crate::{DataType, Port};

/// Everything that can be wrong with a graph's structure, or with building one.
///
/// Every variant names the tensor, node or port at fault and, where a limit is involved, the
/// value found and the value allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GraphError {
    /// A node refers to a tensor id that is not in the graph.
    #[error("node `{node_}` port {port}: tensor #{index} does not exist in this graph", node_ = crate::shown(.node))]
    UnknownTensor {
        /// Node name.
        node: String,
        /// Port.
        port: Port,
        /// The dangling index.
        index: usize,
    },
    /// A tensor's ragged-offset link points to no tensor.
    #[error("tensor `{tensor_}`: ragged offset refers to tensor #{index}, which does not exist", tensor_ = crate::shown(.tensor))]
    UnknownRaggedOffset {
        /// Tensor name.
        tensor: String,
        /// The dangling index.
        index: usize,
    },
    /// A required port is not bound.
    #[error("node `{node_}`: required port {port} is missing", node_ = crate::shown(.node))]
    MissingPort {
        /// Node name.
        node: String,
        /// Port.
        port: Port,
    },
    /// A port that the node's op does not have.
    #[error("node `{node_}` ({op}): port {port} is not a port of this op", node_ = crate::shown(.node))]
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
    /// A node with an empty name.
    #[error("node #{index} has an empty name")]
    EmptyNodeName {
        /// Node index.
        index: usize,
    },
    /// A graph without nodes: nothing to validate, analyze or run.
    #[error("the graph has no nodes")]
    EmptyGraph,
    /// An option set on a node whose op does not have it (e.g. `deterministic` on SDPA_FWD).
    #[error("node `{node_}` ({op}): option `{option}` is not an option of this op", node_ = crate::shown(.node))]
    UnexpectedOption {
        /// Node name.
        node: String,
        /// Op tag.
        op: &'static str,
        /// The option's JSON name.
        option: &'static str,
    },
    /// A virtual output that no node reads: it gets no buffer, so its values would be lost.
    #[error("node `{node_}` port {port}: output `{tensor_}` is virtual and no node reads it, so its values would be lost", node_ = crate::shown(.node), tensor_ = crate::shown(.tensor))]
    UnreadVirtualOutput {
        /// Node name.
        node: String,
        /// Output port.
        port: Port,
        /// Tensor name.
        tensor: String,
    },
    /// A ragged-offset tensor of a data type other than i32 or i64.
    #[error("tensor `{tensor_}`: its ragged offsets `{offsets_}` are {found}, expected one of {}", type_names(allowed), tensor_ = crate::shown(.tensor), offsets_ = crate::shown(.offsets))]
    RaggedOffsetType {
        /// The tensor with the ragged layout.
        tensor: String,
        /// The offsets tensor.
        offsets: String,
        /// Type found.
        found: DataType,
        /// Types allowed.
        allowed: Vec<DataType>,
    },
    /// A ragged-offset tensor whose dims are not (B + 1, 1, 1, 1).
    #[error("tensor `{tensor_}`: its ragged offsets `{offsets_}` have dims {found:?}, expected {expected:?} (batch + 1 offsets)", tensor_ = crate::shown(.tensor), offsets_ = crate::shown(.offsets))]
    RaggedOffsetShape {
        /// The tensor with the ragged layout.
        tensor: String,
        /// The offsets tensor.
        offsets: String,
        /// Dims found.
        found: Vec<i64>,
        /// Dims required.
        expected: Vec<i64>,
    },
    /// Two tensors share a name.
    #[error("tensor name `{name_}` is used by more than one tensor", name_ = crate::shown(.name))]
    DuplicateName {
        /// The name.
        name: String,
    },
    /// Two nodes share a name.
    #[error("node name `{name_}` is used by more than one node", name_ = crate::shown(.name))]
    DuplicateNodeName {
        /// The name.
        name: String,
    },
    /// Two tensors share a uid.
    #[error("uid {uid} is assigned to both `{first_}` and `{second_}`", first_ = crate::shown(.first), second_ = crate::shown(.second))]
    DuplicateUid {
        /// The uid.
        uid: i64,
        /// First tensor.
        first: String,
        /// Second tensor.
        second: String,
    },
    /// A tensor whose rank is not what its port needs.
    #[error("tensor `{tensor_}` (port {port}): rank {found}, expected {expected}", tensor_ = crate::shown(.tensor))]
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
    #[error("tensor `{tensor_}`: {dims} dims but {strides} strides (need the same non-zero count)", tensor_ = crate::shown(.tensor))]
    StrideCount {
        /// Tensor name.
        tensor: String,
        /// Number of dims.
        dims: usize,
        /// Number of strides.
        strides: usize,
    },
    /// A dim that is zero or negative.
    #[error("tensor `{tensor_}`: dim {axis} is {value}, must be >= 1", tensor_ = crate::shown(.tensor))]
    NonPositiveDim {
        /// Tensor name.
        tensor: String,
        /// Axis.
        axis: usize,
        /// Value found.
        value: i64,
    },
    /// A negative stride.
    #[error("tensor `{tensor_}`: stride {axis} is {value}, must be >= 0", tensor_ = crate::shown(.tensor))]
    NegativeStride {
        /// Tensor name.
        tensor: String,
        /// Axis.
        axis: usize,
        /// Value found.
        value: i64,
    },
    /// The last stride of an attention tensor is not 1.
    #[error("tensor `{tensor_}` (port {port}): last-dim stride is {found}, must be 1", tensor_ = crate::shown(.tensor))]
    LastStrideNotOne {
        /// Tensor name.
        tensor: String,
        /// Port.
        port: Port,
        /// Stride found.
        found: i64,
    },
    /// Element count or byte size does not fit in 63 bits.
    #[error("tensor `{tensor_}`: size overflows (dims {dims:?}, strides {strides:?})", tensor_ = crate::shown(.tensor))]
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
        "node `{node_}` port {port}: tensor `{tensor_}` has dims {found:?}, expected {expected:?}"
    , tensor_ = crate::shown(.tensor), node_ = crate::shown(.node))]
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
    #[error("node `{node_}` port {port}: tensor `{tensor_}` has dims {found:?}, each must be 1 or equal {full:?}", tensor_ = crate::shown(.tensor), node_ = crate::shown(.node))]
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
    #[error("tensor `{tensor_}`: no data type set and the context's {which} data type is unset", tensor_ = crate::shown(.tensor))]
    DataTypeUnset {
        /// Tensor name.
        tensor: String,
        /// "io" or "intermediate".
        which: &'static str,
    },
    /// A data type the port does not take.
    #[error(
        "tensor `{tensor_}` (port {port}): data type {found} not allowed, expected one of {}",
        type_names(allowed)
    , tensor_ = crate::shown(.tensor))]
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
    #[error("tensor `{tensor_}` (port {port}): data type {found}, must match Q's {expected}", tensor_ = crate::shown(.tensor))]
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
    #[error("tensor `{tensor_}`: a virtual tensor cannot be passed by value", tensor_ = crate::shown(.tensor))]
    VirtualByValue {
        /// Tensor name.
        tensor: String,
    },
    /// A pass-by-value tensor of more than one element (a by-value payload is one scalar).
    #[error("tensor `{tensor_}`: passed by value but has dims {dims:?}; a by-value tensor holds one element (all dims 1)", tensor_ = crate::shown(.tensor))]
    ByValueNotScalar {
        /// Tensor name.
        tensor: String,
        /// Dims.
        dims: Vec<i64>,
    },
    /// An output whose strides map two elements to one memory location.
    #[error("node `{node_}` port {port}: output `{tensor_}` has overlapping strides {strides:?} for dims {dims:?}; each element of an output needs its own memory", tensor_ = crate::shown(.tensor), node_ = crate::shown(.node))]
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
    /// A pass-by-value tensor bound to an input port that engines read from a buffer.
    #[error("node `{node_}` port {port}: `{tensor_}` is passed by value, but {port} is read from a buffer; only Attn_scale, Seed, Offset, Dropout_scale and Dropout_scale_inv take a value", tensor_ = crate::shown(.tensor), node_ = crate::shown(.node))]
    ByValueOnBufferPort {
        /// Node name.
        node: String,
        /// Port.
        port: Port,
        /// Tensor name.
        tensor: String,
    },
    /// A pass-by-value payload whose type differs from the declared one.
    #[error("tensor `{tensor_}`: passed-by-value {found} differs from its data type {declared}", tensor_ = crate::shown(.tensor))]
    ByValueTypeMismatch {
        /// Tensor name.
        tensor: String,
        /// Payload type.
        found: DataType,
        /// Declared type.
        declared: DataType,
    },
    /// A pass-by-value tensor bound to an output port.
    #[error("node `{node_}` port {port}: output `{tensor_}` cannot be passed by value", tensor_ = crate::shown(.tensor), node_ = crate::shown(.node))]
    ByValueOutput {
        /// Node name.
        node: String,
        /// Port.
        port: Port,
        /// Tensor name.
        tensor: String,
    },
    /// A virtual input that no node produces.
    #[error("tensor `{tensor_}` is virtual but no node produces it (an input needs a buffer)", tensor_ = crate::shown(.tensor))]
    VirtualWithoutProducer {
        /// Tensor name.
        tensor: String,
    },
    /// A tensor written by more than one port or node.
    #[error("tensor `{tensor_}` is written by more than one output (node `{node_}` port {port})", tensor_ = crate::shown(.tensor), node_ = crate::shown(.node))]
    MultipleWriters {
        /// Tensor name.
        tensor: String,
        /// Second writer node.
        node: String,
        /// Second writer port.
        port: Port,
    },
    /// An output bound to the same tensor as one of the node's inputs.
    #[error("node `{node_}`: output {port} aliases input tensor `{tensor_}`", tensor_ = crate::shown(.tensor), node_ = crate::shown(.node))]
    AliasedOutput {
        /// Node name.
        node: String,
        /// Output port.
        port: Port,
        /// Tensor name.
        tensor: String,
    },
    /// Nodes that depend on each other.
    #[error("node `{node_}` is on a dependency cycle", node_ = crate::shown(.node))]
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
