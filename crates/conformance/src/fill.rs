//! Input data for a case's graph: every input tensor of a node as a host buffer of its graph
//! type — Q, K, V, dO (and O, Bias when they are inputs) seeded random in [-1, 1), Stats around
//! ln(Skv) as a forward gives, Sink around ln(Skv) too (so that it weighs about as much as all
//! the keys together, and O, Stats and dSink depend on it visibly), the padding lengths of the
//! spec, or a bias computed from its index — reproducible from a seed, and in parallel (a bias
//! can be gigabytes). A ragged (THD) tensor's buffer holds its real tokens' values with NaN in
//! every gap (a kernel that reads one poisons its results), and its offsets tensor the offsets
//! the spec laid out. With a padding mask, a padded tensor's rows past its batch's length (and a
//! bias's elements that no batch it serves keeps) are NaN too: callers leave them
//! uninitialised, and a kernel that multiplies one by a masked 0 gets NaN, not 0.

use half::{bf16, f16};
use rayon::prelude::*;
use rime_engines::HostBuffer;
use rime_graph::{DataType, NodeId, Port, Sequence, Tensor, TensorId};

use crate::exec::POISON_BYTE;
use crate::spec::{CaseGraph, CaseSpec};

/// How the harness fills what a case's graph reads.
#[derive(Debug, Clone, Copy)]
pub struct Fills {
    /// Seed of the random values (each tensor adds its position).
    pub seed: u64,
    /// The bias value at `[b, h, i, j]` (default: random).
    pub bias: Option<fn([usize; 4]) -> f64>,
    /// Every head's sink logit (default: random around ln(Skv)).
    pub sink: Option<f64>,
}

impl Fills {
    /// Random everything from `seed`.
    pub fn random(seed: u64) -> Self {
        Self {
            seed,
            bias: None,
            sink: None,
        }
    }
}

/// `n` values in [-1, 1) from `seed` (xorshift64 per 64 Ki chunk, so chunks run in parallel);
/// with `center`, `center + u / 2` instead.
pub fn random(n: usize, seed: u64, center: Option<f64>) -> Vec<f64> {
    const CHUNK: usize = 1 << 16;
    let mut v = vec![0.0; n];
    v.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
        let mut x = (seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .wrapping_mul(0x2545_f491_4f6c_dd1d)
            | 1;
        for e in chunk {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
            *e = center.map_or(u, |c| c + 0.5 * u);
        }
    });
    v
}

/// `values` as a host buffer of `data_type`, in parallel for the 16-bit types.
pub fn host(data_type: DataType, values: &[f64]) -> Option<HostBuffer> {
    Some(match data_type {
        DataType::Bf16 => HostBuffer::Bf16(values.par_iter().map(|&x| bf16::from_f64(x)).collect()),
        DataType::F16 => HostBuffer::F16(values.par_iter().map(|&x| f16::from_f64(x)).collect()),
        other => HostBuffer::from_f64(other, values)?,
    })
}

