//! Bias and dBias (the engine-specific bias rules live in the engine surfaces).

use rime_graph::Port;

use super::NodeCtx;
use crate::{ReasonCode, Rejection};

pub(super) fn check(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    if ctx.has(Port::DBias) && !ctx.has(Port::Bias) {
        out.push(Rejection::new(
            ReasonCode::DbiasWithoutBias,
            ctx.port(Port::DBias),
            "dBias is requested but no Bias is bound",
        ));
    }
}
