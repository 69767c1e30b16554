//! Reader for the cuDNN frontend's own serialized SDPA backward graphs (`Graph::serialize`),
//! so that graphs dumped from cuDNN/PyTorch code can be checked and run here.
//!
//! That format differs from rime's: floats are 8-digit hex strings of their IEEE bits
//! (`"3E000000"` is 0.125), `tensors` is keyed by uid or name, data types are upper-case names
//! (`HALF`, `BFLOAT16`, `FLOAT`, ...), port maps are objects or arrays of `[port, ref]` pairs,
//! and absent values are `null`. Keys rime does not model (`sm_count`, `reordering_type`,
//! versions) are ignored, as cuDNN itself does; everything that changes the math is read or
//! rejected. Unlike cuDNN's own reader, ragged-offset links are kept.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::convert::Resolver;
use super::error::LoadError;
use super::locate::JsonPath;
use super::maps::{Finite32, NamedMap, TensorRef};
use super::wire::AlignmentName;
use crate::{
    Context, DataType, DiagonalAlignment, Graph, Node, OpKind, Port, Scalar, SdpaOptions, Tensor,
};

/// Parses a cuDNN frontend graph JSON (SDPA_BWD nodes); `source` names it in errors.
///
/// # Errors
/// As [`super::from_str`]: [`LoadError::Syntax`], [`LoadError::Format`] (an unsupported tag,
/// data type or pass-by-value kind, a malformed hex float), [`LoadError::UnknownTensorName`],
/// [`LoadError::UnknownUid`], [`LoadError::AmbiguousUid`].
pub fn from_str(text: &str, source: &str) -> Result<Graph, LoadError> {
    let doc: CudnnGraph = super::parse(text, source)?;
    convert(&doc, text, source)
}

#[derive(Deserialize)]
struct CudnnGraph {
    #[serde(default)]
    context: Option<CudnnContext>,
    nodes: Vec<CudnnNode>,
    tensors: NamedMap<CudnnTensor>,
}

#[derive(Deserialize)]
struct CudnnContext {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    io_data_type: Option<CudnnType>,
    #[serde(default)]
    intermediate_data_type: Option<CudnnType>,
    #[serde(default)]
    compute_data_type: Option<CudnnType>,
}

/// `DataType_t` names rime models; the others (FP8, INT8, ...) are rejected by name.
#[derive(Deserialize, Clone, Copy)]
enum CudnnType {
    #[serde(rename = "HALF")]
    Half,
    #[serde(rename = "BFLOAT16")]
    Bfloat16,
    #[serde(rename = "FLOAT")]
    Float,
    #[serde(rename = "DOUBLE")]
    Double,
    #[serde(rename = "INT32")]
    Int32,
    #[serde(rename = "INT64")]
    Int64,
    #[serde(rename = "BOOLEAN")]
    Boolean,
}

impl From<CudnnType> for DataType {
    fn from(t: CudnnType) -> DataType {
        match t {
            CudnnType::Half => DataType::F16,
            CudnnType::Bfloat16 => DataType::Bf16,
            CudnnType::Float => DataType::F32,
            CudnnType::Double => DataType::F64,
            CudnnType::Int32 => DataType::I32,
            CudnnType::Int64 => DataType::I64,
            CudnnType::Boolean => DataType::Bool,
        }
    }
}

#[derive(Deserialize)]
struct CudnnTensor {
    #[serde(default)]
    name: String,
    #[serde(default)]
    data_type: Option<CudnnType>,
    dim: Vec<i64>,
    stride: Vec<i64>,
    #[serde(default)]
    is_virtual: bool,
    #[serde(default)]
    is_pass_by_value: bool,
    #[serde(default)]
    pass_by_value: Option<PassByValue>,
    #[serde(default)]
    uid: i64,
    #[serde(default)]
    uid_assigned: bool,
    #[serde(default)]
    ragged_offset_uid: Option<i64>,
    #[serde(default)]
    ragged_offset_name: Option<String>,
}

/// cuDNN's pass-by-value variant `{"index": i, "value": v}`.
#[derive(Deserialize)]
#[serde(try_from = "RawPassByValue")]
struct PassByValue(Scalar);