/// The buffer of input tensor `name` (`id`) of a case, sized to its strided span.
fn input(
    spec: &CaseSpec,
    g: &CaseGraph,
    name: &str,
    id: TensorId,
    fills: &Fills,
    salt: u64,
) -> Option<HostBuffer> {
    if let Some(offsets) = g.offsets_values(id) {
        let values: Vec<f64> = offsets.iter().map(|&x| x as f64).collect();
        return host(g.graph.data_type(id)?, &values);
    }
    let len = g.buffer_len(id)?;
    let seed = fills.seed.wrapping_mul(0x1_0000).wrapping_add(salt * 7919);
    let around_ln_skv = || random(len, seed, Some((spec.skv.max(1) as f64).ln()));
    let values: Vec<f64> = match name {
        "Stats" => around_ln_skv(),
        "SEQ_LEN_Q" => spec.padding.as_ref()?.0.iter().map(|&x| x as f64).collect(),
        "SEQ_LEN_KV" => spec.padding.as_ref()?.1.iter().map(|&x| x as f64).collect(),
        "Bias" => match (fills.bias, spec.bias_dims()) {
            (Some(f), Some([_, bh, sq, skv])) => (0..len)
                .map(|i| {
                    f([
                        i / (bh * sq * skv),
                        i / (sq * skv) % bh,
                        i / skv % sq,
                        i % skv,
                    ])
                })
                .collect(),
            _ => random(len, seed, None),
        },
        "Sink" => fills.sink.map_or_else(around_ln_skv, |v| vec![v; len]),
        _ => random(len, seed, None),
    };
    let values = match g.ragged_of(id) {
        Some(r) => r
            .real_mask()
            .iter()
            .zip(values)
            .map(|(&real, x)| if real { x } else { f64::NAN })
            .collect(),
        None => {
            let mut values = values;
            for e in past_lengths(spec, g.graph.get(id)?, name) {
                if let Some(x) = values.get_mut(e) {
                    *x = f64::NAN;
                }
            }
            values
        }
    };
    host(g.graph.data_type(id)?, &values)
}

/// The elements of padded token tensor `name` (`t`) past the padding mask's length of their
/// batch (Q, O, dO and Stats: rows i >= q_len; K and V: rows j >= kv_len), or of a bias the
/// (i, j) past either length of every batch it serves (a broadcast bias: of the longest); none
/// without a padding mask.
fn past_lengths(spec: &CaseSpec, t: &Tensor, name: &str) -> Vec<usize> {
    let Some((q_lens, kv_lens)) = &spec.padding else {
        return Vec::new();
    };
    // The spec names each tensor after its port.
    let side = match Port::from_name(name) {
        Some(Port::Bias) => None,
        Some(port) if port.token_sequence().is_some() => port.token_sequence(),
        _ => return Vec::new(),
    };
    let size = |i: usize| t.dims.get(i).and_then(|&x| usize::try_from(x).ok());
    let stride = |i: usize| t.strides.get(i).and_then(|&x| usize::try_from(x).ok());
    let (Some(dims), Some(strides)) = (
        (0..4).map(size).collect::<Option<Vec<_>>>(),
        (0..4).map(stride).collect::<Option<Vec<_>>>(),
    ) else {
        return Vec::new();
    };
    let longest = |lens: &[usize]| lens.iter().copied().max().unwrap_or(0);
    let mut out = Vec::new();
    for b in 0..dims[0] {
        // A bias of batch dim 1 serves every batch.
        let lens = |l: &[usize]| {
            if dims[0] == 1 && spec.b > 1 {
                longest(l)
            } else {
                l.get(b).copied().unwrap_or(0)
            }
        };
        let (ql, kvl) = (lens(q_lens), lens(kv_lens));
        for h in 0..dims[1] {
            for r in 0..dims[2] {
                for c in 0..dims[3] {
                    let padding = match side {
                        Some(Sequence::Q) => r >= ql,
                        Some(Sequence::Kv) => r >= kvl,
                        None => r >= ql || c >= kvl,
                    };
                    if padding {
                        out.push(b * strides[0] + h * strides[1] + r * strides[2] + c * strides[3]);
                    }
                }
            }
        }
    }
    out
}

