//! Dropout: probability, mask, and their companion ports.

use rime_graph::Port;

use super::NodeCtx;
use crate::{ReasonCode, Rejection};

pub(super) fn check(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    let p = ctx.options().dropout_probability;
    if let Some(p) = p.filter(|p| !(0.0..1.0).contains(p)) {
        out.push(
            Rejection::new(
                ReasonCode::DropoutProbabilityInvalid,
                ctx.subject(),
                format!("dropout probability {p} is outside [0, 1)"),
            )
            .limit("dropout_probability", p, "[0, 1)"),
        );
    }
    let mask = ctx.has(Port::DropoutMask);
    if p.is_some() && mask {
        out.push(Rejection::new(
            ReasonCode::DropoutTwice,
            ctx.port(Port::DropoutMask),
            "both a dropout probability and a Dropout_mask are given",
        ));
    }
    let mut needed = Vec::new();
    if p.is_some() {
        needed.extend([Port::Seed, Port::Offset]);
    }
    if mask {
        needed.push(Port::DropoutScale);
        if ctx.is_backward() {
            needed.push(Port::DropoutScaleInv);
        }
    }
    for port in needed.into_iter().filter(|&port| !ctx.has(port)) {
        out.push(Rejection::new(
            ReasonCode::DropoutPortsMissing,
            ctx.port(port),
            format!("dropout needs {port}, which is not bound"),
        ));
    }
    if ctx.has(Port::RngDump) && p.is_none() {
        out.push(Rejection::new(
            ReasonCode::RngDumpWithoutDropout,
            ctx.port(Port::RngDump),
            "RNG_DUMP is requested without a dropout probability",
        ));
    }
}
