//! Head counts (grouped-query attention) and degenerate sequence lengths.

use rime_graph::Port;

use super::NodeCtx;
use crate::{ReasonCode, Rejection};

pub(super) fn check(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    let s = ctx.shape;
    for (port, heads) in [(Port::K, s.hk), (Port::V, s.hv)] {
        if heads > 0 && s.hq % heads != 0 {
            out.push(
                Rejection::new(
                    ReasonCode::HeadsNotDivisible,
                    ctx.port(port),
                    format!("Hq = {} is not a multiple of {port}'s {heads} heads", s.hq),
                )
                .limit(
                    format!("{port} heads"),
                    heads,
                    format!("a divisor of Hq = {}", s.hq),
                ),
            );
        }
    }
    if s.sq == 1 && s.skv == 1 {
        out.push(
            Rejection::new(
                ReasonCode::SingleTokenUnsupported,
                ctx.subject(),
                "Sq = Skv = 1 is not supported",
            )
            .limit("(Sq, Skv)", "(1, 1)", "Sq > 1 or Skv > 1"),
        );
    }
}
