//! Packed (ragged, THD) layouts: the token totals, and which tensors may be packed.

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
    for (name, total) in totals {
        if let Some(total) = total.filter(|&t| t < 0) {
            out.push(
                Rejection::new(
                    ReasonCode::MaxTotalNegative,
                    ctx.subject(),
                    format!("{name} is {total}, a negative token count"),
                )
                .limit(name, total.to_string(), ">= 0"),
            );
        }
    }
    for port in ctx.ragged_ports().filter(|p| p.token_sequence().is_some()) {
        let Some(t) = ctx.tensor(port) else { continue };
        if let Some((stride, token)) = token_stride_and_span(&t.dims, &t.strides) {
            if stride < token {
                out.push(
                    Rejection::new(
                        ReasonCode::RaggedNotTokenMajor,
                        ctx.port(port),
                        format!(
                            "{port} is ragged with strides {:?}: its token stride {stride} is \
                             smaller than one token's span of {token} elements",
                            t.strides
                        ),
                    )
                    .limit(
                        format!("{port} token (dim 2) stride"),
                        stride,
                        format!(">= {token}"),
                    ),
                );
            }
        }
    }
    for port in ctx.ragged_ports().filter(|p| p.token_sequence().is_none()) {
        out.push(Rejection::new(
            ReasonCode::RaggedOffsetOnDensePort,
            ctx.port(port),
            format!(
                "{port} has a ragged offset; only Q, K, V, O, dO, Stats, dQ, dK and dV may be \
                 packed"
            ),
        ));
    }
}

/// The token (dim 2) stride of a rank-4 ragged tensor and the elements one token spans
/// (1 + (H - 1) x head stride + (D - 1) x dim stride), when the sequence dim has more than one
/// token (a single token has no stride to check); `None` for other ranks, negative values or
/// an overflow (structural rules report those).
fn token_stride_and_span(dims: &[i64], strides: &[i64]) -> Option<(i64, i64)> {
    let (&[_, h, s, d], &[_, sh, ss, sd]) = (dims, strides) else {
        return None;
    };
    if s <= 1 || [h, d, sh, ss, sd].iter().any(|&x| x < 0) {
        return None;
    }
    let reach = |n: i64, stride: i64| n.checked_sub(1)?.checked_mul(stride);
    let span = reach(h, sh)?.checked_add(reach(d, sd)?)?.checked_add(1)?;
    Some((ss, span))
}
