//! The frontend's graph JSON, key for key, for both versions it has written: `json_version`
//! "1.0" (frontend up to 1.26: `tensors` an object keyed by uid or name, `uid_assigned`) and
//! "2.0" (from 1.27: `tensors` a list, every tensor with a uid, names optional, `gid`).
//!
//! Unknown keys are errors: a key rime does not know might change the math. Keys rime knows
//! and does not model are read here and judged by the reader (`read.rs`): some are ignored
//! because they do not change what is computed, the others are refused when set.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::dtype::CudnnType;
use super::hex::HexF32;
use super::ports::Ports;
use crate::json::{AlignmentName, NamedMap};
use crate::Scalar;

/// A whole dump (`Graph::serialize`, `repr()` of a Python graph).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Document {
    /// Graph-wide data types and name.
    #[serde(default)]
    pub(super) context: Option<Context>,
    /// The cuDNN library the dump was taken with, e.g. "9.19.0" (ignored).
    #[serde(default)]
    #[allow(dead_code)] // read so that the key is known; not modelled
    pub(super) cudnn_backend_version: Option<String>,
    /// The frontend's version as an integer, e.g. 13200 (ignored).
    #[serde(default)]
    #[allow(dead_code)] // read so that the key is known; not modelled
    pub(super) cudnn_frontend_version: Option<i64>,
    /// Process-local graph id (2.0), to match dumps with executions (ignored).
    #[serde(default)]
    #[allow(dead_code)] // read so that the key is known; not modelled
    pub(super) gid: Option<u64>,
    /// The format version.
    pub(super) json_version: JsonVersion,
    /// The nodes, in order.
    pub(super) nodes: Vec<Node>,
    /// The tensors: an object in 1.0, a list in 2.0.
    pub(super) tensors: TensorTable,
}

/// `json_version`: which of the frontend's two graph JSON versions a dump is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonVersion {
    /// "1.0".
    V1,
    /// "2.0".
    V2,
}

impl JsonVersion {
    /// The string the frontend writes: "1.0" or "2.0".
    pub const fn name(self) -> &'static str {
        match self {
            JsonVersion::V1 => "1.0",
            JsonVersion::V2 => "2.0",
        }
    }
}

impl<'de> Deserialize<'de> for JsonVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = JsonVersion;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("the string \"1.0\" or \"2.0\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<JsonVersion, E> {
                match s {
                    "1.0" => Ok(JsonVersion::V1),
                    "2.0" => Ok(JsonVersion::V2),
                    other => Err(E::custom(format!(
                        "json_version `{other}` is not supported: this rime reads the cuDNN \
                         frontend's graph JSON 1.0 and 2.0"
                    ))),
                }
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// `context`: the graph's data types. `sm_count` and the dynamic / override-shape flags are
/// read and ignored (device and execution facts, not the graph's math).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Context {
    #[serde(default)]
    pub(super) compute_data_type: Option<CudnnType>,
    #[serde(default)]
    pub(super) intermediate_data_type: Option<CudnnType>,
    #[serde(default)]
    pub(super) io_data_type: Option<CudnnType>,
    #[serde(default)]
    #[allow(dead_code)] // read so that the key is known; not modelled
    pub(super) is_dynamic_shape_enabled: Option<bool>,
    #[serde(default)]
    #[allow(dead_code)] // read so that the key is known; not modelled
    pub(super) is_override_shape_enabled: Option<bool>,
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    #[allow(dead_code)] // read so that the key is known; not modelled
    pub(super) sm_count: Option<i64>,
}

/// `tensors`: an object keyed by uid or name (1.0) or a list (2.0).
pub(super) enum TensorTable {
    /// 1.0: `{"1": {...}, "bias": {...}}`.
    Keyed(NamedMap<Tensor>),
    /// 2.0: `[{...}, {...}]`, in uid order.
    Listed(Vec<Tensor>),
}

