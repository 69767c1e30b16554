//! Reason codes: why a graph, a node or an engine configuration is rejected.
//!
//! Every code is a fieldless variant with a stable string code (`AREA###`) that is never reused
//! or renumbered. Its doc comment follows a fixed template — a one-line summary of what it
//! checks, then `Why:` and `Fix:` paragraphs — and is the single source of `docs/reasons.md`
//! ([`reasons_markdown`]) and of `rime explain CODE` ([`ReasonCode::doc`]).

use std::fmt;

/// The area a reason code belongs to (its code prefix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Area {
    /// `STR`: structural validation of the graph (mapped from `rime_graph::GraphError`).
    Structure,
    /// `SHP`: shapes and sizes the SDPA semantics need.
    Shape,
    /// `SCL`: the attention scale.
    Scale,
    /// `MSK`: causal, band and ALiBi masks.
    Mask,
    /// `PAD`: padding masks and sequence lengths.
    Padding,
    /// `BIA`: additive bias and its gradient.
    Bias,
    /// `DRP`: dropout.
    Dropout,
    /// `SNK`: attention sink and its gradient.
    Sink,
    /// `LAY`: ragged (THD) layouts and strides.
    Layout,
    /// `TGT`: the target device.
    Target,
    /// `CPU`: the CPU reference engine's support surface.
    CpuReference,
    /// `SMX`: the SM120 engine's support surface.
    Sm120,
    /// `RTE`: SM120 backward routes (atomic, relay, two_kernel).
    Route,
    /// `WSP`: workspace sizes.
    Workspace,
}

impl Area {
    /// Every area, in code order.
    pub const ALL: [Area; 14] = [
        Area::Structure,
        Area::Shape,
        Area::Scale,
        Area::Mask,
        Area::Padding,
        Area::Bias,
        Area::Dropout,
        Area::Sink,
        Area::Layout,
        Area::Target,
        Area::CpuReference,
        Area::Sm120,
        Area::Route,
        Area::Workspace,
    ];

    /// The code prefix.
    pub const fn prefix(self) -> &'static str {
        match self {
            Area::Structure => "STR",
            Area::Shape => "SHP",
            Area::Scale => "SCL",
            Area::Mask => "MSK",
            Area::Padding => "PAD",
            Area::Bias => "BIA",
            Area::Dropout => "DRP",
            Area::Sink => "SNK",
            Area::Layout => "LAY",
            Area::Target => "TGT",
            Area::CpuReference => "CPU",
            Area::Sm120 => "SMX",
            Area::Route => "RTE",
            Area::Workspace => "WSP",
        }
    }

    /// A human title for docs.
    pub const fn title(self) -> &'static str {
        match self {
            Area::Structure => "Graph structure",
            Area::Shape => "Shapes and sizes",
            Area::Scale => "Attention scale",
            Area::Mask => "Masks",
            Area::Padding => "Padding",
            Area::Bias => "Bias",
            Area::Dropout => "Dropout",
            Area::Sink => "Attention sink",
            Area::Layout => "Layouts",
            Area::Target => "Targets",
            Area::CpuReference => "CPU reference engine",
            Area::Sm120 => "SM120 engine",
            Area::Route => "SM120 backward routes",
            Area::Workspace => "Workspace",
        }
    }
}

macro_rules! reason_codes {
    ($( $(#[doc = $doc:literal])* $variant:ident = $code:literal, $area:ident; )*) => {
        /// Why something is rejected. Codes are stable: never reused, never renumbered.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum ReasonCode {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl ReasonCode {
            /// Every reason code, in code order.
            pub const ALL: &'static [ReasonCode] = &[$(ReasonCode::$variant),*];

            /// The stable string code, e.g. `BIA003`.
            pub const fn code(self) -> &'static str {
                match self { $(ReasonCode::$variant => $code,)* }
            }

            /// The area the code belongs to.
            pub const fn area(self) -> Area {
                match self { $(ReasonCode::$variant => Area::$area,)* }
            }

            /// The full doc comment: summary, `Why:` and `Fix:` paragraphs.
            pub const fn doc(self) -> &'static str {
                match self { $(ReasonCode::$variant => concat!($($doc, "\n"),*),)* }
            }
        }
    };
}

