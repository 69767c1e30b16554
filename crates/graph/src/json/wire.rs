//! The wire types of the JSON graph format, version 1: what a file holds, key for key.
//!
//! These mirror the core types ([`Graph`](crate::Graph), [`Tensor`](crate::Tensor),
//! [`Node`](crate::Node)) but speak the file's language: tensors by name, ports by name, options
//! as optional keys. Fields are declared in key order so that saving writes sorted keys.
//! Their doc comments are the descriptions of `schemas/graph.v1.schema.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::maps::{FormatName, NamedMap, PortMap, TensorRef, Version};

/// An SDPA graph: a context, named tensors and the nodes that read and write them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "rime graph, format version 1")]
pub struct GraphDoc {
    /// Data types the tensors fall back to, and the graph's name. Absent means all unset.
    #[serde(default)]
    pub context: ContextDoc,
    /// Always `"rime.graph"`.
    pub format: FormatName,
    /// The nodes, in order. A node may read tensors that a later node writes as long as there
    /// is no cycle.
    pub nodes: Vec<NodeDoc>,
    /// Every tensor, keyed by its unique name. The order of the entries is the order of the
    /// graph's tensor ids and is kept by load and save.
    pub tensors: NamedMap<TensorDoc>,
    /// Format version; this is version 1.
    pub version: Version,
}

/// Graph-wide settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextDoc {
    /// Accumulation type of the nodes' arithmetic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_data_type: Option<DataTypeName>,
    /// Type of virtual tensors that set none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intermediate_data_type: Option<DataTypeName>,
    /// Type of non-virtual tensors that set none (Q, K, V, O, dO, gradients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_data_type: Option<DataTypeName>,
    /// Graph name, free text. Absent means empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
}

/// A tensor: logical dims, strides in elements, and optionally its type, uid and value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TensorDoc {
    /// Element type; absent means the context's io type (or intermediate type when virtual).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_type: Option<DataTypeName>,
    /// Logical dims, (B, H, S, D) for attention operands; each must be >= 1.
    #[schemars(inner(range(min = 1)))]
    pub dims: Vec<i64>,
    /// Offsets tensor (B+1 entries, i32 or i64) of a ragged (THD) layout, by name or uid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ragged_offset: Option<TensorRef>,
    /// Strides in elements, one per dim; attention operands need a last stride of 1.
    #[schemars(inner(range(min = 0)))]
    pub strides: Vec<i64>,
    /// User id, unique within the graph (the variant-pack key of cuDNN).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<i64>,
    /// The value when the tensor is passed by value from the host, e.g. `{"f32": 0.125}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<ScalarDoc>,
    /// A virtual tensor lives only inside a fused engine and gets no buffer. Absent means false.
    #[serde(
        default,
        rename = "virtual",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub is_virtual: bool,
}

/// A scalar passed by value, tagged with its type.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub enum ScalarDoc {
    /// 32-bit float (a finite JSON number within f32 range).
    #[serde(rename = "f32")]
    F32(super::maps::Finite32),
    /// 64-bit float.
    #[serde(rename = "f64")]
    F64(f64),
    /// 32-bit integer.
    #[serde(rename = "i32")]
    I32(i32),
    /// 64-bit integer.
    #[serde(rename = "i64")]
    I64(i64),
}

/// The tags of [`ScalarDoc`], for messages.
const SCALAR_TAGS: &str = "`f32`, `f64`, `i32` or `i64`";

// By hand rather than derived: serde's derived enum reads `{}` as a JSON syntax error
// ("expected value"); this one says what a by-value scalar looks like.
impl<'de> Deserialize<'de> for ScalarDoc {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::{self, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ScalarDoc;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(
                    f,
                    "an object with one key, {SCALAR_TAGS}, holding the number, e.g. {{\"f32\": 0.125}}"
                )
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<ScalarDoc, A::Error> {
                let Some(tag) = access.next_key::<String>()? else {
                    return Err(de::Error::custom(format!(
                        "a by-value scalar needs one key, {SCALAR_TAGS}, holding the number, e.g. {{\"f32\": 0.125}}; found an empty object"
                    )));
                };
                let value = match tag.as_str() {
                    "f32" => ScalarDoc::F32(access.next_value()?),
                    "f64" => ScalarDoc::F64(access.next_value()?),
                    "i32" => ScalarDoc::I32(access.next_value()?),
                    "i64" => ScalarDoc::I64(access.next_value()?),
                    other => {
                        return Err(de::Error::custom(format!(
                            "unknown scalar type `{}`, expected {SCALAR_TAGS}",
                            crate::shown(other)
                        )))
                    }
                };
                if let Some(extra) = access.next_key::<String>()? {
                    return Err(de::Error::custom(format!(
                        "a by-value scalar has exactly one key; found `{}` after `{tag}`",
                        crate::shown(&extra)
                    )));
                }
                Ok(value)
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// Element type names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DataTypeName {
    /// IEEE binary16.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// 32-bit signed integer.
    I32,
    /// 64-bit signed integer.
    I64,
    /// One byte per element, 0 or 1.
    Bool,
}

/// The operation of a node (the cuDNN frontend's tags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Tag {
    /// SDPA forward: Q, K, V -> O (and Stats).
    #[serde(rename = "SDPA_FWD")]
    SdpaFwd,
    /// SDPA backward: Q, K, V, O, dO, Stats -> dQ, dK, dV (and dBias, DSINK_TOKEN).
    #[serde(rename = "SDPA_BWD")]
    SdpaBwd,
}

/// Where the diagonal of a causal or banded mask starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AlignmentName {
    /// Row i keeps columns j <= i (+ bounds). The default.
    TopLeft,
    /// The diagonal is shifted right by Skv - Sq (per batch with sequence lengths).
    BottomRight,
}

/// An SDPA node: its tag, name, port bindings and options. Absent options are off / unset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeDoc {
    /// Add the ALiBi linear bias with the standard slopes. Absent means false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alibi_mask: Option<bool>,
    /// Score scale by value (f32); absent with no `Attn_scale` port means 1/sqrt(Dqk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attn_scale: Option<super::maps::Finite32>,
    /// Bitwise-reproducible gradients (backward). Absent means false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deterministic: Option<bool>,
    /// Alignment of the causal / band diagonal. Absent means `TOP_LEFT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagonal_alignment: Option<AlignmentName>,
    /// Philox dropout probability, with the `Seed` and `Offset` ports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropout_probability: Option<super::maps::Finite32>,
    /// Input ports: port name -> tensor name (string) or uid (integer).
    pub inputs: PortMap,
    /// Sliding window: keep key j only if j > i + shift - left_bound (>= 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_bound: Option<i64>,
    /// Token count of a packed (ragged) K/V layout, for workspace sizing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_total_seq_len_kv: Option<i64>,
    /// Token count of a packed (ragged) Q layout, for workspace sizing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_total_seq_len_q: Option<i64>,
    /// Node name, unique within the graph.
    pub name: String,
    /// Output ports: port name -> tensor name (string) or uid (integer).
    pub outputs: PortMap,
    /// Mask rows >= `SEQ_LEN_Q[b]` and columns >= `SEQ_LEN_KV[b]`. Absent means false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub padding_mask: Option<bool>,
    /// Keep key j only if j <= i + shift + right_bound; 0 is causal (>= 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right_bound: Option<i64>,
    /// The operation.
    pub tag: Tag,
}
