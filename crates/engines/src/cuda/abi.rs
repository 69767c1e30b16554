//! The kernel ABI, written once: the parameter blocks the kernels take by value
//! ([`AttnParams`], [`ConvertParams`], [`TensorRef`]) and the launch constants host and kernels
//! share. [`header`] renders the CUDA side from these definitions — each struct field by field
//! with a `static_assert` on its size, and the constants as defines — and every kernel source is
//! compiled with it, so the two sides are one list. [`offset_check_kernel`] checks every field's
//! offset on the CUDA side against Rust's (NVRTC has no `offsetof`; the fitness test compiles
//! it), so a type mapped wrongly fails CI rather than reading the wrong bytes.

use cudarc::driver::DeviceRepr;

use rime_analyzer::sm120::kernels::DQ_GEMM_ROWS;
use rime_analyzer::sm120::DS_PITCH_COLUMNS;

/// Query rows per preprocess block (one block per PRE_ROWS rows, query head and batch).
pub(crate) const PRE_ROWS: u32 = 16;
/// Warps per preprocess block.
pub(crate) const PRE_WARPS: u32 = 4;
/// Threads per convert block; the convert kernel walks its plane in grid-stride steps.
pub(crate) const CONVERT_THREADS: u32 = 256;
/// Elements a convert thread takes per step where rows allow 16-byte stores (convert.cu); the
/// grid is sized for it.
pub(crate) const CONVERT_VEC: u32 = 8;
/// Most convert blocks along x: the kernel strides over what one launch's blocks do not cover.
pub(crate) const CONVERT_MAX_BLOCKS_X: u32 = 65_535;

/// The C type of a field, for [`header`].
trait CType {
    const C: &'static str;
}

impl CType for u64 {
    const C: &'static str = "u64";
}
impl CType for i64 {
    const C: &'static str = "i64";
}
impl CType for i32 {
    const C: &'static str = "int";
}
impl CType for f32 {
    const C: &'static str = "float";
}
impl CType for TensorRef {
    const C: &'static str = "TensorRef";
}
impl CType for TensorMap {
    const C: &'static str = "TensorMap";
}

/// One TMA tensor map (the driver's `CUtensorMap`): 128 opaque bytes, 128-byte aligned as CUDA
/// 13 declares it, encoded on the host by `cuTensorMapEncodeTiled` (tma.rs) and read by the
/// tensor copies of a kernel that takes it as a `__grid_constant__` parameter.
#[repr(C, align(128))]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct TensorMap {
    pub opaque: [u64; 16],
}

/// The CUDA declaration of [`TensorMap`].
const TENSOR_MAP_C: &str = "struct __align__(128) TensorMap {\n    u64 opaque[16];\n};\n\
                            static_assert(sizeof(TensorMap) == 128, \"TensorMap: 128 bytes\");\n";

