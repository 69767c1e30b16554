//! Undoing what the frontend's lowering does to the graph it dumps.
//!
//! `build_operation_graph` (and so `build_plans`) expands each SDPA node in place, and a dump
//! taken after it shows the result:
//! - K (backward: K and V; forward: K, unless the unified engine serves the node) is rewritten
//!   from the user's (B, H, S, D) to the backend's (B, H, D, S) by swapping the last two dims
//!   and strides. Same memory, transposed description: stride 1 moves to the S axis.
//! - A scale given by value (`attn_scale_value`) also becomes an `Attn_scale` input, a
//!   by-value FLOAT tensor holding the same value.
//! - A dropout probability p also becomes `Dropout_scale` = 1/(1-p) and (backward)
//!   `Dropout_scale_inv` = 1-p inputs, by-value FLOAT tensors.
//! - With cuDNN 9.15 and older, a backward node whose Skv is not a multiple of 128 and that has
//!   no padding mask gets one already in `validate()`: `padding_mask` set, and `SEQ_LEN_Q` /
//!   `SEQ_LEN_KV` bound to tensors named `workaround_padding_mask_seq_len_q` / `_kv` that the
//!   frontend fills with the full lengths. Masking nothing, it is no padding at all.
//!
//! Read as written, such a graph means something else to rime (K of the wrong shape, a scale
//! and a dropout mask given twice), so the reader puts back the user's graph: the math is the
//! same, element for element. A dump taken before lowering passes through unchanged.

use std::collections::BTreeSet;

use crate::{Node, OpKind, Port, Scalar, Tensor, TensorId};

/// The ports whose tensor a node's lowering rewrites to (B, H, D, S), with the port whose
/// last dim is that tensor's head dim (so that an S == D tensor is told apart by its strides).
pub(super) fn transposed_ports(op: OpKind, unified: bool) -> &'static [(Port, Port)] {
    match op {
        OpKind::SdpaBackward => &[(Port::K, Port::Q), (Port::V, Port::O)],
        OpKind::SdpaForward if unified => &[],
        OpKind::SdpaForward => &[(Port::K, Port::Q)],
    }
}

/// Two values the frontend wrote for one thing, and they differ: the dump is ambiguous.
#[derive(Debug, PartialEq)]
pub(super) struct Conflict {
    /// Index of the node.
    pub(super) node: usize,
    /// The option key of the node the conflict is about.
    pub(super) key: &'static str,
    /// What differs.
    pub(super) message: String,
}

/// True when `t` is in the lowered (B, H, D, S) layout: stride 1 on the third axis and not on
/// the last, and the third axis as long as the head dim `d`. A tensor in the user's layout has
/// stride 1 on its last axis (a layout rime requires of attention operands), so the two are
/// never confused for a graph rime can read.
fn is_lowered(t: &Tensor, d: i64) -> bool {
    matches!((t.dims.as_slice(), t.strides.as_slice()),
        ([_, _, third, _], [_, _, 1, last]) if *third == d && *last != 1)
}

/// True when `node`'s `port` is bound to a by-value f32 equal (bit for bit) to `value`.
fn by_value_equal(tensors: &[Tensor], node: &Node, port: Port, value: f32) -> bool {
    node.input(port)
        .and_then(|id| tensors.get(id.index()))
        .is_some_and(
            |t| matches!(t.pass_by_value, Some(Scalar::F32(v)) if v.to_bits() == value.to_bits()),
        )
}

/// The names the frontend gives the sequence lengths of its padding-mask workaround.
const WORKAROUND_SEQ_LEN_Q: &str = "workaround_padding_mask_seq_len_q";
const WORKAROUND_SEQ_LEN_KV: &str = "workaround_padding_mask_seq_len_kv";

/// True when `name` is `label`, or what the reader makes of `label` shared by several tensors
/// (`label#uid`).
fn is_named(name: &str, label: &str) -> bool {
    name.strip_prefix(label)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('#'))
}

fn id(index: usize) -> TensorId {
    TensorId(u32::try_from(index).unwrap_or(u32::MAX))
}

