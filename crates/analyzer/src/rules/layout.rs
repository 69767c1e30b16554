//! Packed (ragged) layout options.

use super::NodeCtx;
use crate::{ReasonCode, Rejection};

pub(super) fn check(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    let o = ctx.options();
    let totals = [
        ("max_total_seq_len_q", o.max_total_seq_len_q),
        ("max_total_seq_len_kv", o.max_total_seq_len_kv),
    ];
    if ctx.ragged_port().is_none() {
        for (name, _) in totals.iter().filter(|(_, v)| v.is_some()) {
            out.push(Rejection::new(
                ReasonCode::MaxTotalWithoutRagged,
                ctx.subject(),
                format!("{name} is set but no tensor has a ragged offset"),
            ));
        }
    }
}
