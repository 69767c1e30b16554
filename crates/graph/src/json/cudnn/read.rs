//! From a parsed dump to a rime graph: tensor names and references, the checks of what rime
//! does not model (each refused at its place in the file), cuDNN's defaults where rime's
//! differ, and the undoing of the frontend's lowering.

use super::dtype::CudnnType;
use super::lowering::{self, transposed_ports};
use super::names::unique_names;
use super::ports::Ports;
use super::wire::{
    self, Document, Implementation, JsonVersion, Tag, TensorTable, HALF_MMA, NO_REORDERING,
};
use crate::json::convert::Resolver;
use crate::json::error::LoadError;
use crate::json::locate::JsonPath;
use crate::json::{AlignmentName, TensorRef};
use crate::{
    Context, DataType, DiagonalAlignment, Graph, Node, OpKind, Port, SdpaOptions, Tensor, TensorId,
};

/// One entry of `tensors`, with where it is and the name and uid rime gives it.
struct Entry<'a> {
    path: JsonPath,
    key: Option<&'a str>,
    tensor: &'a wire::Tensor,
    name: String,
    uid: Option<i64>,
}

/// Errors of one document: each names the file and the place of the value at fault.
struct Errors<'a> {
    text: &'a str,
    file: &'a str,
}

impl Errors<'_> {
    fn at(&self, path: &JsonPath, message: impl Into<String>) -> LoadError {
        LoadError::format_at(self.text, self.file, path, message)
    }
}

/// The graph `doc` describes; `text` and `file` serve error locations.
pub(super) fn convert(doc: &Document, text: &str, file: &str) -> Result<Graph, LoadError> {
    let errors = Errors { text, file };
    let version = doc.json_version;
    let entries = entries(doc, &errors)?;
    let mut refs = Resolver::new(text, file);
    for e in &entries {
        refs.add(&e.name, e.key.as_slice(), e.uid);
    }
    let mut tensors = Vec::with_capacity(entries.len());
    for e in &entries {
        tensors.push(tensor(e, version, &refs)?);
    }
    let ctx = doc.context.as_ref();
    let context = Context {
        name: ctx.and_then(|c| c.name.clone()).unwrap_or_default(),
        io_data_type: ctx.and_then(|c| c.io_data_type).map(Into::into),
        intermediate_data_type: ctx.and_then(|c| c.intermediate_data_type).map(Into::into),
        compute_data_type: ctx.and_then(|c| c.compute_data_type).map(Into::into),
    };
    let mut nodes = Vec::with_capacity(doc.nodes.len());
    let mut transposes = Vec::with_capacity(doc.nodes.len());
    for (index, n) in doc.nodes.iter().enumerate() {
        let path = JsonPath::default().key("nodes").index(index);
        check_node(n, &path, &context, &errors)?;
        let node = node(n, &path, version, &refs, &errors)?;
        transposes.push(transposed_ports(
            node.op,
            n.implementation == Some(Implementation::Unified),
        ));
        nodes.push(node);
    }
    let (tensors, mut nodes) = lowering::undo(tensors, nodes, &transposes).map_err(|c| {
        errors.at(
            &JsonPath::default().key("nodes").index(c.node).key(c.key),
            c.message,
        )
    })?;
    for n in &mut nodes {
        // cuDNN scales the scores only when told to; rime's default is 1/sqrt(Dqk).
        if n.options.attn_scale.is_none() && n.input(Port::AttnScale).is_none() {
            n.options.attn_scale = Some(1.0);
        }
    }
    let mut graph = Graph::new(context);
    for t in tensors {
        graph.tensor(t);
    }
    for n in nodes {
        graph.add_node(n);
    }
    Ok(graph)
}

