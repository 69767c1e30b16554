//! The padding of a padded token tensor in `rime run`: under a padding mask the rows of each
//! batch past its length (`SEQ_LEN_Q` / `SEQ_LEN_KV`) are padding, which no engine reads
//! (docs/sdpa-backward.md). A given input that holds NaN or inf only there is harmless, and the
//! run says so rather than leave the user to wonder why every output is finite.

use anyhow::Context as _;
use rime_engines::HostBuffer;
use rime_graph::{Graph, TensorId};

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
            let read = match node.padding_lengths(sequence) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use rime_graph::DataType;

    /// The fixture bwd_padding_seq_len.json, its node's padding mask on or off.
    fn graph(padding_mask: bool) -> Graph {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/valid/bwd_padding_seq_len.json"
        );
        let text = std::fs::read_to_string(path).expect("fixture");
        let text = text.replace(
            "\"padding_mask\": true",
            &format!("\"padding_mask\": {padding_mask}"),
        );
        rime_graph::json::from_str(&text, path).expect("graph")
    }

    /// Q (3, 4, 48, 64) and K (3, 4, 80, 64) under lengths the engines clamp: a negative one
    /// reads no row, one past S every row; without a mask every row is read; Bias-like ports
    /// and unknown tensors have no rows.
    #[test]
    fn rows_read_are_the_clamped_lengths_or_every_row() {
        let g = graph(true);
        let (q, k) = (g.find("Q").expect("Q"), g.find("K").expect("K"));
        let mut fetch = |id: TensorId| -> anyhow::Result<Vec<i64>> {
            Ok(if Some(id) == g.find("seq_len_q") {
                vec![-3, 40, 1000]
            } else {
                vec![80, 0, 7]
            })
        };
        assert_eq!(
            rows_read(&g, q, &mut fetch).expect("rows"),
            Some(vec![0, 40, 48])
        );
        assert_eq!(
            rows_read(&g, k, &mut fetch).expect("rows"),
            Some(vec![80, 0, 7])
        );
        let lens = g.find("seq_len_q").expect("lengths");
        assert_eq!(rows_read(&g, lens, &mut fetch).expect("rows"), None);
        let unmasked = graph(false);
        let q = unmasked.find("Q").expect("Q");
        assert_eq!(
            rows_read(&unmasked, q, &mut fetch).expect("rows"),
            Some(vec![48; 3])
        );
    }

    #[test]
    fn non_finite_past_counts_only_the_rows_past_each_length() {
        let g = graph(true);
        let q = g.find("Q").expect("Q");
        let (per_batch, row) = (4 * 48 * 64, 64);
        let mut v = vec![1.0; 3 * per_batch];
        v[10 * row] = f64::NAN; // batch 0, row 10: past a length of 10
        v[9 * row + 63] = f64::INFINITY; // batch 0, row 9: a real row
        v[per_batch + 3 * 48 * 64 + 47 * row] = f64::NAN; // batch 1, head 3, row 47
        v[2 * per_batch] = f64::NAN; // batch 2, row 0, length 0
        let buffer = HostBuffer::from_f64(DataType::Bf16, &v).expect("buffer");
        let past = non_finite_past(&g, q, &buffer, &[10, 47, 0]).expect("count");
        assert_eq!(past, 3);
        assert_eq!(
            non_finite_past(&g, q, &buffer, &[48, 48, 48]).expect("count"),
            0
        );
    }
}
