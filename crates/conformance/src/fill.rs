//! Input data for a case's graph: every input tensor of a node as a host buffer of its graph
//! type — Q, K, V, dO (and O, Bias when they are inputs) seeded random in [-1, 1), Stats around
//! ln(Skv) as a forward gives, Sink around ln(Skv) too (so that it weighs about as much as all
//! the keys together, and O, Stats and dSink depend on it visibly), the padding lengths of the
//! spec, the ragged offsets of a THD spec, or a bias computed from its index — reproducible from a seed, and in parallel (a bias
//! can be gigabytes).

use half::{bf16, f16};
use rayon::prelude::*;
use rime_engines::HostBuffer;
use rime_graph::{DataType, NodeId, TensorId};

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

/// The buffer of input tensor `name` (`id`) of a case, sized to its strided span (a ragged
/// tensor's: B sequences of S tokens, [`rime_graph::Tensor::buffer_elements`]).
fn input(
    spec: &CaseSpec,
    g: &CaseGraph,
    name: &str,
    id: TensorId,
    fills: &Fills,
    salt: u64,
) -> Option<HostBuffer> {
    let t = g.graph.get(id)?;
    let len = usize::try_from(t.buffer_elements()?).ok()?;
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
        n if n.ends_with("_OFFSETS") => spec.ragged_offsets(n)?.iter().map(|&x| x as f64).collect(),
        _ => random(len, seed, None),
    };
    host(g.graph.data_type(id)?, &values)
}

/// Host buffers for every input of `node` that is not produced by another node of the graph
/// (and is not passed by value), then the ragged offsets its inputs and outputs name (once
/// each), keyed by tensor.
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
    let mut offsets: Vec<TensorId> = Vec::new();
    for &id in n.inputs.values().chain(n.outputs.values()) {
        if let Some(o) = g.graph.get(id)?.ragged_offset {
            if !offsets.contains(&o) {
                offsets.push(o);
            }
        }
    }
    for id in offsets {
        let salt = g.ids.iter().position(|(_, t)| *t == id)? as u64;
        out.push((id, input(spec, g, g.name_of(id), id, fills, salt)?));
    }
    Some(out)
}

/// A buffer for output `id`: every element NaN (unwritten elements show).
pub fn poisoned(g: &CaseGraph, id: TensorId) -> Option<HostBuffer> {
    let t = g.graph.get(id)?;
    let len = usize::try_from(t.buffer_elements()?).ok()?;
    host(g.graph.data_type(id)?, &vec![f64::NAN; len])
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