impl<'de> Deserialize<'de> for TensorTable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TensorTable;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of tensors (2.0) or an object of tensors keyed by uid (1.0)")
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<TensorTable, A::Error> {
                NamedMap::read(a).map(TensorTable::Keyed)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<TensorTable, A::Error> {
                let mut out = Vec::new();
                while let Some(t) = a.next_element()? {
                    out.push(t);
                }
                Ok(TensorTable::Listed(out))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// One tensor (`Tensor_attributes`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Tensor {
    /// Pointer alignment the engines may assume, in bytes (2.0, only when not 16). Read and
    /// ignored: it selects engines, it does not change the math.
    #[serde(default)]
    #[allow(dead_code)] // read so that the key is known; not modelled
    pub(super) alignment: Option<i64>,
    /// `null` is NOT_SET: the context's type.
    #[serde(default)]
    pub(super) data_type: Option<CudnnType>,
    pub(super) dim: Vec<i64>,
    #[serde(default)]
    pub(super) is_pass_by_value: bool,
    #[serde(default)]
    pub(super) is_virtual: bool,
    /// Absent in 2.0 when the tensor has none.
    #[serde(default)]
    pub(super) name: Option<String>,
    /// The value of a by-value scalar, when known at graph time.
    #[serde(default)]
    pub(super) pass_by_value: Option<PassByValue>,
    /// Scales the ragged offsets (2.0, only when not 1): not modelled.
    #[serde(default)]
    pub(super) ragged_offset_multiplier: Option<i64>,
    #[serde(default)]
    pub(super) ragged_offset_name: Option<String>,
    #[serde(default)]
    pub(super) ragged_offset_uid: Option<i64>,
    /// `NONE` or a vectorized reordering (not modelled).
    #[serde(default)]
    pub(super) reordering_type: Option<String>,
    pub(super) stride: Vec<i64>,
    /// Required in 2.0; in 1.0 meaningful only with `uid_assigned`.
    #[serde(default)]
    pub(super) uid: Option<i64>,
    /// 1.0 only.
    #[serde(default)]
    pub(super) uid_assigned: Option<bool>,
}

/// `reordering_type` of a tensor stored as its dims and strides say (the only one rime models).
pub(super) const NO_REORDERING: &str = "NONE";

/// `mma_core_mode` of the FP16 / BF16 SDPA forward (the only one rime models): what
/// `Graph::sdpa` sets when the user sets none, and what every forward node of the frontend
/// 1.32 dumps says. The FP8 modes (`FP8_E4M3`, `FP8_E5M2`) select the FP8 lowering.
pub(super) const HALF_MMA: &str = "HALF";

/// The frontend's pass-by-value variant `{"index": i, "value": v}`: i is the alternative of
/// `variant<int64, int32, half, float, double, bfloat16>`; floats are hex strings.
#[derive(Deserialize)]
#[serde(try_from = "RawPassByValue")]
pub(super) struct PassByValue(pub(super) Scalar);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPassByValue {
    index: u8,
    value: serde_json::Value,
}

/// The variant index of each scalar type rime models.
pub(super) const fn pass_by_value_index(s: Scalar) -> u8 {
    match s {
        Scalar::I64(_) => 0,
        Scalar::I32(_) => 1,
        Scalar::F32(_) => 3,
        Scalar::F64(_) => 4,
    }
}

impl TryFrom<RawPassByValue> for PassByValue {
    type Error = String;
    fn try_from(raw: RawPassByValue) -> Result<Self, String> {
        let v = &raw.value;
        let scalar = match raw.index {
            0 => v.as_i64().map(Scalar::I64),
            1 => v
                .as_i64()
                .and_then(|i| i32::try_from(i).ok())
                .map(Scalar::I32),
            3 => serde_json::from_value::<HexF32>(v.clone())
                .ok()
                .map(|h| Scalar::F32(h.0)),
            4 => v.as_f64().map(Scalar::F64),
            2 | 5 => {
                return Err(format!(
                    "pass-by-value kind {} (half/bfloat16) is not supported; use FLOAT",
                    raw.index
                ))
            }
            other => return Err(format!("unknown pass-by-value kind {other}")),
        };
        scalar
            .map(PassByValue)
            .ok_or_else(|| format!("pass-by-value kind {} cannot hold {v}", raw.index))
    }
}

/// The node tags rime reads; other tags (CONV_FPROP, SDPA_FP8_BWD, ...) fail by name.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tag {
    /// SDPA forward.
    #[serde(rename = "SDPA")]
    Sdpa,
    /// SDPA backward.
    #[serde(rename = "SDPA_BWD")]
    SdpaBwd,
}