/// The entries of `tensors`, named: 1.0 by `name` (else the key), 2.0 by
/// [`unique_names`] of the labels and uids.
fn entries<'a>(doc: &'a Document, errors: &Errors<'_>) -> Result<Vec<Entry<'a>>, LoadError> {
    let table = JsonPath::default().key("tensors");
    let entries: Vec<Entry<'a>> = match (&doc.tensors, doc.json_version) {
        (TensorTable::Keyed(map), JsonVersion::V1) => map
            .0
            .iter()
            .map(|(key, t)| Entry {
                path: table.key(key),
                key: Some(key.as_str()),
                tensor: t,
                name: t
                    .name
                    .clone()
                    .filter(|n| !n.is_empty())
                    .unwrap_or(key.clone()),
                uid: t.uid.filter(|_| t.uid_assigned != Some(false)),
            })
            .collect(),
        (TensorTable::Listed(list), JsonVersion::V2) => {
            let mut uids = Vec::with_capacity(list.len());
            for (i, t) in list.iter().enumerate() {
                let uid = t.uid.ok_or_else(|| {
                    errors.at(&table.index(i), "a tensor of graph JSON 2.0 needs a `uid`")
                })?;
                uids.push(uid);
            }
            let labels: Vec<(Option<&str>, i64)> = list
                .iter()
                .zip(&uids)
                .map(|(t, uid)| (t.name.as_deref(), *uid))
                .collect();
            list.iter()
                .zip(uids)
                .zip(unique_names(&labels))
                .enumerate()
                .map(|(i, ((t, uid), name))| Entry {
                    path: table.index(i),
                    key: None,
                    tensor: t,
                    name,
                    uid: Some(uid),
                })
                .collect()
        }
        (TensorTable::Keyed(_), v) | (TensorTable::Listed(_), v) => {
            let (want, found) = match v {
                JsonVersion::V1 => ("an object keyed by uid or name", "a list (as in 2.0)"),
                JsonVersion::V2 => ("a list", "an object (as in 1.0)"),
            };
            return Err(errors.at(
                &table,
                format!(
                    "graph JSON {} has `tensors` as {want}, this is {found}",
                    v.name()
                ),
            ));
        }
    };
    for e in &entries {
        let t = e.tensor;
        if let Some(r) = t.reordering_type.as_deref().filter(|r| *r != NO_REORDERING) {
            return Err(errors.at(
                &e.path.key("reordering_type"),
                format!("reordering_type `{r}` (a reordered layout) is not modelled by rime"),
            ));
        }
        if let Some(m) = t.ragged_offset_multiplier.filter(|m| *m != 1) {
            return Err(errors.at(
                &e.path.key("ragged_offset_multiplier"),
                format!(
                    "ragged_offset_multiplier {m} (scaled ragged offsets) is not modelled by rime"
                ),
            ));
        }
    }
    Ok(entries)
}

/// The rime tensor of an entry (its ragged offset resolved: by name, else uid, in 1.0; by
/// uid, else name, in 2.0). A value with `is_pass_by_value` false is not read, as the
/// frontend does not read it: such a tensor is bound at execution.
fn tensor(e: &Entry<'_>, version: JsonVersion, refs: &Resolver<'_>) -> Result<Tensor, LoadError> {
    let t = e.tensor;
    let by_name = t
        .ragged_offset_name
        .clone()
        .filter(|n| !n.is_empty())
        .map(|n| (TensorRef::Name(n), "ragged_offset_name"));
    let by_uid = t
        .ragged_offset_uid
        .map(|u| (TensorRef::Uid(u), "ragged_offset_uid"));
    let reference = match version {
        JsonVersion::V1 => by_name.or(by_uid),
        JsonVersion::V2 => by_uid.or(by_name),
    };
    let ragged_offset = match reference {
        Some((r, key)) => Some(refs.resolve(&r, e.path.key(key))?),
        None => None,
    };
    Ok(Tensor {
        name: e.name.clone(),
        uid: e.uid,
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
    })
}

