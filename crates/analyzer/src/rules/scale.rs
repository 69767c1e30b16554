//! The attention scale: given once, and finite.

use rime_graph::Port;

use super::NodeCtx;
use crate::{ReasonCode, Rejection};

pub(super) fn check(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    let value = ctx.options().attn_scale;
    let tensor = ctx.tensor(Port::AttnScale);
    if value.is_some() && tensor.is_some() {
        out.push(Rejection::new(
            ReasonCode::ScaleSetTwice,
            ctx.port(Port::AttnScale),
            "attn_scale is set as an option and bound as a tensor",
        ));
    }
    let by_value = tensor.and_then(|t| t.pass_by_value).map(|v| v.as_f64());
    for scale in value.map(f64::from).into_iter().chain(by_value) {
        if !scale.is_finite() {
            out.push(
                Rejection::new(
                    ReasonCode::ScaleNotFinite,
                    ctx.subject(),
                    format!("attention scale {scale} is not finite"),
                )
                .limit("attn_scale", scale, "a finite number"),
            );
        }
    }
}
