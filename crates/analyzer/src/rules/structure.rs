//! Structural problems: `Graph::validate`'s errors, each mapped to one reason code.
//!
//! The checks themselves live in rime-graph; this file is only the mapping (one place).

use rime_graph::{Graph, GraphError};

use crate::{ReasonCode, Rejection, Subject};

/// Runs `graph.validate()` and maps every error to a rejection.
pub(crate) fn check(graph: &Graph) -> Vec<Rejection> {
    match graph.validate() {
        Ok(()) => Vec::new(),
        Err(errors) => errors.0.iter().map(rejection).collect(),
    }
}

/// The reason code of a structural error.
pub fn code_of(error: &GraphError) -> ReasonCode {
    use GraphError as E;
    use ReasonCode as R;
    match error {
        E::UnknownTensor { .. } | E::UnknownRaggedOffset { .. } => R::DanglingReference,
        E::MissingPort { .. } => R::MissingPort,
        E::UnexpectedPort { .. } => R::UnexpectedPort,
        E::EmptyName { .. }
        | E::EmptyNodeName { .. }
        | E::DuplicateName { .. }
        | E::DuplicateNodeName { .. } => R::BadName,
        E::DuplicateUid { .. } => R::DuplicateUid,
        E::BadRank { .. } => R::BadRank,
        E::StrideCount { .. }
        | E::NonPositiveDim { .. }
        | E::NegativeStride { .. }
        | E::OverlappingOutput { .. } => R::BadLayout,
        E::LastStrideNotOne { .. } => R::LastStrideNotOne,
        E::SizeOverflow { .. } => R::SizeOverflow,
        E::ShapeMismatch { .. } | E::NotBroadcastable { .. } | E::RaggedOffsetShape { .. } => {
            R::ShapeMismatch
        }
        E::DataTypeUnset { .. } => R::DataTypeUnset,
        E::DataTypeNotAllowed { .. } | E::DataTypeMismatch { .. } | E::RaggedOffsetType { .. } => {
            R::DataTypeNotAllowed
        }
        E::VirtualByValue { .. }
        | E::ByValueTypeMismatch { .. }
        | E::ByValueOutput { .. }
        | E::ByValueOnBufferPort { .. }
        | E::ByValueNotScalar { .. } => R::BadByValue,
        E::VirtualWithoutProducer { .. } => R::VirtualWithoutProducer,
        E::MultipleWriters { .. } => R::MultipleWriters,
        E::AliasedOutput { .. } => R::AliasedOutput,
        E::Cycle { .. } => R::Cycle,
        E::UnreadVirtualOutput { .. } => R::UnreadVirtualOutput,
        E::UnexpectedOption { .. } => R::UnexpectedOption,
        E::EmptyGraph => R::EmptyGraph,
    }
}

fn port(node: &str, port: rime_graph::Port, tensor: Option<&str>) -> Subject {
    Subject::Port {
        node: node.to_owned(),
        port,
        tensor: tensor.map(str::to_owned),
    }
}

fn tensor(name: &str) -> Subject {
    Subject::Tensor {
        tensor: name.to_owned(),
    }
}

fn join<T: std::fmt::Debug>(items: &[T]) -> String {
    format!("{items:?}")
}

fn rejection(error: &GraphError) -> Rejection {
    use GraphError as E;
    let code = code_of(error);
    let subject = match error {
        E::UnknownTensor { node, port: p, .. } | E::MissingPort { node, port: p } => {
            port(node, *p, None)
        }
        E::UnexpectedPort { node, port: p, .. } => port(node, *p, None),
        E::ShapeMismatch {
            node,
            port: p,
            tensor: t,
            ..
        }
        | E::NotBroadcastable {
            node,
            port: p,
            tensor: t,
            ..
        }
        | E::ByValueOutput {
            node,
            port: p,
            tensor: t,
        }
        | E::ByValueOnBufferPort {
            node,
            port: p,
            tensor: t,
        }
        | E::AliasedOutput {
            node,
            port: p,
            tensor: t,
        }
        | E::OverlappingOutput {
            node,
            port: p,
            tensor: t,
            ..
        } => port(node, *p, Some(t)),
        E::MultipleWriters {
            tensor: t,
            node,
            port: p,
        }
        | E::UnreadVirtualOutput {
            node,
            port: p,
            tensor: t,
        } => port(node, *p, Some(t)),
        E::UnknownRaggedOffset { tensor: t, .. }
        | E::RaggedOffsetType { tensor: t, .. }
        | E::RaggedOffsetShape { tensor: t, .. }
        | E::DuplicateName { name: t }
        | E::BadRank { tensor: t, .. }
        | E::StrideCount { tensor: t, .. }
        | E::NonPositiveDim { tensor: t, .. }
        | E::NegativeStride { tensor: t, .. }
        | E::LastStrideNotOne { tensor: t, .. }
        | E::SizeOverflow { tensor: t, .. }
        | E::DataTypeUnset { tensor: t, .. }
        | E::DataTypeNotAllowed { tensor: t, .. }
        | E::DataTypeMismatch { tensor: t, .. }
        | E::VirtualByValue { tensor: t }
        | E::ByValueTypeMismatch { tensor: t, .. }
        | E::ByValueNotScalar { tensor: t, .. }
        | E::VirtualWithoutProducer { tensor: t }
        | E::DuplicateUid { second: t, .. } => tensor(t),
        E::DuplicateNodeName { name }
        | E::Cycle { node: name }
        | E::UnexpectedOption { node: name, .. } => Subject::Node { node: name.clone() },
        E::EmptyName { .. } | E::EmptyNodeName { .. } | E::EmptyGraph => Subject::Graph,
    };
    let r = Rejection::new(code, subject, error.to_string());
    match error {
        E::BadRank {
            found, expected, ..
        } => r.limit("rank", found, expected),
        E::LastStrideNotOne { found, .. } => r.limit("last-dim stride", found, 1),
        E::NonPositiveDim { value, .. } => r.limit("dim", value, ">= 1"),
        E::NegativeStride { value, .. } => r.limit("stride", value, ">= 0"),
        E::OverlappingOutput { strides, .. } => r.limit(
            "strides",
            join(strides),
            "each above the span of the smaller ones",
        ),
        E::ByValueNotScalar { dims, .. } => r.limit("dims", join(dims), "all 1"),
        E::ShapeMismatch {
            found, expected, ..
        } => r.limit("dims", join(found), join(expected)),
        E::NotBroadcastable { found, full, .. } => r.limit(
            "dims",
            join(found),
            format!("each 1 or equal to {}", join(full)),
        ),
        E::DataTypeNotAllowed { found, allowed, .. }
        | E::RaggedOffsetType { found, allowed, .. } => {
            let allowed: Vec<&str> = allowed.iter().map(|d| d.name()).collect();
            r.limit("data type", found, allowed.join(" | "))
        }
        E::RaggedOffsetShape {
            found, expected, ..
        } => r.limit("dims", join(found), join(expected)),
        E::DataTypeMismatch {
            found, expected, ..
        } => r.limit("data type", found, expected),
        _ => r,
    }
}
