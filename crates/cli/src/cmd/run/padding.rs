//! The padding of a padded token tensor in `rime run`: under a padding mask the rows of each
//! batch past its length (`SEQ_LEN_Q` / `SEQ_LEN_KV`) are padding, which no engine reads
//! (docs/sdpa-backward.md). A given input that holds NaN or inf only there is harmless, and the
//! run says so rather than leave the user to wonder why every output is finite.

use anyhow::Context as _;
use rime_engines::HostBuffer;
use rime_graph::{Graph, Port, Sequence, TensorId};

use super::ragged;

/// The rows of each batch that the nodes reading padded token tensor `id` may read, its lengths
/// fetched through `fetch`: a padding mask's length (clamped to the tensor's S, as the engines
/// clamp it), all S rows for a node without a mask; the most over the nodes. `None` for a
/// tensor no node reads at a token port (Q, K, V, O, dO, Stats), or a ragged one.
pub fn rows_read(
    graph: &Graph,
    id: TensorId,
    fetch: &mut dyn FnMut(TensorId) -> anyhow::Result<Vec<i64>>,
) -> anyhow::Result<Option<Vec<usize>>> {
    let t = graph.get(id).context("unknown tensor")?;
    if t.ragged_offset.is_some() || t.dims.len() != 4 {
        return Ok(None);
    }
    let (batch, s) = (dim(t.dims[0])?, dim(t.dims[2])?);
    let longest = i64::try_from(s)?;
    let mut rows: Option<Vec<usize>> = None;
    for n in graph.node_ids() {
        let node = graph.node(n).context("unknown node")?;
        for (&port, _) in node.inputs.iter().filter(|&(_, &t)| t == id) {
            let Some(sequence) = port.token_sequence() else {
                continue;
            };
            let lengths = match sequence {
                Sequence::Q => Port::SeqLenQ,
                Sequence::Kv => Port::SeqLenKv,
            };
            let read = match node.input(lengths).filter(|_| node.options.padding_mask) {
                Some(l) => fetch(l)?
                    .into_iter()
                    .map(|v| usize::try_from(v.clamp(0, longest)))
                    .collect::<Result<Vec<usize>, _>>()?,
                None => vec![s; batch],
            };
            if read.len() != batch {
                return Ok(None); // a broadcast length: the engines' analyzer rules judge it
            }
            rows = Some(match rows {
                None => read,
                Some(r) => r.iter().zip(&read).map(|(a, b)| *a.max(b)).collect(),
            });
        }
    }
    Ok(rows)
}

/// The non-finite elements of tensor `id` (held in `buffer`, laid out as its dims and strides
/// say) in the rows past `rows[b]` of each batch b.
pub fn non_finite_past(
    graph: &Graph,
    id: TensorId,
    buffer: &HostBuffer,
    rows: &[usize],
) -> anyhow::Result<u64> {
    let t = graph.get(id).context("unknown tensor")?;
    let (s, d) = (dim(t.dims[2])?, dim(t.dims[3])?);
    let per_batch = dim(t.dims[1])? * s * d;
    let (mut at, mut past) = (0usize, 0u64);
    let fits = buffer.for_each_logical(&t.dims, &ragged::logical_strides(t), |x| {
        let (b, row) = (at / per_batch.max(1), (at / d.max(1)) % s.max(1));
        if !x.is_finite() && rows.get(b).is_some_and(|&r| row >= r) {
            past += 1;
        }
        at += 1;
    });
    fits.then_some(past)
        .context("a given input's buffer does not hold its layout")
}

fn dim(x: i64) -> anyhow::Result<usize> {
    usize::try_from(x).context("a negative dim")
}
