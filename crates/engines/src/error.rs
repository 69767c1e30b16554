//! Errors of plan building and execution.

use rime_graph::DataType;

/// Why an engine refused to build a plan or to execute one. Execution is refused before any
/// output is written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The engine is not the one the approved configuration names.
    #[error("the plan is for engine {wanted}, but engine {engine} was asked to build it")]
    WrongEngine {
        /// Engine that was asked.
        engine: &'static str,
        /// Engine the configuration names.
        wanted: &'static str,
    },
    /// The approved configuration does not say what the engine must run (for example a
    /// backward configuration without its main kernel): an analyzer bug, never a user error.
    #[error("engine {engine} cannot build this approved plan: it names no {what}")]
    MalformedPlan {
        /// Engine name.
        engine: &'static str,
        /// What the configuration lacks.
        what: &'static str,
    },
    /// A size exceeds what the engine's kernels take (the analyzer's limits should keep it out).
    #[error("engine {engine}: {what} = {value} exceeds its limit {limit}")]
    LimitExceeded {
        /// Engine name.
        engine: &'static str,
        /// What is too large.
        what: &'static str,
        /// The value.
        value: u64,
        /// The largest allowed.
        limit: u64,
    },
    /// A buffer's address is not aligned as the kernels' vector accesses need.
    #[error("tensor '{tensor}' is at address {address:#x}, which is not a multiple of {alignment} bytes")]
    Misaligned {
        /// Tensor name.
        tensor: String,
        /// The buffer's address.
        address: u64,
        /// The alignment needed, bytes.
        alignment: u64,
    },
    /// An output's buffer (or the workspace) shares memory with another buffer of the pack.
    #[error("the buffer of '{output}' overlaps the buffer of '{other}'")]
    AliasedBuffers {
        /// The output (or `workspace`).
        output: String,
        /// The tensor whose buffer it overlaps.
        other: String,
    },
    /// The engine cannot run on this machine.
    #[error("engine {engine} is unavailable: {reason}")]
    EngineUnavailable {
        /// Engine name.
        engine: &'static str,
        /// Why.
        reason: String,
    },
    /// A graph tensor needs a buffer and the variant pack has none.
    #[error("variant pack has no buffer for tensor '{tensor_}'", tensor_ = rime_graph::shown(.tensor))]
    MissingBuffer {
        /// Tensor name.
        tensor: String,
    },
    /// The variant pack holds a key that is not a non-virtual tensor of the graph.
    #[error("variant pack entry {key_} is not a tensor of the graph that takes a buffer", key_ = rime_graph::shown(.key))]
    ExtraBuffer {
        /// The key as written by the user (uid or name).
        key: String,
    },
    /// Two keys of the variant pack name the same tensor.
    #[error("variant pack gives tensor '{tensor_}' twice", tensor_ = rime_graph::shown(.tensor))]
    DuplicateBuffer {
        /// Tensor name.
        tensor: String,
    },
    /// A problem draws its dropout mask from a Philox stream and is also given a
    /// `Dropout_mask`.
    #[error("tensor '{tensor_}' is a Dropout_mask, but the problem draws its mask from a Philox stream (Seed, Offset); give one of them", tensor_ = rime_graph::shown(.tensor))]
    DropoutMaskWithPhilox {
        /// The mask tensor's name.
        tensor: String,
    },
    /// A buffer's element type differs from the tensor's.
    #[error("tensor '{tensor_}' is {expected}, but its buffer holds {actual}", tensor_ = rime_graph::shown(.tensor))]
    DataTypeMismatch {
        /// Tensor name.
        tensor: String,
        /// Type the graph gives the tensor.
        expected: DataType,
        /// Type of the buffer.
        actual: DataType,
    },
    /// A tensor of a type host buffers cannot hold (bool) would need a host buffer.
    #[error("tensor '{tensor_}' is {data_type}, which host buffers cannot hold", tensor_ = rime_graph::shown(.tensor))]
    UnhostableType {
        /// Tensor name.
        tensor: String,
        /// The tensor's type.
        data_type: DataType,
    },
    /// A buffer is shorter than the strided span of its tensor.
    #[error("tensor '{tensor_}' spans {needed} elements, but its buffer holds {len}", tensor_ = rime_graph::shown(.tensor))]
    BufferTooSmall {
        /// Tensor name.
        tensor: String,
        /// Elements the dims and strides reach.
        needed: usize,
        /// Elements in the buffer.
        len: usize,
    },
    /// A tensor's dims or strides cannot be used (rank, negative or overflowing values).
    #[error("tensor '{tensor_}' has unusable layout: dims {dims:?}, strides {strides:?}", tensor_ = rime_graph::shown(.tensor))]
    BadLayout {
        /// Tensor name.
        tensor: String,
        /// Dims.
        dims: Vec<i64>,
        /// Strides.
        strides: Vec<i64>,
    },
    /// A tensor's dims disagree with the attention problem.
    #[error("tensor '{tensor_}' has dims {actual:?}, expected {expected:?}", tensor_ = rime_graph::shown(.tensor))]
    DimsMismatch {
        /// Tensor name.
        tensor: String,
        /// Dims the problem needs.
        expected: Vec<usize>,
        /// Dims given.
        actual: Vec<usize>,
    },
    /// A sequence length is negative or longer than the sequence.
    #[error("tensor '{tensor_}' gives length {value} for batch {batch}; allowed 0..={max}", tensor_ = rime_graph::shown(.tensor))]
    SeqLenOutOfRange {
        /// Tensor name.
        tensor: String,
        /// Batch index.
        batch: usize,
        /// Value given.
        value: i64,
        /// Sequence dim of the tensor.
        max: usize,
    },
    /// A ragged tensor's offsets hold a negative value.
    #[error("tensor '{tensor_}': its ragged offsets '{offsets_}' give {value} for batch {index}; offsets are element counts >= 0", tensor_ = rime_graph::shown(.tensor), offsets_ = rime_graph::shown(.offsets))]
    RaggedOffsetNegative {
        /// The ragged tensor.
        tensor: String,
        /// Its offsets tensor.
        offsets: String,
        /// Index of the offset (0..=B).
        index: usize,
        /// Value given.
        value: i64,
    },
    /// A ragged tensor's offset is not a multiple of the elements the sm120 kernels move at
    /// once: its sequence's rows would not be 16-byte aligned.
    #[error("tensor '{tensor_}': its ragged offsets '{offsets_}' give {value} for batch {index}, not a multiple of {multiple} elements (16-byte rows, as the sm120 kernels load them)", tensor_ = rime_graph::shown(.tensor), offsets_ = rime_graph::shown(.offsets))]
    RaggedOffsetMisaligned {
        /// The ragged tensor.
        tensor: String,
        /// Its offsets tensor.
        offsets: String,
        /// Index of the offset (0..=B).
        index: usize,
        /// Value given.
        value: usize,
        /// The multiple needed (elements).
        multiple: usize,
    },
    /// A ragged tensor's offsets decrease: a sequence would end before it starts.
    #[error("tensor '{tensor_}': its ragged offsets '{offsets_}' decrease at batch {batch} ({start} then {end}); they must not decrease", tensor_ = rime_graph::shown(.tensor), offsets_ = rime_graph::shown(.offsets))]
    RaggedOffsetsNotMonotone {
        /// The ragged tensor.
        tensor: String,
        /// Its offsets tensor.
        offsets: String,
        /// The batch whose sequence would start at `start` and end at `end`.
        batch: usize,
        /// Offset of the batch.
        start: usize,
        /// Offset of the next batch.
        end: usize,
    },
    /// A ragged tensor's last offset lies past the end of its buffer.
    #[error("tensor '{tensor_}': its ragged offsets '{offsets_}' end at element {last}, but its buffer holds {len}", tensor_ = rime_graph::shown(.tensor), offsets_ = rime_graph::shown(.offsets))]
    RaggedPastBufferEnd {
        /// The ragged tensor.
        tensor: String,
        /// Its offsets tensor.
        offsets: String,
        /// The last offset (the end of the last sequence).
        last: usize,
        /// Elements in the buffer.
        len: usize,
    },
    /// A sequence's tokens do not fit between its offset and the next: they would overlap the
    /// next sequence (or run past the last offset).
    #[error("tensor '{tensor_}': sequence {batch} has {tokens} tokens, which span {needed} elements, but its ragged offsets '{offsets_}' leave it {room} (up to the next offset)", tensor_ = rime_graph::shown(.tensor), offsets_ = rime_graph::shown(.offsets))]
    RaggedSequenceOverflow {
        /// The ragged tensor.
        tensor: String,
        /// Its offsets tensor.
        offsets: String,
        /// The batch.
        batch: usize,
        /// Its tokens (its sequence length).
        tokens: usize,
        /// Elements its tokens span with the tensor's head, token and dim strides.
        needed: usize,
        /// Elements between its offset and the next.
        room: usize,
    },
    /// A ragged tensor's last offset exceeds what `max_total_seq_len_q/kv` tokens hold.
    #[error("tensor '{tensor_}': its ragged offsets '{offsets_}' end at element {last}, past {option} = {total} tokens x token stride {stride} = {limit} elements", tensor_ = rime_graph::shown(.tensor), offsets_ = rime_graph::shown(.offsets))]
    RaggedPastMaxTotal {
        /// The ragged tensor.
        tensor: String,
        /// Its offsets tensor.
        offsets: String,
        /// `max_total_seq_len_q` or `max_total_seq_len_kv`.
        option: &'static str,
        /// The option's value.
        total: u64,
        /// The tensor's token (dim 2) stride.
        stride: usize,
        /// total x stride.
        limit: u64,
        /// The last offset.
        last: usize,
    },
    /// A tensor that is dense by definition (bias, dropout mask, sink) was given a ragged
    /// layout.
    #[error("tensor '{tensor_}' is indexed by batch, head and position; it cannot be ragged", tensor_ = rime_graph::shown(.tensor))]
    RaggedNotAllowed {
        /// Tensor name.
        tensor: String,
    },
    /// The workspace handed to execute is smaller than the plan's workspace size.
    #[error("workspace holds {given} bytes, the plan needs {needed}")]
    WorkspaceTooSmall {
        /// Bytes the plan needs.
        needed: usize,
        /// Bytes given.
        given: usize,
    },
    /// A buffer lives where this engine cannot read it (e.g. a device buffer for the CPU).
    #[error("tensor '{tensor_}' is in {location} memory, engine {engine} needs host memory", tensor_ = rime_graph::shown(.tensor))]
    WrongMemory {
        /// Tensor name.
        tensor: String,
        /// Where the buffer lives.
        location: &'static str,
        /// Engine name.
        engine: &'static str,
    },
    /// Host memory for a buffer or an engine's scratch could not be allocated: the caller's
    /// estimate ([`crate::Plan::scratch`]) was exceeded or memory ran out meanwhile.
    #[error("out of host memory allocating {what_}: {bytes} bytes", what_ = rime_graph::shown(.what))]
    OutOfHostMemory {
        /// What was being allocated.
        what: String,
        /// Bytes asked for.
        bytes: u64,
    },
    /// The CUDA engine failed (CUDA unavailable, compilation, driver, layout).
    #[error(transparent)]
    Cuda(#[from] crate::cuda::CudaError),
}