/// Which lowering the frontend chose for an SDPA forward node.
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(super) enum Implementation {
    /// Not chosen yet (never in a dump the frontend wrote).
    Auto,
    /// The composite lowering, which rewrites K to [B, H, D, S].
    Composite,
    /// The unified engine, which leaves K as it is.
    Unified,
}

/// One node: SDPA forward or backward attributes plus the tag. Keys of the other tag are
/// read (to name them in errors) and refused when set.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Node {
    pub(super) tag: Tag,
    #[serde(default)]
    pub(super) name: String,
    pub(super) inputs: Ports,
    pub(super) outputs: Ports,
    #[serde(default)]
    pub(super) alibi_mask: Option<bool>,
    #[serde(default)]
    pub(super) attn_scale_value: Option<HexF32>,
    #[serde(default)]
    pub(super) diagonal_alignment: Option<AlignmentName>,
    #[serde(default)]
    pub(super) dropout_probability: Option<HexF32>,
    #[serde(default)]
    pub(super) left_bound: Option<i64>,
    #[serde(default)]
    pub(super) max_total_seq_len_kv: Option<i64>,
    #[serde(default)]
    pub(super) max_total_seq_len_q: Option<i64>,
    #[serde(default)]
    pub(super) padding_mask: Option<bool>,
    #[serde(default)]
    pub(super) right_bound: Option<i64>,
    /// SDPA_BWD only.
    #[serde(default)]
    pub(super) is_deterministic_algorithm: Option<bool>,
    /// SDPA only: the node's accumulation type.
    #[serde(default)]
    pub(super) compute_data_type: Option<CudnnType>,
    /// SDPA only: whether Stats is an output (rime reads that from the outputs).
    #[serde(default)]
    #[allow(dead_code)] // read so that the key is known; the Stats port says the same
    pub(super) generate_stats: Option<bool>,
    /// SDPA only.
    #[serde(default)]
    pub(super) implementation: Option<Implementation>,
    /// SDPA only: MXFP8 block scaling.
    #[serde(default)]
    pub(super) is_mxfp8: Option<bool>,
    /// SDPA only: the key length of a paged cache.
    #[serde(default)]
    pub(super) max_seq_len_kv: Option<i64>,
    /// SDPA only: the matmuls' input precision, a `DataType_t` name: [`HALF_MMA`] (the
    /// FP16 / BF16 attention rime models), or an FP8 type. `null` (NOT_SET) in dumps of
    /// frontends that did not set it.
    #[serde(default)]
    pub(super) mma_core_mode: Option<String>,
    /// SDPA only: FP8 amax rescaling threshold (from an environment variable; FP8 only).
    #[serde(default)]
    #[allow(dead_code)] // read so that the key is known; it matters to FP8 graphs only
    pub(super) rescale_threshold: Option<HexF32>,
    /// SDPA only: Stats in base 2 instead of natural log.
    #[serde(default)]
    pub(super) stats_use_log2: Option<bool>,
    /// SDPA only: one SM100 kernel's choice of mul + add over fused multiply-add in the
    /// softmax (rounding of one engine, not the function computed).
    #[serde(default)]
    #[allow(dead_code)] // read so that the key is known; not modelled
    pub(super) unfuse_fma: Option<bool>,
}
