//! The graph context's data types.

use super::NodeCtx;
use crate::{ReasonCode, Rejection, Subject};

pub(super) fn check(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    if ctx.graph.context.intermediate_data_type.is_none() {
        out.push(
            Rejection::new(
                ReasonCode::IntermediateTypeUnset,
                Subject::Graph,
                "the context's intermediate data type is not set",
            )
            .limit("intermediate data type", "unset", "f32"),
        );
    }
}