/// Host buffers for every input of `node` that is not produced by another node of the graph
/// (and is not passed by value), and the offsets tensors of its ragged tensors, keyed by
/// tensor.
pub fn node_inputs(
    spec: &CaseSpec,
    g: &CaseGraph,
    node: NodeId,
    fills: &Fills,
) -> Option<Vec<(TensorId, HostBuffer)>> {
    let n = g.graph.node(node)?;
    let produced = |id: TensorId| {
        g.graph
            .nodes()
            .iter()
            .any(|m| m.outputs.values().any(|&o| o == id))
    };
    let mut out = Vec::new();
    for &id in n.inputs.values() {
        let t = g.graph.get(id)?;
        if t.pass_by_value.is_some() || produced(id) {
            continue;
        }
        let salt = g.ids.iter().position(|(_, t)| *t == id)? as u64;
        out.push((id, input(spec, g, g.name_of(id), id, fills, salt)?));
    }
    // The offsets of the node's ragged tensors (outputs' included) are inputs of its plan too,
    // though no port names them.
    for &id in n.inputs.values().chain(n.outputs.values()) {
        let Some(offsets) = g.graph.get(id)?.ragged_offset else {
            continue;
        };
        if out.iter().all(|(t, _)| *t != offsets) {
            out.push((
                offsets,
                input(spec, g, g.name_of(offsets), offsets, fills, 0)?,
            ));
        }
    }
    Some(out)
}

/// A buffer for output `id` (a ragged one's whole buffer, gaps included): every byte
/// [`POISON_BYTE`], NaN in every float type (unwritten elements show), and the very bytes the
/// device runs poison theirs with, so that one check finds elements written outside real tokens.
pub fn poisoned(g: &CaseGraph, id: TensorId) -> Option<HostBuffer> {
    poison(g.graph.data_type(id)?, g.buffer_len(id)?)
}

/// `len` elements of `data_type` with every byte [`POISON_BYTE`].
pub fn poison(data_type: DataType, len: usize) -> Option<HostBuffer> {
    HostBuffer::from_le_bytes(
        data_type,
        &vec![POISON_BYTE; len.checked_mul(data_type.size_bytes())?],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_reproducible_in_range_and_seeded() {
        let a = random(200_000, 3, None);
        assert_eq!(a, random(200_000, 3, None));
        assert_ne!(a, random(200_000, 4, None));
        assert!(a.iter().all(|x| (-1.0..1.0).contains(x)));
        let s = random(1000, 3, Some(5.0));
        assert!(s.iter().all(|x| (4.5..5.5).contains(x)));
    }

    #[test]
    fn every_backward_input_gets_a_buffer_of_its_span() {
        let mut spec = CaseSpec::new(2, 4, 2, 17, 9, 64);
        spec.padding = Some((vec![17, 3], vec![9, 0]));
        let g = spec.backward_graph().expect("graph");
        let inputs =
            node_inputs(&spec, &g, g.backward.expect("node"), &Fills::random(1)).expect("inputs");
        assert_eq!(inputs.len(), 8); // Q K V O dO Stats and the two lengths
        for (id, h) in &inputs {
            let span = g
                .graph
                .get(*id)
                .and_then(|t| t.span_elements())
                .expect("span");
            assert_eq!(rime_engines::Buffer::len(h) as u64, span);
        }
        // Batch 1's padding is NaN: Q rows 3..17 of 4 heads, every K row of 2 heads.
        let nans = |name: &str| {
            let id = g.id(name).expect("tensor");
            let h = &inputs.iter().find(|(t, _)| *t == id).expect("input").1;
            h.to_f64().iter().filter(|x| x.is_nan()).count()
        };
        assert_eq!(nans("Q"), 14 * 4 * 64);
        assert_eq!(nans("dO"), 14 * 4 * 64);
        assert_eq!(nans("Stats"), 14 * 4);
        assert_eq!(nans("K"), 9 * 2 * 64);
        let kv = g.id("SEQ_LEN_KV").expect("lengths");
        let lens = inputs.iter().find(|(id, _)| *id == kv).expect("lengths");
        assert_eq!(lens.1.to_f64(), vec![9.0, 0.0]);
        // In the two-node graph the backward reads O and Stats from the forward.
        let both = spec.graph().expect("graph");
        let bwd = node_inputs(
            &spec,
            &both,
            both.backward.expect("node"),
            &Fills::random(1),
        );
        assert_eq!(bwd.expect("inputs").len(), 6);
    }
}
