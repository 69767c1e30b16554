//! Attention sink and dSink.

use rime_graph::Port;

use super::NodeCtx;
use crate::{ReasonCode, Rejection};

pub(super) fn check(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    if ctx.has(Port::DSink) && !ctx.has(Port::Sink) {
        out.push(Rejection::new(
            ReasonCode::DsinkWithoutSink,
            ctx.port(Port::DSink),
            "DSINK_TOKEN is requested but no SINK_TOKEN is bound",
        ));
    }
}
