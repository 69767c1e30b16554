//! A rime graph in the frontend's graph JSON 2.0: what `Graph::deserialize` of frontend 1.27
//! and later reads, so that a graph built or checked with rime can be handed to cuDNN.
//!
//! The user's view is written (K and V as (B, H, S, D); the frontend's lowering rewrites them
//! itself), with every key the frontend writes for the node and tensor kinds rime models. What
//! rime models and cuDNN spells differently is translated: a tensor without a uid gets the
//! smallest free one (the frontend requires one per tensor), tensors are listed in uid order
//! (the frontend's order), and a node with no scale gets rime's default 1/sqrt(Dqk) explicitly
//! (cuDNN's default is no scaling). Reading the text back gives the same graph for one that
//! already had a uid on every tensor listed in uid order (every graph read from a 2.0 dump).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use super::dtype::CudnnType;
use super::hex::{hex_f32, HexF32};
use super::wire::{pass_by_value_index, JsonVersion, HALF_MMA, NO_REORDERING};
use crate::json::pretty;
use crate::{Graph, Node, OpKind, Port, Scalar, SdpaShape, TensorId};

#[derive(Serialize)]
struct DocOut<'a> {
    context: ContextOut<'a>,
    gid: u64,
    json_version: &'static str,
    nodes: Vec<NodeOut<'a>>,
    tensors: Vec<TensorOut<'a>>,
}

#[derive(Serialize)]
struct ContextOut<'a> {
    compute_data_type: Option<CudnnType>,
    intermediate_data_type: Option<CudnnType>,
    io_data_type: Option<CudnnType>,
    is_dynamic_shape_enabled: bool,
    is_override_shape_enabled: bool,
    #[serde(skip_serializing_if = "str::is_empty")]
    name: &'a str,
    sm_count: i64,
}

#[derive(Serialize)]
struct TensorOut<'a> {
    data_type: Option<CudnnType>,
    dim: &'a [i64],
    is_pass_by_value: bool,
    is_virtual: bool,
    name: &'a str,
    pass_by_value: Option<PassByValueOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ragged_offset_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ragged_offset_uid: Option<i64>,
    reordering_type: &'static str,
    stride: &'a [i64],
    uid: i64,
}

#[derive(Serialize)]
struct PassByValueOut {
    index: u8,
    value: Value,
}

/// A port's reference: the tensor's uid, or for a dangling id (a graph built wrongly in code)
/// a string that no reader accepts.
#[derive(Serialize)]
#[serde(untagged)]
enum RefOut {
    Uid(i64),
    Dangling(String),
}

type PortsOut = BTreeMap<&'static str, RefOut>;

#[derive(Serialize)]
#[serde(untagged)]
enum NodeOut<'a> {
    Backward(BackwardOut<'a>),
    Forward(ForwardOut<'a>),
}

/// `SDPA_backward_attributes` and the tag.
#[derive(Serialize)]
struct BackwardOut<'a> {
    alibi_mask: bool,
    attn_scale_value: Option<HexF32>,
    diagonal_alignment: &'static str,
    dropout_probability: Option<HexF32>,
    inputs: PortsOut,
    is_deterministic_algorithm: bool,
    left_bound: Option<i64>,
    max_total_seq_len_kv: Option<i64>,
    max_total_seq_len_q: Option<i64>,
    name: &'a str,
    outputs: PortsOut,
    padding_mask: bool,
    right_bound: Option<i64>,
    tag: &'static str,
}

/// `SDPA_attributes`, the tag and the keys the forward node adds (all at their defaults:
/// the composite lowering, FP16 / BF16 matmuls, natural-log Stats). `mma_core_mode` must be
/// written: the composite lowering of a deserialized node without it builds no S x V matmul
/// (frontend 1.32 source, `CompositeSDPANode::expand_node`).
#[derive(Serialize)]
struct ForwardOut<'a> {
    alibi_mask: bool,
    attn_scale_value: Option<HexF32>,
    compute_data_type: Option<CudnnType>,
    diagonal_alignment: &'static str,
    dropout_probability: Option<HexF32>,
    generate_stats: bool,
    implementation: &'static str,
    inputs: PortsOut,
    is_mxfp8: bool,
    left_bound: Option<i64>,
    max_seq_len_kv: Option<i64>,
    max_total_seq_len_kv: Option<i64>,
    max_total_seq_len_q: Option<i64>,
    mma_core_mode: &'static str,
    name: &'a str,
    outputs: PortsOut,
    padding_mask: bool,
    right_bound: Option<i64>,
    stats_use_log2: bool,
    tag: &'static str,
    unfuse_fma: bool,
}

/// Each tensor's uid: its own, else the smallest positive one no tensor has (in id order).
fn uids(graph: &Graph) -> Vec<i64> {
    let mut used: BTreeSet<i64> = graph.tensors().iter().filter_map(|t| t.uid).collect();
    let mut next = 1;
    graph
        .tensors()
        .iter()
        .map(|t| {
            t.uid.unwrap_or_else(|| {
                while used.contains(&next) {
                    next += 1;
                }
                used.insert(next);
                next
            })
        })
        .collect()
}