/// The user's graph for a dump's `tensors` and `nodes` (ids are indices into `tensors`);
/// `transposes[i]` is [`transposed_ports`] of node i. Tensors only the lowering added are
/// dropped, and ids renumbered accordingly.
///
/// # Errors
/// A [`Conflict`] when a node's `attn_scale_value` and its by-value `Attn_scale` tensor hold
/// different values.
pub(super) fn undo(
    mut tensors: Vec<Tensor>,
    mut nodes: Vec<Node>,
    transposes: &[&[(Port, Port)]],
) -> Result<(Vec<Tensor>, Vec<Node>), Conflict> {
    // K / V back to (B, H, S, D).
    let mut lowered = BTreeSet::new();
    for (node, ports) in nodes.iter().zip(transposes) {
        for &(port, head_dim_of) in ports.iter() {
            let d = node
                .port(head_dim_of)
                .and_then(|r| tensors.get(r.index()))
                .and_then(|r| r.dims.get(3).copied());
            if let (Some(t), Some(d)) = (node.input(port), d) {
                if tensors.get(t.index()).is_some_and(|t| is_lowered(t, d)) {
                    lowered.insert(t.index());
                }
            }
        }
    }
    for &i in &lowered {
        tensors[i].dims.swap(2, 3);
        tensors[i].strides.swap(2, 3);
    }

    // By-value tensors standing for a node option.
    let mut dropped = BTreeSet::new();
    for (index, node) in nodes.iter_mut().enumerate() {
        let mut artifacts = Vec::new();
        if let (Some(scale), Some(t)) = (node.options.attn_scale, node.input(Port::AttnScale)) {
            match tensors.get(t.index()).and_then(|t| t.pass_by_value) {
                Some(Scalar::F32(v)) if v.to_bits() == scale.to_bits() => {
                    artifacts.push(Port::AttnScale);
                }
                Some(other) => {
                    return Err(Conflict {
                        node: index,
                        key: "attn_scale_value",
                        message: format!(
                            "attn_scale_value is {scale} but the Attn_scale tensor holds {}",
                            other.as_f64()
                        ),
                    })
                }
                // A scale tensor without a value is the user's: both stay (rime's analyzer
                // says what it makes of a scale given twice).
                None => {}
            }
        }
        if let Some(p) = node.options.dropout_probability {
            if node.input(Port::DropoutMask).is_none() {
                for (port, value) in [
                    (Port::DropoutScale, 1.0 / (1.0 - p)),
                    (Port::DropoutScaleInv, 1.0 - p),
                ] {
                    if by_value_equal(&tensors, node, port, value) {
                        artifacts.push(port);
                    }
                }
            }
        }
        if node.options.padding_mask
            && [
                (Port::SeqLenQ, WORKAROUND_SEQ_LEN_Q),
                (Port::SeqLenKv, WORKAROUND_SEQ_LEN_KV),
            ]
            .iter()
            .all(|&(port, marker)| {
                node.input(port)
                    .and_then(|t| tensors.get(t.index()))
                    .is_some_and(|t| is_named(&t.name, marker))
            })
        {
            node.options.padding_mask = false;
            artifacts.extend([Port::SeqLenQ, Port::SeqLenKv]);
        }
        for port in artifacts {
            if let Some(t) = node.inputs.remove(&port) {
                dropped.insert(t.index());
            }
        }
    }
    let mut used: BTreeSet<usize> = nodes
        .iter()
        .flat_map(|n| n.inputs.values().chain(n.outputs.values()))
        .map(|t| t.index())
        .collect();
    used.extend(
        tensors
            .iter()
            .filter_map(|t| t.ragged_offset.map(TensorId::index)),
    );
    let keep: Vec<bool> = (0..tensors.len())
        .map(|i| !dropped.contains(&i) || used.contains(&i))
        .collect();
    if keep.iter().all(|k| *k) {
        return Ok((tensors, nodes));
    }

    // Renumber.
    let mut new_id = Vec::with_capacity(tensors.len());
    let mut next = 0;
    for k in &keep {
        new_id.push(k.then(|| id(next)));
        next += usize::from(*k);
    }
    let remap = |t: TensorId| new_id.get(t.index()).copied().flatten().unwrap_or(t);
    let tensors = tensors
        .into_iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(mut t, _)| {
            t.ragged_offset = t.ragged_offset.map(remap);
            t
        })
        .collect();
    for n in &mut nodes {
        for t in n.inputs.values_mut().chain(n.outputs.values_mut()) {
            *t = remap(*t);
        }
    }
    Ok((tensors, nodes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SdpaOptions;

    /// Element (b, h, s, d) of a tensor lives at the same offset before and after lowering:
    /// the rewrite and its undoing do not change what is read.
    #[test]
    fn lowering_and_undoing_keep_every_element_in_place() {
        let offset = |strides: &[i64], idx: [i64; 4]| -> i64 {
            strides.iter().zip(idx).map(|(s, i)| s * i).sum()
        };
        // BHSD, BSHD and a padded-row layout of (B, H, S, D) = (2, 3, 5, 4).
        for strides in [[60, 20, 4, 1], [60, 4, 12, 1], [96, 32, 6, 1]] {
            let user = Tensor::new("K", &[2, 3, 5, 4], &strides);
            let mut low = user.clone();
            low.dims.swap(2, 3);
            low.strides.swap(2, 3);
            assert!(is_lowered(&low, 4) && !is_lowered(&user, 4));
            for idx in (0..2).flat_map(|b| {
                (0..3)
                    .flat_map(move |h| (0..5).flat_map(move |s| (0..4).map(move |d| [b, h, s, d])))
            }) {
                let [b, h, s, d] = idx;
                assert_eq!(
                    offset(&user.strides, idx),
                    offset(&low.strides, [b, h, d, s])
                );
            }
            let q = Tensor::new("Q", &[2, 3, 7, 4], &[84, 28, 4, 1]);
            let node = Node {
                name: "bwd".to_owned(),
                op: OpKind::SdpaBackward,
                inputs: [(Port::Q, id(0)), (Port::K, id(1))].into(),
                outputs: Default::default(),
                options: SdpaOptions::default(),
            };
            let (back, _) = undo(
                vec![q, low],
                vec![node],
                &[transposed_ports(OpKind::SdpaBackward, false)],
            )
            .expect("no conflict");
            assert_eq!(back[1], user);
        }
    }

    #[test]
    fn the_padding_workaround_is_no_padding() {
        let seq =
            |name: &str| Tensor::packed(name, &[1, 1, 1, 1]).with_data_type(crate::DataType::I32);
        let node = Node {
            name: "bwd".to_owned(),
            op: OpKind::SdpaBackward,
            inputs: [(Port::SeqLenQ, id(0)), (Port::SeqLenKv, id(1))].into(),
            outputs: Default::default(),
            options: SdpaOptions {
                padding_mask: true,
                ..SdpaOptions::default()
            },
        };
        let (t, n) = undo(
            vec![
                seq("workaround_padding_mask_seq_len_q#3"),
                seq(WORKAROUND_SEQ_LEN_KV),
            ],
            vec![node.clone()],
            &[&[]],
        )
        .expect("no conflict");
        assert!(t.is_empty() && n[0].inputs.is_empty() && !n[0].options.padding_mask);
        let (t, n) = undo(
            vec![seq("seq_q"), seq(WORKAROUND_SEQ_LEN_KV)],
            vec![node],
            &[&[]],
        )
        .expect("no conflict");
        assert!(
            t.len() == 2 && n[0].options.padding_mask,
            "the user's padding stays"
        );
    }

    #[test]
    fn scale_artifacts_are_dropped_and_conflicts_refused() {
        let node = |scale: f32, port: bool| Node {
            name: "bwd".to_owned(),
            op: OpKind::SdpaBackward,
            inputs: if port {
                [(Port::AttnScale, id(1)), (Port::Q, id(0))].into()
            } else {
                [(Port::Q, id(0))].into()
            },
            outputs: Default::default(),
            options: SdpaOptions {
                attn_scale: Some(scale),
                ..SdpaOptions::default()
            },
        };
        let tensors = || {
            vec![
                Tensor::new("Q", &[1, 1, 4, 4], &[16, 16, 4, 1]),
                Tensor::scalar_f32("#9", 0.125),
            ]
        };
        let (t, n) = undo(tensors(), vec![node(0.125, true)], &[&[]]).expect("same value");
        assert_eq!((t.len(), n[0].inputs.len()), (1, 1));
        let err = undo(tensors(), vec![node(0.25, true)], &[&[]]).expect_err("two values");
        assert_eq!(err.key, "attn_scale_value");
        let (t, _) = undo(tensors(), vec![node(0.125, false)], &[&[]]).expect("unbound tensor");
        assert_eq!(t.len(), 2, "a tensor no lowering added stays");
    }
}