reason_codes! {
    // ---------------------------------------------------------------- structure (GraphError)
    /// A node or tensor refers to a tensor that does not exist in the graph.
    ///
    /// Why: every port and ragged-offset link must resolve to a tensor of the same graph.
    ///
    /// Fix: bind the port to a tensor that was added to this graph.
    DanglingReference = "STR001", Structure;
    /// A required port of the node is not bound.
    ///
    /// Why: SDPA backward needs Q, K, V, O, dO, Stats, dQ, dK and dV; forward needs Q, K, V, O.
    ///
    /// Fix: bind the missing port.
    MissingPort = "STR002", Structure;
    /// A port is bound that the node's op does not have.
    ///
    /// Why: a port the op does not know would be silently ignored.
    ///
    /// Fix: remove the port or use the op that has it.
    UnexpectedPort = "STR003", Structure;
    /// A tensor or node name is empty or used twice.
    ///
    /// Why: names address tensors in files, reports and variant packs.
    ///
    /// Fix: give every tensor and node a unique, non-empty name.
    BadName = "STR004", Structure;
    /// Two tensors share a uid.
    ///
    /// Why: uids key the variant pack at execution.
    ///
    /// Fix: make uids unique or leave them unset.
    DuplicateUid = "STR005", Structure;
    /// A tensor bound to an SDPA port is not rank 4.
    ///
    /// Why: attention tensors are (B, H, S, D); scalars and per-batch tensors are (…,1,1,1).
    ///
    /// Fix: reshape to rank 4.
    BadRank = "STR006", Structure;
    /// Dims and strides disagree in count, a dim is < 1, a stride is negative, or an output's
    /// strides make two of its elements share memory.
    ///
    /// Why: the layout must describe a real buffer, and an output element written twice in one
    /// place races on a GPU and loses a value on the CPU (inputs may overlap: a stride of 0
    /// broadcasts a read).
    ///
    /// Fix: give one stride per dim, dims >= 1 and strides >= 0; give outputs a plain layout
    /// (BHSD, BSHD or padded rows).
    BadLayout = "STR007", Structure;
    /// The last-dim stride of an attention tensor is not 1.
    ///
    /// Why: kernels load rows of the head dim as contiguous vectors.
    ///
    /// Fix: make the head dim contiguous (stride 1), e.g. with a copy.
    LastStrideNotOne = "STR008", Structure;
    /// A tensor's element count or byte span overflows 63 bits.
    ///
    /// Why: sizes and offsets must be representable.
    ///
    /// Fix: use smaller dims or strides.
    SizeOverflow = "STR009", Structure;
    /// A tensor's dims disagree with what its port requires (e.g. dQ unlike Q, Bias not
    /// broadcastable to (B, Hq, Sq, Skv)).
    ///
    /// Why: gradients have their twins' dims, and every tensor must match Q, K and V.
    ///
    /// Fix: give the tensor the dims the message names.
    ShapeMismatch = "STR010", Structure;
    /// A tensor has no data type and the context gives none to infer.
    ///
    /// Why: without a type the engine cannot size or read the buffer.
    ///
    /// Fix: set the tensor's data type or the context's io / intermediate type.
    DataTypeUnset = "STR011", Structure;
    /// A tensor's data type is not allowed on its port, or differs from Q's.
    ///
    /// Why: Q, K, V, O, dO, dQ, dK, dV, Bias and dBias are f16 or bf16 (all alike); Stats,
    /// Sink, dSink and Attn_scale are f32; sequence lengths are i32.
    ///
    /// Fix: convert the tensor to the type the message names.
    DataTypeNotAllowed = "STR012", Structure;
    /// A pass-by-value tensor is virtual, an output, has more than one element, carries a
    /// value of another type, or is bound to a port read from a buffer (anything but
    /// Attn_scale, Seed, Offset, Dropout_scale and Dropout_scale_inv).
    ///
    /// Why: by-value scalars come from the host and are read, never written; engines read the
    /// other ports (a (1, 1, 1, 1) Bias, a one-head Sink, a one-batch SEQ_LEN_Q) from a buffer,
    /// where a value would be silently ignored.
    ///
    /// Fix: pass only input scalars by value, with a value of the declared type; give a bias,
    /// sink or sequence length as a buffer.
    BadByValue = "STR013", Structure;
    /// A virtual tensor is read but no node produces it.
    ///
    /// Why: virtual tensors get no buffer; their content must come from a node.
    ///
    /// Fix: mark the tensor non-virtual or add the node that produces it.
    VirtualWithoutProducer = "STR014", Structure;
    /// A tensor is written by more than one output.
    ///
    /// Why: the result would depend on execution order.
    ///
    /// Fix: give every output its own tensor.
    MultipleWriters = "STR015", Structure;
    /// An output is bound to the same tensor as one of the node's inputs.
    ///
    /// Why: kernels read inputs while writing outputs; aliasing corrupts the result.
    ///
    /// Fix: write the output to a separate tensor.
    AliasedOutput = "STR016", Structure;
    /// The nodes depend on each other in a cycle.
    ///
    /// Why: a graph is executed in dependency order, which a cycle does not have.
    ///
    /// Fix: remove the edge that closes the cycle.
    Cycle = "STR017", Structure;
    /// A virtual tensor is written by a node but no node reads it.
    ///
    /// Why: a virtual tensor gets no buffer, so the values written to it are lost; the cuDNN
    /// frontend has no use for such an output either. Usually the tensor was marked virtual
    /// by mistake.
    ///
    /// Fix: make the tensor non-virtual to receive it, or, for an optional output (Stats,
    /// dBias, DSINK_TOKEN), remove the output.
    UnreadVirtualOutput = "STR018", Structure;
    /// A node sets an option its op does not have (`deterministic` on SDPA_FWD).
    ///
    /// Why: an option the op ignores would look as if it had an effect. The forward of every
    /// engine is deterministic by construction; determinism is a choice only for the
    /// backward's reductions.
    ///
    /// Fix: remove the option from the node, or set it on the SDPA_BWD node.
    UnexpectedOption = "STR019", Structure;
    /// The graph has no nodes.
    ///
    /// Why: there is nothing to check, rank or run; every command treats an empty graph as
    /// invalid instead of reporting success for doing nothing.
    ///
    /// Fix: add the SDPA nodes to the graph's `nodes`.
    EmptyGraph = "STR020", Structure;

    // ---------------------------------------------------------------- shapes
    /// Hq is not a multiple of Hk or of Hv (grouped-query attention).
    ///
    /// Why: each K/V head serves a whole group of Hq / Hk query heads.
    ///
    /// Fix: use head counts where Hk and Hv divide Hq.
    HeadsNotDivisible = "SHP001", Shape;
    /// Sq == Skv == 1.
    ///
    /// Why: a single score has a softmax of 1 and a zero gradient; the cuDNN frontend rejects
    /// this degenerate case and rime follows it.
    ///
    /// Fix: compute this case directly (dQ = dK = 0, dV = dO summed over the group).
    SingleTokenUnsupported = "SHP002", Shape;
    /// The context's intermediate data type is not set.
    ///
    /// Why: the scores and statistics live in the intermediate type; the cuDNN frontend
    /// requires it.
    ///
    /// Fix: set `intermediate_data_type` (usually f32) in the graph context.
    IntermediateTypeUnset = "SHP003", Shape;

    // ---------------------------------------------------------------- scale
    /// The attention scale is given both as the `attn_scale` option and as an Attn_scale tensor.
    ///
    /// Why: it is ambiguous which one applies.
    ///
    /// Fix: keep exactly one of them.
    ScaleSetTwice = "SCL001", Scale;
    /// The attention scale is not a finite number.
    ///
    /// Why: a NaN or infinite scale makes every score NaN or infinite.
    ///
    /// Fix: use a finite scale, usually 1/sqrt(Dqk).
    ScaleNotFinite = "SCL002", Scale;

    // ---------------------------------------------------------------- masks
    /// `left_bound` is set and smaller than 1.
    ///
    /// Why: the band keeps j > i + shift - left_bound; a left bound below 1 keeps no key at all.
    ///
    /// Fix: use left_bound >= 1, or leave it unset for no sliding window.
    LeftBoundTooSmall = "MSK001", Mask;
    /// `right_bound` is negative.
    ///
    /// Why: the band keeps j <= i + shift + right_bound; a negative bound masks the diagonal.
    ///
    /// Fix: use right_bound >= 0 (0 is causal).
    RightBoundNegative = "MSK002", Mask;
    /// Bottom-right alignment with Sq > Skv and no padding mask.
    ///
    /// Why: the shifted diagonal leaves the first Sq - Skv query rows without any key.
    ///
    /// Fix: slice Q to its last Skv rows, use top-left alignment, or use a padding mask.
    BottomRightSqGreaterThanSkv = "MSK003", Mask;
    /// Bottom-right alignment combined with a bias, ALiBi or dropout.
    ///
    /// Why: the cuDNN frontend does not define these combinations; rime follows it.
    ///
    /// Fix: use top-left alignment, or drop the bias / ALiBi / dropout.
    BottomRightCombination = "MSK004", Mask;
    /// ALiBi without `right_bound` = 0.
    ///
    /// Why: ALiBi's slopes penalise distance to the diagonal and are defined for causal
    /// attention only.
    ///
    /// Fix: set a causal mask (right_bound 0) with ALiBi.
    AlibiNeedsCausal = "MSK005", Mask;
    /// A sliding window (left_bound) with Sq > Skv and no padding mask.
    ///
    /// Why: the cuDNN frontend rejects this combination (rows beyond Skv see no keys).
    ///
    /// Fix: use Sq <= Skv, or a padding mask.
    LeftBoundSqGreaterThanSkv = "MSK006", Mask;

    // ---------------------------------------------------------------- padding
    /// The padding mask is on but SEQ_LEN_Q or SEQ_LEN_KV is not bound.
    ///
    /// Why: padding needs the per-batch sequence lengths.
    ///
    /// Fix: bind both (B,1,1,1) i32 sequence-length tensors.
    PaddingWithoutSeqLen = "PAD001", Padding;
    /// SEQ_LEN_Q or SEQ_LEN_KV is bound but the padding mask is off.
    ///
    /// Why: the lengths would be silently ignored.
    ///
    /// Fix: set `padding_mask` or unbind the sequence-length tensors.
    SeqLenWithoutPadding = "PAD002", Padding;

    // ---------------------------------------------------------------- bias
    /// dBias is requested but no Bias is bound.
    ///
    /// Why: dBias has the shape of the Bias it differentiates.
    ///
    /// Fix: bind a Bias or remove the dBias output.
    DbiasWithoutBias = "BIA001", Bias;
    /// The Bias broadcasts along Sq or Skv (dim 2 or 3 is 1 while the scores' is larger).
    ///
    /// Why: the engine streams bias rows tile by tile; broadcast rows would need another load
    /// path. Batch and head broadcast are supported.
    ///
    /// Fix: expand the bias to (1|B, 1|Hq, Sq, Skv).
    BiasSeqBroadcast = "BIA002", Bias;
    /// Deterministic backward with a broadcast Bias (batch or head dim 1 while B or Hq > 1) and
    /// dBias requested, on a route that sums dBias with atomics (atomic, relay).
    ///
    /// Why: on these routes broadcast dBias is summed over batches / heads with fp32 atomics
    /// whose order is not fixed, so it can not be bitwise reproducible. A per-batch, per-head
    /// bias is fine: each dBias element is written exactly once.
    ///
    /// Fix: nothing to fix when two_kernel or ordered_dbias is supported (heuristics pick
    /// them): they sum dBias in a fixed order, from the dS workspace or from per-(batch, head)
    /// partials. Otherwise expand the bias to (B, Hq, Sq, Skv) and sum dBias yourself, or turn
    /// determinism off.
    DeterministicBroadcastDbias = "BIA003", Bias;

    // ---------------------------------------------------------------- dropout
    /// Dropout probability outside [0, 1), e.g. 1.0.
    ///
    /// Why: probability 1 drops everything and its scale 1/(1-p) is infinite.
    ///
    /// Fix: use a probability in [0, 1).
    DropoutProbabilityInvalid = "DRP001", Dropout;
    /// Both a dropout probability and a Dropout_mask are given.
    ///
    /// Why: it is ambiguous which one applies.
    ///
    /// Fix: keep exactly one.
    DropoutTwice = "DRP002", Dropout;
    /// Dropout is configured without its companion ports (Seed and Offset for a probability,
    /// Dropout_scale — and Dropout_scale_inv in backward — for a mask).
    ///
    /// Why: the random stream or the scaling would be undefined.
    ///
    /// Fix: bind the ports the message names.
    DropoutPortsMissing = "DRP003", Dropout;
    /// RNG_DUMP is requested without a dropout probability.
    ///
    /// Why: there is no Philox stream to dump.
    ///
    /// Fix: set a dropout probability or remove RNG_DUMP.
    RngDumpWithoutDropout = "DRP004", Dropout;

    // ---------------------------------------------------------------- sink
    /// DSINK_TOKEN is requested but no SINK_TOKEN is bound.
    ///
    /// Why: dSink is the gradient of the sink logits.
    ///
    /// Fix: bind a (1, Hq, 1, 1) f32 sink or remove the dSink output.
    DsinkWithoutSink = "SNK001", Sink;

    // ---------------------------------------------------------------- layout
    /// `max_total_seq_len_q/kv` is set but no tensor has a ragged offset.
    ///
    /// Why: the token totals only size packed (THD) layouts.
    ///
    /// Fix: remove the option or give Q/K/V/O ragged offsets.
    MaxTotalWithoutRagged = "LAY001", Layout;
    /// `max_total_seq_len_q` or `max_total_seq_len_kv` is negative.
    ///
    /// Why: the option is the number of tokens a packed (THD) layout holds, and bounds its
    /// last offset; a negative count bounds nothing.
    ///
    /// Fix: give the total number of packed tokens (at least the sum of the sequence
    /// lengths), or remove the option.
    MaxTotalNegative = "LAY002", Layout;
    /// A tensor bound to a port other than Q, K, V, O, dO, Stats, dQ, dK or dV has a ragged
    /// offset.
    ///
    /// Why: only those tensors are laid out token by token (per sequence, then per position);
    /// a Bias, dBias, dropout mask, sink or sequence-length tensor is indexed by batch, head
    /// and position as a dense tensor, as in the cuDNN frontend, so an offset on it would be
    /// ignored and its data read in the wrong place.
    ///
    /// Fix: remove the ragged offset from that tensor and give it its dense (B, H, Sq, Skv)
    /// (or broadcast) layout.
    RaggedOffsetOnDensePort = "LAY003", Layout;
    /// A ragged tensor's tokens are not its outermost dim: its token (dim 2) stride is smaller
    /// than the span of one token's heads and head dims, so one sequence's tokens interleave
    /// with each other (for example BHSD strides within a sequence).
    ///
    /// Why: a ragged offset packs whole tokens one after another (THD): sequence b starts at
    /// its offset and its tokens follow at the token stride, so the offsets are prefix sums of
    /// the sequence lengths times the token stride, and `max_total_seq_len_q/kv` tokens hold
    /// `total x token stride` elements (the cuDNN frontend sizes its packed scratch that way).
    /// With heads outside the tokens, a sequence's span depends on the padded length instead.
    ///
    /// Fix: give the tensor THD strides: token stride H x D (H for Stats), head stride D (1
    /// for Stats), dim stride 1; the batch stride is unused.
    RaggedNotTokenMajor = "LAY004", Layout;

    // ---------------------------------------------------------------- target
    /// The engine needs a GPU and the target has none.
    ///
    /// Why: the SM120 engine runs CUDA kernels.
    ///
    /// Fix: pick a GPU target, or use the cpu_reference engine.
    TargetNoGpu = "TGT001", Target;
    /// The target's compute capability is below what the engine's instructions need.
    ///
    /// Why: the SM120 kernels use mma.sync m16n8k16 (bf16), ldmatrix and cp.async: sm_80+.
    ///
    /// Fix: use an sm_80 or newer GPU.
    TargetArchTooOld = "TGT002", Target;

    // ---------------------------------------------------------------- cpu reference
    /// The CPU reference engine reads a Dropout_mask, or writes an RNG_DUMP, of a non-floating
    /// type.
    ///
    /// Why: its dropout multiplies the probabilities by the mask's values, which it reads as
    /// floating-point numbers, and it writes the RNG_DUMP keep mask as 0.0 / 1.0 into a
    /// floating-point tensor; an integer or bool tensor is neither. Philox dropout (a
    /// probability with Seed and Offset) and a floating-point Dropout_mask (with
    /// Dropout_scale, and Dropout_scale_inv in a backward) are supported.
    ///
    /// Fix: give the Dropout_mask, or the RNG_DUMP, a floating-point type (f16, bf16, f32 or
    /// f64).
    CpuDropout = "CPU001", CpuReference;
    /// Retired, never reported: the CPU reference engine did not implement ragged (THD)
    /// layouts.
    ///
    /// Why: the engine now runs ragged Q, K, V, O, dO, Stats, dQ, dK and dV (docs/cpu-engine.md);
    /// what stays unsupported is rejected for every engine (`LAY002` to `LAY004`) or by the
    /// offsets at execution. The code is kept so that it is never reused.
    ///
    /// Fix: nothing to fix; an older report that names it describes an older rime.
    CpuRagged = "CPU002", CpuReference;

    // ---------------------------------------------------------------- sm120
    /// A head dim is not a multiple of 8.
    ///
    /// Why: rows are loaded as 16-byte vectors (8 halves) with cp.async and ldmatrix.
    ///
    /// Fix: pad the head dim to a multiple of 8.
    Sm120HeadDimAlignment = "SMX001", Sm120;
    /// The head dims fit no compiled tile configuration (envelope).
    ///
    /// Why: the kernels are compiled for (Dqk, Dv) envelopes (32,32), (64,64), (128,128),
    /// (192,128), (192,192) and (256,256); smaller multiples of 8 are padded up to the smallest
    /// that holds them, larger ones do not fit 101,376 B of shared memory.
    ///
    /// Fix: use head dims of at most 256 each.
    Sm120HeadDimEnvelope = "SMX002", Sm120;
    /// The SM120 engine does not implement dropout.
    ///
    /// Why: its kernels have no Philox generator.
    ///
    /// Fix: remove dropout, or use another engine.
    Sm120Dropout = "SMX003", Sm120;
    /// Retired, never reported: the SM120 engine did not implement ragged (THD) layouts.
    ///
    /// Why: its kernels now place each sequence at its checked offset and touch its real tokens
    /// only (docs/sm120-engine.md); what stays unsupported is rejected for every engine
    /// (`LAY002` to `LAY004`) or by the offsets at execution. The code is kept so that it is
    /// never reused.
    ///
    /// Fix: nothing to fix; an older report that names it describes an older rime.
    Sm120Ragged = "SMX004", Sm120;
    /// A row stride of an attention tensor is not a multiple of 8 elements.
    ///
    /// Why: cp.async and vector stores move 16-byte chunks, which must be aligned.
    ///
    /// Fix: pad rows (and head / batch strides) to multiples of 8 elements.
    Sm120StrideAlignment = "SMX005", Sm120;
    /// A kernel configuration needs more shared memory per block than the target allows.
    ///
    /// Why: SM120 allows 101,376 B per block (opt-in); a larger block does not launch.
    ///
    /// Fix: pick a target with more shared memory or smaller tiles.
    Sm120SharedMemory = "SMX006", Sm120;
    /// Retired, never reported: a deterministic backward with dSink was refused.
    ///
    /// Why: dSink was to be summed over batches and rows with fp32 atomics; the preprocess
    /// kernel now writes each row's term and `dsink_reduce.cu` sums them per head in a fixed
    /// order, bitwise reproducible on every route. The code is kept so that it is never reused.
    ///
    /// Fix: nothing to fix; an older report that names it describes an older rime.
    Sm120DeterministicDsink = "SMX007", Sm120;
    /// The context's compute data type is not f32.
    ///
    /// Why: the kernels accumulate with mma.sync f32 accumulators only.
    ///
    /// Fix: set `compute_data_type` to f32 (or leave it unset).
    Sm120ComputeType = "SMX008", Sm120;

    /// K and V have different head counts (Hk != Hv).
    ///
    /// Why: an SM120 block owns one KV head — its K and V rows together — and accumulates dK
    /// and dV over the query heads of that head's group; K and V grouped differently would need
    /// two reductions.
    ///
    /// Fix: repeat K or V heads so that Hk == Hv, or use the cpu_reference engine.
    Sm120KvHeadsDiffer = "SMX009", Sm120;

    /// Retired, never reported: the SM120 engine refused a sink (SINK_TOKEN) passed by value.
    ///
    /// Why: a by-value tensor on a port read from a buffer is now a graph error for every
    /// engine (`STR013`): the CPU engine had approved such a graph and ignored the sink. (Until
    /// sinks were implemented this code refused every graph with a sink or dSink.) The code is
    /// kept so that it is never reused.
    ///
    /// Fix: nothing to fix; an older report that names it describes an older rime.
    Sm120Sink = "SMX010", Sm120;

    /// The score scale is an Attn_scale tensor whose value is only known at execution.
    ///
    /// Why: the SM120 kernels take the scale as a launch argument fixed when the plan is
    /// built; a device-resident scale tensor is not read.
    ///
    /// Fix: give the scale by value (`attn_scale`), or make the Attn_scale tensor
    /// pass-by-value (`"value": {"f32": ...}`).
    Sm120ScaleTensor = "SMX011", Sm120;
    /// The batch or the number of query heads exceeds what a CUDA grid dimension holds.
    ///
    /// Why: the SM120 kernels launch one block per (tile, head, batch), with heads on the grid's
    /// y dimension and the batch on its z dimension, each limited to 65,535 blocks.
    ///
    /// Fix: split the batch (or the heads) into calls of at most 65,535.
    Sm120GridLimit = "SMX012", Sm120;
    /// Sq or Skv exceeds 2^30 (1,073,741,824) tokens.
    ///
    /// Why: the SM120 kernels index rows and evaluate the mask band with 32-bit integers,
    /// exact only while sequence positions and their differences stay below 2^31.
    ///
    /// Fix: split the sequence (context parallelism), or use the cpu_reference engine.
    Sm120SequenceLimit = "SMX013", Sm120;
    /// Ragged (THD) tensors with a broadcast bias's dBias on the atomic, relay or
    /// ordered_dbias route, at head dims past (128, 128).
    ///
    /// Why: those routes sum such a dBias from the backward main kernel (into an f32
    /// accumulator, or into per-(batch, head) partials), and the ragged builds of the d192/128
    /// and d256 kernels that do it need more than the 255 registers a thread has (ptxas
    /// spills 4 bytes; every sm_120 kernel is held to zero spills). The (192, 192) envelope is
    /// held to the same rule; its ragged builds with such a sum were not tried.
    ///
    /// Fix: a per-batch bias (B, Hq, Sq, Skv) (its dBias needs no sum), head dims of at most
    /// 128, padded (non-ragged) tensors with a padding mask, or the cpu_reference engine.
    Sm120RaggedBroadcastDbias = "SMX014", Sm120;

    // ---------------------------------------------------------------- routes
    /// The atomic route is not deterministic and the graph asks for determinism.
    ///
    /// Why: fp32 red.global.add of dQ partials lands in a run-dependent order.
    ///
    /// Fix: nothing to fix: the relay or two_kernel route serves deterministic graphs.
    AtomicNotDeterministic = "RTE001", Route;
    /// Retired, never reported: the two_kernel route needed head dims equal to its envelope.
    ///
    /// Why: its dQ GEMM zero-fills K's columns past Dqk and stores only dQ's first Dqk columns
    /// (since the padded head dims of 2026-11-29), and dS does not depend on the head dims, so a
    /// padded graph runs on it as on atomic and relay; the rule outlived that change. The code
    /// is kept so that it is never reused.
    ///
    /// Fix: nothing to fix; an older report that names it describes an older rime.
    TwoKernelPaddedHeadDim = "RTE002", Route;
    /// Retired, never reported: the two_kernel route needed compact K and dQ layouts.
    ///
    /// Why: its dQ GEMM reads K and writes dQ through their strides (and a ragged tensor's
    /// offsets) like every other kernel, so any layout the engine takes serves it; the rule
    /// outlived the first dQ GEMM. The code is kept so that it is never reused.
    ///
    /// Fix: nothing to fix; an older report that names it describes an older rime.
    TwoKernelLayout = "RTE003", Route;
    /// The dQ GEMM's Q tile is not a multiple of (or is smaller than) the main kernel's Q tile.
    ///
    /// Why: both kernels must agree on which rows of dS a block owns.
    ///
    /// Fix: use a kernel pair whose Q tiles match (a kernel-table issue, not a graph issue).
    TwoKernelTileMismatch = "RTE004", Route;
    /// The dQ GEMM needs more shared memory than the target allows per block.
    ///
    /// Why: a block over the cap does not launch.
    ///
    /// Fix: use the relay route.
    TwoKernelSharedMemory = "RTE005", Route;
    /// The two_kernel workspace (dS with Skv rounded up to 128) exceeds the documented fraction
    /// of the target's free memory.
    ///
    /// Why: dS is B * Hq * Sq * round_up(Skv, 128) io elements; on a small or busy device that
    /// would crowd out activations. The relay route needs far less.
    ///
    /// Fix: nothing to fix: relay is selected instead. Free memory, or a larger device, lifts it.
    TwoKernelWorkspace = "RTE006", Route;
    /// The ordered_dbias route's f32 dBias partials exceed the documented fraction of the
    /// target's free memory.
    ///
    /// Why: the partials hold one f32 dBias slice per (batch, head) the bias broadcasts over,
    /// B * Hq * Sq * Skv elements in all, so that each element has one writer and the sum runs in
    /// a fixed order; on a small or busy device that would crowd out activations.
    ///
    /// Fix: free memory or use a larger device; split the batch into calls and add their dBias;
    /// or, when bitwise reproducibility is not needed, turn determinism off (atomic and relay
    /// sum it with fp32 atomics).
    OrderedDbiasWorkspace = "RTE007", Route;

    // ---------------------------------------------------------------- workspace
    /// The workspace size overflows 64 bits.
    ///
    /// Why: sizes must be exact and representable.
    ///
    /// Fix: use smaller shapes.
    WorkspaceOverflow = "WSP001", Workspace;
    /// The workspace exceeds the target's free memory.
    ///
    /// Why: the engine could not allocate it.
    ///
    /// Fix: free device memory, use smaller shapes or a larger device.
    WorkspaceExceedsFreeMemory = "WSP002", Workspace;
}