#[derive(Deserialize)]
struct RawPassByValue {
    index: u8,
    value: serde_json::Value,
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
            3 => hex_or_number(v).map(Scalar::F32),
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

fn hex_or_number(v: &serde_json::Value) -> Option<f32> {
    match v {
        serde_json::Value::String(s) => parse_hex_f32(s).ok(),
        other => other
            .as_f64()
            .filter(|x| x.is_finite() && x.abs() <= f64::from(f32::MAX))
            .map(|x| x as f32),
    }
}

fn parse_hex_f32(s: &str) -> Result<f32, String> {
    let bits = (s.len() == 8)
        .then(|| u32::from_str_radix(s, 16).ok())
        .flatten()
        .ok_or_else(|| format!("`{s}` is not an 8-digit hex float (e.g. \"3E000000\")"))?;
    let v = f32::from_bits(bits);
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("`{s}` is not a finite float"))
    }
}

/// A float option: a hex string, a JSON number, or null.
struct HexF32(f32);

impl<'de> Deserialize<'de> for HexF32 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = HexF32;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a float as 8 hex digits of its bits (\"3E000000\") or a number")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<HexF32, E> {
                parse_hex_f32(s).map(HexF32).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<HexF32, E> {
                Finite32::deserialize(de::value::F64Deserializer::<E>::new(v)).map(|f| HexF32(f.0))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<HexF32, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<HexF32, E> {
                self.visit_f64(v as f64)
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[derive(Deserialize, Clone, Copy)]
enum CudnnTag {
    #[serde(rename = "SDPA_BWD")]
    SdpaBwd,
}

#[derive(Deserialize)]
struct CudnnNode {
    #[allow(dead_code)] // one variant today; kept so that other tags are rejected by name
    tag: CudnnTag,
    #[serde(default)]
    name: String,
    inputs: CudnnPorts,
    outputs: CudnnPorts,
    #[serde(default)]
    alibi_mask: Option<bool>,
    #[serde(default)]
    padding_mask: Option<bool>,
    #[serde(default)]
    dropout_probability: Option<HexF32>,
    #[serde(default)]
    attn_scale_value: Option<HexF32>,
    #[serde(default)]
    left_bound: Option<i64>,
    #[serde(default)]
    right_bound: Option<i64>,
    #[serde(default)]
    diagonal_alignment: Option<AlignmentName>,
    #[serde(default)]
    max_total_seq_len_q: Option<i64>,
    #[serde(default)]
    max_total_seq_len_kv: Option<i64>,
    #[serde(default)]
    is_deterministic_algorithm: Option<bool>,
}

/// Ports as an object `{port: ref}` or an array of `[port, ref]` pairs; each entry keeps the
/// path step(s) that lead to its reference, for error messages.
struct CudnnPorts(Vec<(Port, TensorRef, Vec<PathStep>)>);

#[derive(Clone)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn port_of<E: de::Error>(name: &str) -> Result<Port, E> {
    Port::from_name(name).ok_or_else(|| E::custom(format!("unknown port `{name}`")))
}

impl<'de> Deserialize<'de> for CudnnPorts {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CudnnPorts;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of port -> tensor, or an array of [port, tensor] pairs")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<CudnnPorts, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = a.next_key::<String>()? {
                    let port = port_of(&key)?;
                    if let Some(r) = a.next_value::<Option<TensorRef>>()? {
                        out.push((port, r, vec![PathStep::Key(key)]));
                    }
                }
                Ok(CudnnPorts(out))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<CudnnPorts, A::Error> {
                let mut out = Vec::new();
                let mut i = 0;
                while let Some((key, r)) = a.next_element::<(String, Option<TensorRef>)>()? {
                    let port = port_of(&key)?;
                    if let Some(r) = r {
                        out.push((port, r, vec![PathStep::Index(i), PathStep::Index(1)]));
                    }
                    i += 1;
                }
                Ok(CudnnPorts(out))
            }
        }
        deserializer.deserialize_any(V)
    }
}

