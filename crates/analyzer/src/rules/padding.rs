//! Padding masks and their sequence-length tensors.

use rime_graph::Port;

use super::NodeCtx;
use crate::{ReasonCode, Rejection};

pub(super) fn check(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    let padding = ctx.options().padding_mask;
    for port in [Port::SeqLenQ, Port::SeqLenKv] {
        match (padding, ctx.has(port)) {
            (true, false) => out.push(Rejection::new(
                ReasonCode::PaddingWithoutSeqLen,
                ctx.port(port),
                format!("padding_mask is on but {port} is not bound"),
            )),
            (false, true) => out.push(Rejection::new(
                ReasonCode::SeqLenWithoutPadding,
                ctx.port(port),
                format!("{port} is bound but padding_mask is off"),
            )),
            _ => {}
        }
    }
}