impl ReasonCode {
    /// Codes no rule reports any more; kept, documented as retired, never reused.
    pub const RETIRED: &'static [ReasonCode] = &[
        ReasonCode::CpuRagged,
        ReasonCode::Sm120DeterministicDsink,
        ReasonCode::Sm120Ragged,
        ReasonCode::Sm120Sink,
        ReasonCode::TwoKernelPaddedHeadDim,
        ReasonCode::TwoKernelLayout,
    ];

    /// True when no rule reports the code any more (see [`ReasonCode::RETIRED`]).
    pub fn is_retired(self) -> bool {
        ReasonCode::RETIRED.contains(&self)
    }

    /// Parses a string code (case-insensitive), e.g. `bia003`.
    pub fn from_code(code: &str) -> Option<ReasonCode> {
        ReasonCode::ALL
            .iter()
            .copied()
            .find(|c| c.code().eq_ignore_ascii_case(code.trim()))
    }

    /// The one-line summary (first paragraph of the doc).
    pub fn summary(self) -> String {
        paragraphs(self.doc()).next().unwrap_or_default()
    }

    /// The `Why:` paragraph without its label.
    pub fn why(self) -> String {
        labelled(self.doc(), "Why:")
    }

    /// The `Fix:` paragraph without its label: the default hint of a rejection.
    pub fn fix(self) -> String {
        labelled(self.doc(), "Fix:")
    }
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// Paragraphs of a doc comment, each joined onto one line.
fn paragraphs(doc: &str) -> impl Iterator<Item = String> + '_ {
    doc.split("\n \n")
        .flat_map(|p| p.split("\n\n"))
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
}

