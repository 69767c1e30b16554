//! Causal, band and ALiBi masks.

use rime_graph::Port;

use super::NodeCtx;
use crate::{ReasonCode, Rejection};

pub(super) fn check(ctx: &NodeCtx<'_>, out: &mut Vec<Rejection>) {
    let o = ctx.options();
    let s = ctx.shape;
    if let Some(left) = o.left_bound.filter(|&l| l < 1) {
        out.push(
            Rejection::new(
                ReasonCode::LeftBoundTooSmall,
                ctx.subject(),
                "left_bound is below 1",
            )
            .limit("left_bound", left, ">= 1"),
        );
    }
    if let Some(right) = o.right_bound.filter(|&r| r < 0) {
        out.push(
            Rejection::new(
                ReasonCode::RightBoundNegative,
                ctx.subject(),
                "right_bound is negative",
            )
            .limit("right_bound", right, ">= 0"),
        );
    }
    let sq_over_skv = s.sq > s.skv && !o.padding_mask;
    if o.is_bottom_right() && sq_over_skv {
        out.push(
            Rejection::new(
                ReasonCode::BottomRightSqGreaterThanSkv,
                ctx.subject(),
                "bottom-right diagonal with Sq > Skv and no padding mask",
            )
            .limit("Sq", s.sq, format!("<= Skv = {}", s.skv)),
        );
    }
    if o.left_bound.is_some() && sq_over_skv {
        out.push(
            Rejection::new(
                ReasonCode::LeftBoundSqGreaterThanSkv,
                ctx.subject(),
                "sliding window (left_bound) with Sq > Skv and no padding mask",
            )
            .limit("Sq", s.sq, format!("<= Skv = {}", s.skv)),
        );
    }
    if o.is_bottom_right() {
        let with = [
            (ctx.has(Port::Bias), "a bias"),
            (o.alibi_mask, "ALiBi"),
            (ctx.has_dropout(), "dropout"),
        ];
        for (_, what) in with.iter().filter(|(on, _)| *on) {
            out.push(Rejection::new(
                ReasonCode::BottomRightCombination,
                ctx.subject(),
                format!("bottom-right diagonal combined with {what}"),
            ));
        }
    }
    if o.alibi_mask && o.right_bound != Some(0) {
        let found = o.right_bound.map_or("unset".to_owned(), |r| r.to_string());
        out.push(
            Rejection::new(
                ReasonCode::AlibiNeedsCausal,
                ctx.subject(),
                "ALiBi needs a causal mask (right_bound 0)",
            )
            .limit("right_bound", found, 0),
        );
    }
}
