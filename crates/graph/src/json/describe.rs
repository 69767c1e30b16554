//! Pointing structural errors back into the file they came from: each [`GraphError`] found by
//! [`Graph::validate`] on a loaded graph gets the JSON path and line/column of the tensor, node
//! or key at fault.

use std::collections::HashMap;

use super::error::Location;
use super::locate::{JsonPath, SourceIndex};
use crate::{shown_text, Graph, GraphError, Port};

/// Describes the structural errors of one graph loaded from one text. The text is scanned and
/// the graph's names indexed once, when it is made, so that describing every error of a large
/// invalid file takes time linear in the file, not one scan per error.
#[derive(Debug)]
pub struct Describer<'a> {
    file: &'a str,
    graph: &'a Graph,
    /// The scanned text; `None` for a graph whose errors are not located in a text.
    index: Option<SourceIndex>,
    /// Node name -> (first, last) index.
    nodes: HashMap<&'a str, (usize, usize)>,
    /// Tensor name -> index of the first tensor of that name.
    tensors: HashMap<&'a str, usize>,
}

impl<'a> Describer<'a> {
    /// Scans `text` (the file `graph` was loaded from, named `file` in messages).
    pub fn new(text: &str, file: &'a str, graph: &'a Graph) -> Describer<'a> {
        let mut nodes: HashMap<&str, (usize, usize)> = HashMap::new();
        for (i, n) in graph.nodes().iter().enumerate() {
            nodes
                .entry(n.name.as_str())
                .and_modify(|e| e.1 = i)
                .or_insert((i, i));
        }
        let mut tensors = HashMap::new();
        for (i, t) in graph.tensors().iter().enumerate() {
            tensors.entry(t.name.as_str()).or_insert(i);
        }
        Describer {
            file,
            graph,
            index: Some(SourceIndex::new(text)),
            nodes,
            tensors,
        }
    }

    /// A describer that names `file` and no place in it: for a graph read from a text whose
    /// layout is not rime's (a cuDNN frontend dump), where rime's JSON paths would point at
    /// the wrong values.
    pub fn unlocated(file: &'a str, graph: &'a Graph) -> Describer<'a> {
        Describer {
            file,
            graph,
            index: None,
            nodes: HashMap::new(),
            tensors: HashMap::new(),
        }
    }

    /// `file:line:column: at `path`: error`; without a place in the text (a graph not loaded
    /// from it), just `file: error`.
    pub fn describe(&self, error: &GraphError) -> String {
        let file = shown_text(self.file);
        match self.place(error) {
            Some((path, at)) => format!("{file}{at}: at `{path}`: {error}"),
            None => format!("{file}: {error}"),
        }
    }

    /// The JSON path the error is about and where the nearest existing part of it is.
    fn place(&self, error: &GraphError) -> Option<(JsonPath, Location)> {
        self.index.as_ref()?.locate_nearest(&self.path_of(error)?)
    }

    fn node(&self, name: &str, last: bool) -> Option<JsonPath> {
        let &(first, end) = self.nodes.get(name)?;
        let index = if last { end } else { first };
        Some(JsonPath::default().key("nodes").index(index))
    }

    fn port(&self, name: &str, port: Port) -> Option<JsonPath> {
        let &(index, _) = self.nodes.get(name)?;
        let n = self.graph.nodes().get(index)?;
        let side = if n.inputs.contains_key(&port) {
            "inputs"
        } else {
            "outputs"
        };
        Some(self.node(name, false)?.key(side).key(port.name()))
    }

    fn path_of(&self, error: &GraphError) -> Option<JsonPath> {
        use GraphError as E;
        let graph = self.graph;
        Some(match error {
            E::UnknownTensor { node, port: p, .. }
            | E::UnexpectedPort { node, port: p, .. }
            | E::ByValueOutput { node, port: p, .. }
            | E::ByValueOnBufferPort { node, port: p, .. }
            | E::MultipleWriters { node, port: p, .. }
            | E::AliasedOutput { node, port: p, .. } => self.port(node, *p)?,
            E::OverlappingOutput { tensor: t, .. } => tensor(t).key("strides"),
            E::ByValueNotScalar { tensor: t, .. } => tensor(t).key("dims"),
            E::MissingPort { node: n, .. } | E::Cycle { node: n } => self.node(n, false)?,
            E::DuplicateNodeName { name } => self.node(name, true)?,
            E::EmptyNodeName { index } => {
                JsonPath::default().key("nodes").index(*index).key("name")
            }
            E::EmptyGraph => JsonPath::default().key("nodes"),
            E::UnexpectedOption { node, option, .. } => self.node(node, false)?.key(option),
            E::UnreadVirtualOutput { tensor: t, .. } => tensor(t).key("virtual"),
            E::UnknownRaggedOffset { tensor: t, .. } => tensor(t).key("ragged_offset"),
            E::RaggedOffsetType { offsets, .. } => tensor(offsets).key("data_type"),
            E::RaggedOffsetShape { offsets, .. } => tensor(offsets).key("dims"),
            E::EmptyName { index } => tensor(&graph.tensors().get(*index)?.name),
            E::DuplicateName { name } => tensor(name),
            E::DuplicateUid { second, .. } => tensor(second).key("uid"),
            E::BadRank { tensor: t, .. }
            | E::SizeOverflow { tensor: t, .. }
            | E::ShapeMismatch { tensor: t, .. }
            | E::NotBroadcastable { tensor: t, .. } => tensor(t).key("dims"),
            E::StrideCount { tensor: t, .. } => tensor(t).key("strides"),
            E::NonPositiveDim {
                tensor: t, axis, ..
            } => tensor(t).key("dims").index(*axis),
            E::NegativeStride {
                tensor: t, axis, ..
            } => tensor(t).key("strides").index(*axis),
            E::LastStrideNotOne { tensor: t, .. } => {
                let strides = &graph.tensors().get(*self.tensors.get(t.as_str())?)?.strides;
                tensor(t)
                    .key("strides")
                    .index(strides.len().checked_sub(1)?)
            }
            E::DataTypeUnset { tensor: t, .. } => tensor(t),
            E::DataTypeNotAllowed { tensor: t, .. } | E::DataTypeMismatch { tensor: t, .. } => {
                tensor(t).key("data_type")
            }
            E::VirtualByValue { tensor: t } | E::ByValueTypeMismatch { tensor: t, .. } => {
                tensor(t).key("value")
            }
            E::VirtualWithoutProducer { tensor: t } => tensor(t).key("virtual"),
        })
    }
}

fn tensor(name: &str) -> JsonPath {
    JsonPath::default().key("tensors").key(name)
}

/// [`Describer::describe`] for a single error. To describe many errors of one graph, make one
/// [`Describer`] and reuse it: this scans the whole text each time.
pub fn describe(text: &str, file: &str, graph: &Graph, error: &GraphError) -> String {
    Describer::new(text, file, graph).describe(error)
}