fn pass_by_value(s: Scalar) -> PassByValueOut {
    PassByValueOut {
        index: pass_by_value_index(s),
        value: match s {
            Scalar::I64(v) => Value::from(v),
            Scalar::I32(v) => Value::from(v),
            Scalar::F32(v) => Value::from(hex_f32(v)),
            Scalar::F64(v) => Value::from(v),
        },
    }
}

/// The graph as graph JSON 2.0 text: two-space indentation, number arrays on one line, keys
/// in the frontend's (sorted) order, a trailing newline.
pub fn to_string(graph: &Graph) -> String {
    let uids = uids(graph);
    let uid_of = |id: TensorId| -> RefOut {
        uids.get(id.index()).map_or_else(
            || RefOut::Dangling(format!("#{} (dangling)", id.index())),
            |u| RefOut::Uid(*u),
        )
    };
    let ports = |map: &BTreeMap<Port, TensorId>| -> PortsOut {
        map.iter().map(|(p, t)| (p.name(), uid_of(*t))).collect()
    };
    let ctx = &graph.context;
    let mut order: Vec<usize> = (0..graph.tensors().len()).collect();
    order.sort_by_key(|&i| uids[i]);
    let tensors = order
        .into_iter()
        .map(|i| {
            let t = &graph.tensors()[i];
            let offsets = t.ragged_offset;
            TensorOut {
                data_type: t.data_type.map(Into::into),
                dim: &t.dims,
                is_pass_by_value: t.pass_by_value.is_some(),
                is_virtual: t.is_virtual,
                name: &t.name,
                pass_by_value: t.pass_by_value.map(pass_by_value),
                ragged_offset_name: offsets.and_then(|o| graph.get(o)).map(|o| o.name.as_str()),
                ragged_offset_uid: offsets.and_then(|o| uids.get(o.index()).copied()),
                reordering_type: NO_REORDERING,
                stride: &t.strides,
                uid: uids[i],
            }
        })
        .collect();
    let doc = DocOut {
        context: ContextOut {
            compute_data_type: ctx.compute_data_type.map(Into::into),
            intermediate_data_type: ctx.intermediate_data_type.map(Into::into),
            io_data_type: ctx.io_data_type.map(Into::into),
            is_dynamic_shape_enabled: false,
            is_override_shape_enabled: false,
            name: &ctx.name,
            sm_count: -1,
        },
        gid: 0,
        json_version: JsonVersion::V2.name(),
        nodes: graph
            .nodes()
            .iter()
            .map(|n| node(graph, n, ports(&n.inputs), ports(&n.outputs)))
            .collect(),
        tensors,
    };
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    pretty::canonical(&text)
}

fn node<'a>(graph: &Graph, n: &'a Node, inputs: PortsOut, outputs: PortsOut) -> NodeOut<'a> {
    let o = &n.options;
    // cuDNN does not scale without a scale; rime's default is 1/sqrt(Dqk): say it.
    let attn_scale = o
        .attn_scale
        .or_else(|| {
            n.input(Port::AttnScale)
                .is_none()
                .then(|| SdpaShape::of(graph, n).and_then(|s| s.default_attn_scale()))
                .flatten()
        })
        .map(HexF32);
    let alignment = o.diagonal_alignment.name();
    match n.op {
        OpKind::SdpaBackward => NodeOut::Backward(BackwardOut {
            alibi_mask: o.alibi_mask,
            attn_scale_value: attn_scale,
            diagonal_alignment: alignment,
            dropout_probability: o.dropout_probability.map(HexF32),
            inputs,
            is_deterministic_algorithm: o.deterministic,
            left_bound: o.left_bound,
            max_total_seq_len_kv: o.max_total_seq_len_kv,
            max_total_seq_len_q: o.max_total_seq_len_q,
            name: &n.name,
            outputs,
            padding_mask: o.padding_mask,
            right_bound: o.right_bound,
            tag: "SDPA_BWD",
        }),
        OpKind::SdpaForward => NodeOut::Forward(ForwardOut {
            alibi_mask: o.alibi_mask,
            attn_scale_value: attn_scale,
            compute_data_type: graph.context.compute_data_type.map(Into::into),
            diagonal_alignment: alignment,
            dropout_probability: o.dropout_probability.map(HexF32),
            generate_stats: n.output(Port::Stats).is_some(),
            implementation: "COMPOSITE",
            inputs,
            is_mxfp8: false,
            left_bound: o.left_bound,
            max_seq_len_kv: None,
            max_total_seq_len_kv: o.max_total_seq_len_kv,
            max_total_seq_len_q: o.max_total_seq_len_q,
            mma_core_mode: HALF_MMA,
            name: &n.name,
            outputs,
            padding_mask: o.padding_mask,
            right_bound: o.right_bound,
            stats_use_log2: false,
            tag: "SDPA",
            unfuse_fma: false,
        }),
    }
}
