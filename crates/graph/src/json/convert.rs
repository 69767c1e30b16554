//! Conversion between the wire types and the core graph. Loading resolves references and
//! nothing else: it neither checks structure (that is [`Graph::validate`]) nor fills in
//! anything the file did not say.

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};

use super::error::LoadError;
use super::locate::{JsonPath, SourceIndex};
use super::maps::{Finite32, FormatName, NamedMap, PortMap, TensorRef, Version};
use super::wire::{
    AlignmentName, ContextDoc, DataTypeName, GraphDoc, NodeDoc, ScalarDoc, Tag, TensorDoc,
};
use crate::{
    Context, DataType, DiagonalAlignment, Graph, Node, OpKind, Port, Scalar, SdpaOptions, Tensor,
    TensorId,
};

impl From<DataTypeName> for DataType {
    fn from(d: DataTypeName) -> DataType {
        match d {
            DataTypeName::F16 => DataType::F16,
            DataTypeName::Bf16 => DataType::Bf16,
            DataTypeName::F32 => DataType::F32,
            DataTypeName::F64 => DataType::F64,
            DataTypeName::I32 => DataType::I32,
            DataTypeName::I64 => DataType::I64,
            DataTypeName::Bool => DataType::Bool,
        }
    }
}

impl From<DataType> for DataTypeName {
    fn from(d: DataType) -> DataTypeName {
        match d {
            DataType::F16 => DataTypeName::F16,
            DataType::Bf16 => DataTypeName::Bf16,
            DataType::F32 => DataTypeName::F32,
            DataType::F64 => DataTypeName::F64,
            DataType::I32 => DataTypeName::I32,
            DataType::I64 => DataTypeName::I64,
            DataType::Bool => DataTypeName::Bool,
        }
    }
}

impl From<ScalarDoc> for Scalar {
    fn from(s: ScalarDoc) -> Scalar {
        match s {
            ScalarDoc::F32(v) => Scalar::F32(v.0),
            ScalarDoc::F64(v) => Scalar::F64(v),
            ScalarDoc::I32(v) => Scalar::I32(v),
            ScalarDoc::I64(v) => Scalar::I64(v),
        }
    }
}

impl From<Scalar> for ScalarDoc {
    fn from(s: Scalar) -> ScalarDoc {
        match s {
            Scalar::F32(v) => ScalarDoc::F32(Finite32(v)),
            Scalar::F64(v) => ScalarDoc::F64(v),
            Scalar::I32(v) => ScalarDoc::I32(v),
            Scalar::I64(v) => ScalarDoc::I64(v),
        }
    }
}