fn convert(doc: &CudnnGraph, text: &str, file: &str) -> Result<Graph, LoadError> {
    // A tensor is known by its name, and (for string refs) by its key in `tensors`. Two
    // tensors of one name are one tensor to cuDNN; here the first keeps the name.
    let mut refs = Resolver::new(text, file);
    let mut names = Vec::new();
    for (key, t) in &doc.tensors.0 {
        let name = if t.name.is_empty() { key } else { &t.name };
        refs.add(name, &[key.as_str()], t.uid_assigned.then_some(t.uid));
        names.push(name.clone());
    }
    let ctx = doc.context.as_ref();
    let mut graph = Graph::new(Context {
        name: ctx.and_then(|c| c.name.clone()).unwrap_or_default(),
        io_data_type: ctx.and_then(|c| c.io_data_type).map(Into::into),
        intermediate_data_type: ctx.and_then(|c| c.intermediate_data_type).map(Into::into),
        compute_data_type: ctx.and_then(|c| c.compute_data_type).map(Into::into),
    });
    for (index, (key, t)) in doc.tensors.0.iter().enumerate() {
        let path = JsonPath::default().key("tensors").key(key);
        let ragged_offset = match (&t.ragged_offset_name, t.ragged_offset_uid) {
            (Some(name), _) if !name.is_empty() => Some(refs.resolve(
                &TensorRef::Name(name.clone()),
                path.key("ragged_offset_name"),
            )?),
            (_, Some(uid)) => {
                Some(refs.resolve(&TensorRef::Uid(uid), path.key("ragged_offset_uid"))?)
            }
            _ => None,
        };
        graph.tensor(Tensor {
            name: names[index].clone(),
            uid: t.uid_assigned.then_some(t.uid),
            dims: t.dim.clone(),
            strides: t.stride.clone(),
            data_type: t.data_type.map(Into::into),
            is_virtual: t.is_virtual,
            pass_by_value: t
                .pass_by_value
                .as_ref()
                .filter(|_| t.is_pass_by_value)
                .map(|v| v.0),
            ragged_offset,
        });
    }
    for (index, n) in doc.nodes.iter().enumerate() {
        let path = JsonPath::default().key("nodes").index(index);
        let ports = |ports: &CudnnPorts, side: &str| {
            ports
                .0
                .iter()
                .map(|(port, r, steps)| {
                    let mut p = path.key(side);
                    for s in steps {
                        p = match s {
                            PathStep::Key(k) => p.key(k),
                            PathStep::Index(i) => p.index(*i),
                        };
                    }
                    Ok((*port, refs.resolve(r, p)?))
                })
                .collect::<Result<BTreeMap<_, _>, LoadError>>()
        };
        let inputs = ports(&n.inputs, "inputs")?;
        let outputs = ports(&n.outputs, "outputs")?;
        graph.add_node(Node {
            name: n.name.clone(),
            op: OpKind::SdpaBackward,
            inputs,
            outputs,
            options: SdpaOptions {
                attn_scale: n.attn_scale_value.as_ref().map(|v| v.0),
                left_bound: n.left_bound,
                right_bound: n.right_bound,
                diagonal_alignment: match n.diagonal_alignment {
                    Some(AlignmentName::BottomRight) => DiagonalAlignment::BottomRight,
                    _ => DiagonalAlignment::TopLeft,
                },
                padding_mask: n.padding_mask.unwrap_or(false),
                alibi_mask: n.alibi_mask.unwrap_or(false),
                dropout_probability: n.dropout_probability.as_ref().map(|v| v.0),
                deterministic: n.is_deterministic_algorithm.unwrap_or(false),
                max_total_seq_len_q: n.max_total_seq_len_q,
                max_total_seq_len_kv: n.max_total_seq_len_kv,
            },
        });
    }
    Ok(graph)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_floats() {
        assert_eq!(parse_hex_f32("3E000000"), Ok(0.125));
        assert_eq!(parse_hex_f32("3F800000"), Ok(1.0));
        assert_eq!(parse_hex_f32("3DCCCCCD"), Ok(0.1));
        assert!(parse_hex_f32("7F800000").is_err());
        assert!(parse_hex_f32("3E00").is_err());
        assert!(parse_hex_f32("zz000000").is_err());
    }
}
