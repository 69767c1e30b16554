//! Pointing structural errors back into the file they came from: each [`GraphError`] found by
//! [`Graph::validate`] on a loaded graph gets the JSON path and line/column of the tensor, node
//! or key at fault.

use super::error::Location;
use super::locate::{locate_nearest, JsonPath};
use crate::{Graph, GraphError, Port};

/// `file:line:column: at `path`: error` for a structural error of a graph loaded from `text`.
/// Without a place in the text (a graph not loaded from it), just `file: error`.
pub fn describe(text: &str, file: &str, graph: &Graph, error: &GraphError) -> String {
    match place(text, graph, error) {
        Some((path, at)) => format!("{file}{at}: at `{path}`: {error}"),
        None => format!("{file}: {error}"),
    }
}

/// The JSON path the error is about and where the nearest existing part of it is in `text`.
fn place(text: &str, graph: &Graph, error: &GraphError) -> Option<(JsonPath, Location)> {
    locate_nearest(text, &path_of(graph, error)?)
}

fn tensor(name: &str) -> JsonPath {
    JsonPath::default().key("tensors").key(name)
}

fn node(graph: &Graph, name: &str, last: bool) -> Option<JsonPath> {
    let mut ids = graph
        .nodes()
        .iter()
        .enumerate()
        .filter(|(_, n)| n.name == name);
    let index = if last { ids.next_back() } else { ids.next() }?.0;
    Some(JsonPath::default().key("nodes").index(index))
}

fn port(graph: &Graph, name: &str, port: Port) -> Option<JsonPath> {
    let path = node(graph, name, false)?;
    let n = graph.nodes().get(path_index(&path)?)?;
    let side = if n.inputs.contains_key(&port) {
        "inputs"
    } else {
        "outputs"
    };
    Some(path.key(side).key(port.name()))
}

fn path_index(path: &JsonPath) -> Option<usize> {
    match path.0.last()? {
        super::locate::Seg::Index(i) => Some(*i),
        super::locate::Seg::Key(_) => None,
    }
}

fn path_of(graph: &Graph, error: &GraphError) -> Option<JsonPath> {
    use GraphError as E;
    Some(match error {
        E::UnknownTensor { node, port: p, .. }
        | E::UnexpectedPort { node, port: p, .. }
        | E::ByValueOutput { node, port: p, .. }
        | E::MultipleWriters { node, port: p, .. }
        | E::AliasedOutput { node, port: p, .. } => port(graph, node, *p)?,
        E::OverlappingOutput { tensor: t, .. } => tensor(t).key("strides"),
        E::ByValueNotScalar { tensor: t, .. } => tensor(t).key("dims"),
        E::MissingPort { node: n, .. } | E::Cycle { node: n } => node(graph, n, false)?,
        E::DuplicateNodeName { name } => node(graph, name, true)?,
        E::UnknownRaggedOffset { tensor: t, .. } => tensor(t).key("ragged_offset"),
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
            let id = graph.find(t)?;
            let last = graph.get(id)?.strides.len().checked_sub(1)?;
            tensor(t).key("strides").index(last)
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