/// Defines a `repr(C)` parameter struct and its CUDA declaration with offset checks.
macro_rules! abi_struct {
    ($(#[doc = $sdoc:literal])* $name:ident { $($(#[doc = $fdoc:literal])* $field:ident : $ty:ident,)* }) => {
        $(#[doc = $sdoc])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy, Default, PartialEq)]
        pub(crate) struct $name {
            $($(#[doc = $fdoc])* pub $field: $ty,)*
        }

        impl $name {
            /// The CUDA declaration, and a `static_assert` on the size.
            fn c_declaration() -> String {
                let mut c = format!("struct {} {{\n", stringify!($name));
                $(c.push_str(&format!("    {} {};\n", <$ty as CType>::C, stringify!($field)));)*
                c.push_str("};\n");
                c.push_str(&format!(
                    "static_assert(sizeof({n}) == {s}, \"{n}: size differs from abi.rs\");\n",
                    n = stringify!($name),
                    s = std::mem::size_of::<$name>(),
                ));
                c
            }

            /// Device code that reaches a `trap` for each field whose CUDA offset is not Rust's
            /// (plus `skew`); the offsets are constants, so with every field in place NVVM
            /// folds every test away and the PTX holds no `trap`. (NVRTC has no `offsetof`.)
            #[cfg(test)]
            fn c_offset_checks(skew: usize) -> String {
                let mut c = format!(
                    "    {{\n        {n} v;\n        const char* base = (const char*)&v;\n",
                    n = stringify!($name)
                );
                $(c.push_str(&format!(
                    "        if ((const char*)&v.{f} - base != {o}) asm volatile(\"trap;\");\n",
                    f = stringify!($field),
                    o = std::mem::offset_of!($name, $field) + skew,
                ));)*
                c.push_str("    }\n");
                c
            }
        }
    };
}

abi_struct! {
    /// One tensor argument: device address and element strides of the batch, head and sequence
    /// dims (the last dim is contiguous); broadcast dims carry stride 0. A ragged (THD) tensor
    /// places batch b at element `ragged[b]` instead of `b x sb` and holds only its sequence's
    /// real tokens.
    TensorRef {
        /// Device address (0 when the tensor is absent).
        ptr: u64,
        /// Batch stride (elements; unused when ragged).
        sb: i64,
        /// Head stride (elements).
        sh: i64,
        /// Sequence stride (elements).
        ss: i64,
        /// Workspace address of the B + 1 validated i64 element offsets of a ragged tensor
        /// (the `ragged_offsets` region); 0 for a padded tensor.
        ragged: u64,
    }
}

abi_struct! {
    /// Parameters of the forward, preprocess, main backward and dQ GEMM kernels.
    AttnParams {
        /// Q.
        q: TensorRef,
        /// K.
        k: TensorRef,
        /// V.
        v: TensorRef,
        /// O (forward output, backward input).
        o: TensorRef,
        /// dO.
        d_o: TensorRef,
        /// Stats (f32 log-sum-exp).
        stats: TensorRef,
        /// Additive bias (broadcast dims with stride 0).
        bias: TensorRef,
        /// dQ.
        dq: TensorRef,
        /// dK.
        dk: TensorRef,
        /// dV.
        dv: TensorRef,
        /// dBias.
        dbias: TensorRef,
        /// i32 (B,1,1,1) sequence lengths of the padding mask (ptr 0: no padding mask).
        seq_q: TensorRef,
        /// i32 KV sequence lengths of the padding mask.
        seq_kv: TensorRef,
        /// f32 (1, Hq, 1, 1) sink logits, indexed by the head stride (ptr 0: no sink).
        sink: TensorRef,
        /// f32 (1, Hq, 1, 1) dSink, indexed by the head stride.
        dsink: TensorRef,
        /// Workspace: f32 delta `[B][Hq][Sq]`.
        delta: u64,
        /// Workspace: f32 dQ accumulator `[B][Hq][Sq][Dqk]` (atomic, relay).
        dq_accum: u64,
        /// Workspace: f32 dBias accumulator `[bias_b][bias_h][Sq][Skv]` (broadcast dBias).
        dbias_accum: u64,
        /// Workspace: f32 dBias partials `[parts][bias_b][bias_h][Sq][Skv]`, one part per
        /// (batch, head) the bias broadcasts over (0 unless ordered_dbias).
        dbias_parts: u64,
        /// Workspace: the relay region: u32 turn counters `[B][Hq][ceil(Sq / BLOCK_Q)]`, then
        /// u32 block tickets `[B][Hk]` (0 unless relay).
        relay: u64,
        /// Workspace: io dS `[B][Hq][Sq][round_up(Skv, RIME_DS_PITCH)]` (0 unless two_kernel).
        ds: u64,
        /// Workspace: f32 dSink terms `[B][Hq][Sq]`, one per query row (0 unless dSink).
        dsink_rows: u64,
        /// B.
        batch: i32,
        /// Query heads.
        hq: i32,
        /// K heads.
        hk: i32,
        /// V heads.
        hv: i32,
        /// Query length.
        sq: i32,
        /// KV length.
        skv: i32,
        /// 1: the diagonal is aligned bottom-right (shift kv_len - q_len per batch).
        bottom_right: i32,
        /// 1 when the band has a right bound.
        has_right: i32,
        /// Right bound of the band (normalised below Sq + Skv <= 2^31: an int), when `has_right`.
        right_bound: i32,
        /// 1 when the band has a left bound.
        has_left: i32,
        /// Left bound of the band (normalised likewise), when `has_left`.
        left_bound: i32,
        /// Bias batch dim (1 or B).
        bias_b: i32,
        /// Bias head dim (1 or Hq).
        bias_h: i32,
        /// Attention scale.
        scale: f32,
        /// Actual Q/K head dim (at most the compiled envelope; a multiple of 8).
        hd_qk: i32,
        /// Actual V head dim.
        hd_v: i32,
        /// 0 without ALiBi; else 2^floor(log2 Hq).
        alibi_n: i32,
        /// 2^(-8 / alibi_n).
        alibi_base: f32,
        /// 2^(-4 / alibi_n).
        alibi_half: f32,
        /// Keeps the size a multiple of 8 bytes on both sides.
        pad_: i32,
    }
}

abi_struct! {
    /// The tensor maps of a main backward kernel built with tensor copies (`TMA_TILES`, tma.rs):
    /// its second parameter.
    TmaMaps {
        /// Q, boxes of 16 head-dim columns x the Q tile's rows (32-byte swizzle).
        q: TensorMap,
        /// dO, likewise.
        d_o: TensorMap,
    }
}

abi_struct! {
    /// Parameters of the convert kernel: `dst = scale * src`, f32 to the io dtype.
    ConvertParams {
        /// Compact f32 accumulator `[d0][d1][d2][d3]`; with `parts` > 1, the first of `parts`
        /// such arrays, `part_stride` elements apart, summed in order.
        src: u64,
        /// Destination tensor (io dtype).
        dst: u64,
        /// Destination stride of dim 0 (elements).
        s0: i64,
        /// Destination stride of dim 1.
        s1: i64,
        /// Destination stride of dim 2.
        s2: i64,
        /// Extent of dim 2 times dim 3: the elements of one (d0, d1) plane.
        plane: i64,
        /// Extent of dim 1.
        d1: i32,
        /// Extent of dim 3 (contiguous).
        d3: i32,
        /// Elements from one part of `src` to the next.
        part_stride: i64,
        /// Factor applied before conversion.
        scale: f32,
        /// How many parts are summed (1: a plain conversion).
        parts: i32,
        /// 1: each `src` plane is in the dQ accumulator's tiled layout (attn.cuh's
        /// `dq_acc_off`: groups of 16 rows, blocks in mma-fragment order; rows = `plane / d3`);
        /// 0: row-major.
        tiled: i32,
        /// Workspace address of the destination's B + 1 i64 element offsets when it is ragged
        /// (dim 0 is the batch), else 0.
        ragged: u64,
        /// The i32 lengths of dim 2 per dim-0 index (a ragged destination's sequence lengths,
        /// the padding mask's; clamped to dim 2); ptr 0: every row. Rows past a ragged
        /// destination's length do not exist and are not written.
        rows: TensorRef,
    }
}

// SAFETY: all three are `repr(C)` structs of integers and floats whose layout the generated
// `static_assert`s pin on the CUDA side (every field offset and the size); they are passed to
// kernels by value.
unsafe impl DeviceRepr for AttnParams {}
// SAFETY: as above.
unsafe impl DeviceRepr for ConvertParams {}
// SAFETY: as above.
unsafe impl DeviceRepr for TensorRef {}
// SAFETY: a `repr(C)` struct of two 128-byte opaque words, 128-byte aligned on both sides (the
// generated declaration and `static_assert`s).
unsafe impl DeviceRepr for TmaMaps {}

/// The CUDA text of the ABI: launch constants, then the structs with their offset checks.
/// Compiled into every kernel between common.cuh and attn.cuh.
pub(crate) fn header() -> String {
    let mut h = String::from("// Generated from crates/engines/src/cuda/abi.rs; do not edit.\n");
    for (name, value) in [
        ("RIME_PRE_ROWS", u64::from(PRE_ROWS)),
        ("RIME_PRE_WARPS", u64::from(PRE_WARPS)),
        ("RIME_CONVERT_THREADS", u64::from(CONVERT_THREADS)),
        ("RIME_CONVERT_VEC", u64::from(CONVERT_VEC)),
        ("RIME_DS_PITCH", DS_PITCH_COLUMNS),
        ("RIME_DQ_ROWS", u64::from(DQ_GEMM_ROWS)),
    ] {
        h.push_str(&format!("#define {name} {value}\n"));
    }
    h.push_str(&TensorRef::c_declaration());
    h.push_str(&AttnParams::c_declaration());
    h.push_str(&ConvertParams::c_declaration());
    h.push_str(TENSOR_MAP_C);
    h.push_str(&TmaMaps::c_declaration());
    h
}

/// A kernel whose PTX holds a `trap` exactly when some field's CUDA offset differs from Rust's
/// plus `skew` (the fitness test compiles it with skew 0, which must leave none, and 1, which
/// must leave some: the check itself is checked).
#[cfg(test)]
pub(crate) fn offset_check_kernel(skew: usize) -> String {
    let mut k = String::from("extern \"C\" __global__ void rime_abi_offsets() {\n");
    k.push_str(&TensorRef::c_offset_checks(skew));
    k.push_str(&AttnParams::c_offset_checks(skew));
    k.push_str(&ConvertParams::c_offset_checks(skew));
    k.push_str(&TmaMaps::c_offset_checks(skew));
    k.push_str("}\n");
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_checks_cover_every_field_with_rusts_offsets() {
        let k = offset_check_kernel(0);
        for (field, offset) in [
            ("q", std::mem::offset_of!(AttnParams, q)),
            ("seq_kv", std::mem::offset_of!(AttnParams, seq_kv)),
            ("right_bound", std::mem::offset_of!(AttnParams, right_bound)),
            ("batch", std::mem::offset_of!(AttnParams, batch)),
            ("alibi_half", std::mem::offset_of!(AttnParams, alibi_half)),
        ] {
            let check = format!("&v.{field} - base != {offset})");
            assert!(k.contains(&check), "missing: {check}");
        }
        // One test per field: 5 in TensorRef, 42 in AttnParams, 14 in ConvertParams, 2 in
        // TmaMaps.
        assert_eq!(
            k.matches("asm volatile(\"trap;\")").count(),
            5 + 42 + 14 + 2
        );
        assert!(offset_check_kernel(1).contains(&format!(
            "&v.batch - base != {})",
            std::mem::offset_of!(AttnParams, batch) + 1
        )));
        let h = header();
        assert!(h.contains("    int has_right;\n    int right_bound;\n    int has_left;"));
        assert!(h.contains(&format!("#define RIME_DS_PITCH {DS_PITCH_COLUMNS}\n")));
        assert!(h.contains(&format!("#define RIME_DQ_ROWS {DQ_GEMM_ROWS}\n")));
        // 8-byte multiples, so the CUDA structs need no tail padding of their own.
        assert_eq!(std::mem::size_of::<AttnParams>() % 8, 0);
        assert_eq!(std::mem::size_of::<ConvertParams>() % 8, 0);
        // The driver's tensor map: 128 bytes, 128-byte aligned.
        assert_eq!(std::mem::size_of::<TensorMap>(), 128);
        assert_eq!(std::mem::align_of::<TensorMap>(), 128);
        assert_eq!(
            std::mem::size_of::<TensorMap>(),
            std::mem::size_of::<cudarc::driver::sys::CUtensorMap>()
        );
        assert!(h.contains("struct __align__(128) TensorMap {"));
    }
}