fn labelled(doc: &str, label: &str) -> String {
    paragraphs(doc)
        .find_map(|p| p.strip_prefix(label).map(|rest| rest.trim().to_owned()))
        .unwrap_or_default()
}

/// docs/reasons.md, generated from the reason codes' doc comments.
pub fn reasons_markdown() -> String {
    let mut out = String::from(
        "# Reason codes\n\n<!-- Generated from crates/analyzer/src/reason.rs by \
         `RIME_UPDATE_DOCS=1 cargo test -p rime-analyzer reasons_doc`; do not edit. -->\n\n\
         Every rejection the analyzer reports carries one of these stable codes. \
         `rime explain CODE` prints one entry.\n",
    );
    for area in Area::ALL {
        out.push_str(&format!("\n## {} ({})\n", area.title(), area.prefix()));
        for code in ReasonCode::ALL.iter().filter(|c| c.area() == area) {
            out.push_str(&format!(
                "\n### {}{}\n\n{}\n\n- **Why:** {}\n- **Fix:** {}\n",
                code.code(),
                if code.is_retired() { " (retired)" } else { "" },
                code.summary(),
                code.why(),
                code.fix()
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_well_formed_and_documented() {
        let mut seen = std::collections::BTreeSet::new();
        for &c in ReasonCode::ALL {
            assert!(seen.insert(c.code()), "duplicate code {}", c.code());
            assert!(c.code().starts_with(c.area().prefix()), "{c}: wrong prefix");
            assert_eq!(c.code().len(), 6, "{c}");
            assert!(!c.summary().is_empty(), "{c}: no summary");
            assert!(!c.why().is_empty(), "{c}: no Why");
            assert!(!c.fix().is_empty(), "{c}: no Fix");
            assert_eq!(ReasonCode::from_code(&c.code().to_lowercase()), Some(c));
            assert_eq!(c.is_retired(), c.summary().starts_with("Retired"), "{c}");
        }
    }

    #[test]
    fn reasons_doc_is_fresh() {
        crate::generated::assert_fresh("docs/reasons.md", &reasons_markdown());
    }
}