/// The wire form of a graph. Tensors keep graph order; ports are sorted by name.
pub(crate) fn to_doc(graph: &Graph) -> GraphDoc {
    let name_of = |id: TensorId| -> TensorRef {
        // A dangling id (a graph built wrongly in code) is written so that loading fails loudly.
        TensorRef::Name(
            graph
                .get(id)
                .map_or_else(|| format!("#{} (dangling)", id.index()), |t| t.name.clone()),
        )
    };
    let ports = |map: &BTreeMap<Port, TensorId>| {
        let mut entries: Vec<(Port, TensorRef)> =
            map.iter().map(|(&p, &t)| (p, name_of(t))).collect();
        entries.sort_by_key(|(p, _)| p.name());
        PortMap(entries)
    };
    let ctx = &graph.context;
    GraphDoc {
        context: ContextDoc {
            compute_data_type: ctx.compute_data_type.map(Into::into),
            intermediate_data_type: ctx.intermediate_data_type.map(Into::into),
            io_data_type: ctx.io_data_type.map(Into::into),
            name: ctx.name.clone(),
        },
        format: FormatName,
        nodes: graph
            .nodes()
            .iter()
            .map(|n| {
                let o = &n.options;
                NodeDoc {
                    alibi_mask: o.alibi_mask.then_some(true),
                    attn_scale: o.attn_scale.map(Finite32),
                    deterministic: o.deterministic.then_some(true),
                    diagonal_alignment: match o.diagonal_alignment {
                        DiagonalAlignment::TopLeft => None,
                        DiagonalAlignment::BottomRight => Some(AlignmentName::BottomRight),
                    },
                    dropout_probability: o.dropout_probability.map(Finite32),
                    inputs: ports(&n.inputs),
                    left_bound: o.left_bound,
                    max_total_seq_len_kv: o.max_total_seq_len_kv,
                    max_total_seq_len_q: o.max_total_seq_len_q,
                    name: n.name.clone(),
                    outputs: ports(&n.outputs),
                    padding_mask: o.padding_mask.then_some(true),
                    right_bound: o.right_bound,
                    tag: match n.op {
                        OpKind::SdpaForward => Tag::SdpaFwd,
                        OpKind::SdpaBackward => Tag::SdpaBwd,
                    },
                }
            })
            .collect(),
        tensors: NamedMap(
            graph
                .tensors()
                .iter()
                .map(|t| {
                    let doc = TensorDoc {
                        data_type: t.data_type.map(Into::into),
                        dims: t.dims.clone(),
                        ragged_offset: t.ragged_offset.map(name_of),
                        strides: t.strides.clone(),
                        uid: t.uid,
                        value: t.pass_by_value.map(Into::into),
                        is_virtual: t.is_virtual,
                    };
                    (t.name.clone(), doc)
                })
                .collect(),
        ),
        version: Version,
    }
}

/// Resolves tensor references (by name or uid) of one document, with located errors.
///
/// A reference that resolves costs two hash lookups; the text is scanned for line and column
/// only when one does not (once, however many fail), so loading stays linear in the file size.
pub(crate) struct Resolver<'a> {
    text: &'a str,
    file: &'a str,
    index: OnceCell<SourceIndex>,
    names: HashMap<String, TensorId>,
    /// Uid -> the tensors that have it, with their names (for the ambiguity error).
    uids: HashMap<i64, Vec<(TensorId, String)>>,
    count: usize,
}

impl<'a> Resolver<'a> {
    /// An empty resolver for `text`, loaded from `file`.
    pub(crate) fn new(text: &'a str, file: &'a str) -> Self {
        Resolver {
            text,
            file,
            index: OnceCell::new(),
            names: HashMap::new(),
            uids: HashMap::new(),
            count: 0,
        }
    }

    /// Registers the next tensor (ids in order) under its name, extra aliases and uid. The
    /// first tensor registered under a name keeps it.
    pub(crate) fn add(&mut self, name: &str, aliases: &[&str], uid: Option<i64>) -> TensorId {
        let id = TensorId(u32::try_from(self.count).unwrap_or(u32::MAX));
        self.count += 1;
        for n in std::iter::once(name).chain(aliases.iter().copied()) {
            self.names.entry(n.to_owned()).or_insert(id);
        }
        if let Some(uid) = uid {
            self.uids
                .entry(uid)
                .or_default()
                .push((id, name.to_owned()));
        }
        id
    }

    /// The tensor `r` refers to; `path` is where the reference is, for errors.
    pub(crate) fn resolve(&self, r: &TensorRef, path: JsonPath) -> Result<TensorId, LoadError> {
        self.resolve_at(r, || path)
    }