/// Refuses what a node sets that rime does not model, and attributes of the other tag.
fn check_node(
    n: &wire::Node,
    path: &JsonPath,
    context: &Context,
    errors: &Errors<'_>,
) -> Result<(), LoadError> {
    let forward_only = [
        ("compute_data_type", n.compute_data_type.is_some()),
        ("generate_stats", n.generate_stats.is_some()),
        ("implementation", n.implementation.is_some()),
        ("is_mxfp8", n.is_mxfp8.is_some()),
        ("max_seq_len_kv", n.max_seq_len_kv.is_some()),
        ("mma_core_mode", n.mma_core_mode.is_some()),
        ("rescale_threshold", n.rescale_threshold.is_some()),
        ("stats_use_log2", n.stats_use_log2.is_some()),
        ("unfuse_fma", n.unfuse_fma.is_some()),
    ];
    let backward_only = [(
        "is_deterministic_algorithm",
        n.is_deterministic_algorithm.is_some(),
    )];
    let (foreign, this, other) = match n.tag {
        Tag::SdpaBwd => (&forward_only[..], "SDPA_BWD", "SDPA"),
        Tag::Sdpa => (&backward_only[..], "SDPA", "SDPA_BWD"),
    };
    if let Some((key, _)) = foreign.iter().find(|(_, set)| *set) {
        return Err(errors.at(
            &path.key(key),
            format!("`{key}` is an attribute of {other} nodes, not of {this}"),
        ));
    }
    let not_modelled = |key: &str, what: &str| {
        errors.at(
            &path.key(key),
            format!("{what} is not modelled by rime (it changes what the node computes)"),
        )
    };
    if n.stats_use_log2 == Some(true) {
        return Err(not_modelled(
            "stats_use_log2",
            "Stats in base 2 (`stats_use_log2`)",
        ));
    }
    if let Some(m) = n.mma_core_mode.as_deref().filter(|m| *m != HALF_MMA) {
        return Err(not_modelled(
            "mma_core_mode",
            &format!("a matmul precision other than {HALF_MMA} (`mma_core_mode` {m})"),
        ));
    }
    if n.max_seq_len_kv.is_some() {
        return Err(not_modelled(
            "max_seq_len_kv",
            "the key length of a paged K/V cache (`max_seq_len_kv`)",
        ));
    }
    if n.is_mxfp8 == Some(true) {
        return Err(not_modelled("is_mxfp8", "MXFP8 block scaling (`is_mxfp8`)"));
    }
    if let Some(t) = n.compute_data_type {
        let graph = context.compute_data_type;
        let same = graph == Some(DataType::from(t)) || (graph.is_none() && t == CudnnType::Float);
        if !same {
            return Err(errors.at(
                &path.key("compute_data_type"),
                format!(
                    "the node's compute_data_type {} differs from the graph's {}; rime has \
                     one compute type per graph",
                    DataType::from(t),
                    graph.map_or_else(|| "(unset)".to_owned(), |g| g.to_string())
                ),
            ));
        }
    }
    Ok(())
}

/// The rime node of `n`, its references resolved (2.0 refers by uid only).
fn node(
    n: &wire::Node,
    path: &JsonPath,
    version: JsonVersion,
    refs: &Resolver<'_>,
    errors: &Errors<'_>,
) -> Result<Node, LoadError> {
    let ports = |ports: &Ports, side: &str| {
        let side = path.key(side);
        ports
            .0
            .iter()
            .map(|b| {
                let at = b.path(&side);
                if version == JsonVersion::V2 && matches!(b.tensor, TensorRef::Name(_)) {
                    return Err(errors.at(&at, "graph JSON 2.0 refers to tensors by uid"));
                }
                Ok((b.port, refs.resolve(&b.tensor, at)?))
            })
            .collect::<Result<std::collections::BTreeMap<Port, TensorId>, LoadError>>()
    };
    Ok(Node {
        name: n.name.clone(),
        op: match n.tag {
            Tag::Sdpa => OpKind::SdpaForward,
            Tag::SdpaBwd => OpKind::SdpaBackward,
        },
        inputs: ports(&n.inputs, "inputs")?,
        outputs: ports(&n.outputs, "outputs")?,
        options: SdpaOptions {
            attn_scale: n.attn_scale_value.map(|v| v.0),
            left_bound: n.left_bound,
            right_bound: n.right_bound,
            diagonal_alignment: match n.diagonal_alignment {
                Some(AlignmentName::BottomRight) => DiagonalAlignment::BottomRight,
                None | Some(AlignmentName::TopLeft) => DiagonalAlignment::TopLeft,
            },
            padding_mask: n.padding_mask.unwrap_or(false),
            alibi_mask: n.alibi_mask.unwrap_or(false),
            dropout_probability: n.dropout_probability.map(|v| v.0),
            deterministic: n.is_deterministic_algorithm.unwrap_or(false),
            max_total_seq_len_q: n.max_total_seq_len_q,
            max_total_seq_len_kv: n.max_total_seq_len_kv,
        },
    })
}