    /// [`Resolver::resolve`] with the path made only when the reference fails (a path is a
    /// few allocations, and a large graph has hundreds of thousands of references).
    pub(crate) fn resolve_at(
        &self,
        r: &TensorRef,
        path: impl FnOnce() -> JsonPath,
    ) -> Result<TensorId, LoadError> {
        let found = match r {
            TensorRef::Name(name) => self.names.get(name.as_str()).copied(),
            TensorRef::Uid(uid) => match self.uids.get(uid).map(Vec::as_slice) {
                Some([(id, _)]) => Some(*id),
                _ => None,
            },
        };
        if let Some(id) = found {
            return Ok(id);
        }
        let path = path();
        let at = self
            .index
            .get_or_init(|| SourceIndex::new(self.text))
            .locate(&path)
            .unwrap_or_default();
        let (file, path) = (self.file.to_owned(), path.to_string());
        Err(match r {
            TensorRef::Name(name) => LoadError::UnknownTensorName {
                file,
                at,
                path,
                name: name.clone(),
            },
            TensorRef::Uid(uid) => match self.uids.get(uid) {
                Some(ids) if ids.len() > 1 => LoadError::AmbiguousUid {
                    file,
                    at,
                    path,
                    uid: *uid,
                    tensors: ids.iter().map(|(_, name)| name.clone()).collect(),
                },
                _ => LoadError::UnknownUid {
                    file,
                    at,
                    path,
                    uid: *uid,
                },
            },
        })
    }

    /// Resolves a port map found at `path`.
    fn ports(&self, map: &PortMap, path: JsonPath) -> Result<BTreeMap<Port, TensorId>, LoadError> {
        map.0
            .iter()
            .map(|(port, r)| Ok((*port, self.resolve_at(r, || path.key(port.name()))?)))
            .collect()
    }
}

/// The graph a parsed document describes. `text` and `file` serve error locations.
pub(crate) fn from_doc(doc: &GraphDoc, text: &str, file: &str) -> Result<Graph, LoadError> {
    let mut resolver = Resolver::new(text, file);
    for (name, t) in &doc.tensors.0 {
        resolver.add(name, &[], t.uid);
    }
    let ctx = &doc.context;
    let mut graph = Graph::new(Context {
        name: ctx.name.clone(),
        io_data_type: ctx.io_data_type.map(Into::into),
        intermediate_data_type: ctx.intermediate_data_type.map(Into::into),
        compute_data_type: ctx.compute_data_type.map(Into::into),
    });
    let tensors_path = JsonPath::default().key("tensors");
    for (name, t) in &doc.tensors.0 {
        let ragged_offset = match &t.ragged_offset {
            Some(r) => {
                Some(resolver.resolve_at(r, || tensors_path.key(name).key("ragged_offset"))?)
            }
            None => None,
        };
        graph.tensor(Tensor {
            name: name.clone(),
            uid: t.uid,
            dims: t.dims.clone(),
            strides: t.strides.clone(),
            data_type: t.data_type.map(Into::into),
            is_virtual: t.is_virtual,
            pass_by_value: t.value.map(Into::into),
            ragged_offset,
        });
    }
    let nodes_path = JsonPath::default().key("nodes");
    for (index, n) in doc.nodes.iter().enumerate() {
        let path = nodes_path.index(index);
        let inputs = resolver.ports(&n.inputs, path.key("inputs"))?;
        let outputs = resolver.ports(&n.outputs, path.key("outputs"))?;
        graph.add_node(Node {
            name: n.name.clone(),
            op: match n.tag {
                Tag::SdpaFwd => OpKind::SdpaForward,
                Tag::SdpaBwd => OpKind::SdpaBackward,
            },
            inputs,
            outputs,
            options: SdpaOptions {
                attn_scale: n.attn_scale.map(|s| s.0),
                left_bound: n.left_bound,
                right_bound: n.right_bound,
                diagonal_alignment: match n.diagonal_alignment {
                    None | Some(AlignmentName::TopLeft) => DiagonalAlignment::TopLeft,
                    Some(AlignmentName::BottomRight) => DiagonalAlignment::BottomRight,
                },
                padding_mask: n.padding_mask.unwrap_or(false),
                alibi_mask: n.alibi_mask.unwrap_or(false),
                dropout_probability: n.dropout_probability.map(|p| p.0),
                deterministic: n.deterministic.unwrap_or(false),
                max_total_seq_len_q: n.max_total_seq_len_q,
                max_total_seq_len_kv: n.max_total_seq_len_kv,
            },
        });
    }
    Ok(graph)
}
