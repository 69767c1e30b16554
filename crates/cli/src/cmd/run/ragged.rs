//! Ragged (THD) tensors in `rime run`. A ragged tensor's buffer holds its sequences packed
//! one after another from its offsets, each with its real tokens only (the sequence length,
//! or S without a padding mask). So that the user sees and gives what the graph's dims say:
//!
//! - random offsets are the packed offsets of the run's sequence lengths (cuDNN's
//!   `cumsum(seq_len) x` token stride), and random lengths keep their sum within
//!   `max_total_seq_len_q/kv`;
//! - a ragged tensor given in `--inputs` is (B, H, S, D) and is packed by those offsets (the
//!   rows a sequence does not have are dropped);
//! - ragged outputs are summarized and written as (B, H, S, D), with zeros in the rows a
//!   sequence does not have.

use anyhow::{bail, Context as _};
use rime_engines::cpu::{logical_elements, packed_offsets, View4};
use rime_engines::{Buffer, FilledMap, HostBuffer, LogicalOffsets};
use rime_graph::{packed_strides, shown, Graph, Port, Tensor, TensorId};

/// Where tensor `id`'s sequences lie in its buffer.
struct Placement {
    view: View4,
    offsets: Vec<usize>,
    tokens: Vec<usize>,
}

/// The logical values of an integer tensor, in row-major order: what `fetch` returns.
type Values = anyhow::Result<Vec<i64>>;

/// Integer values as counts, naming the tensor they came from when one is negative.
fn counts(values: Vec<i64>, what: &str) -> anyhow::Result<Vec<usize>> {
    values
        .into_iter()
        .map(|n| usize::try_from(n).with_context(|| format!("{what} holds {n}, a negative count")))
        .collect()
}

/// The real tokens of each batch of a ragged tensor bound to `port` of `node`: the node's
/// sequence lengths when it has a padding mask, else the tensor's S for every batch.
fn tokens(
    graph: &Graph,
    node: rime_graph::NodeId,
    port: Port,
    t: &Tensor,
    fetch: &mut dyn FnMut(TensorId) -> Values,
) -> anyhow::Result<Vec<usize>> {
    let node = graph.node(node).context("unknown node")?;
    let sequence = port
        .token_sequence()
        .with_context(|| format!("{port} cannot be ragged"))?;
    let batch = usize::try_from(t.dims[0]).context("negative batch")?;
    match node.padding_lengths(sequence) {
        Some(id) => counts(fetch(id)?, &sequence.lengths_port().to_string()),
        None => Ok(vec![
            usize::try_from(t.dims[2])
                .context("negative sequence dim")?;
            batch
        ]),
    }
}

fn view(t: &Tensor) -> anyhow::Result<View4> {
    View4::new(&t.name, &t.dims, &t.strides).map_err(anyhow::Error::from)
}

impl Placement {
    /// The placement of ragged tensor `id`, its offsets and lengths read through `fetch`;
    /// `None` for a padded tensor.
    fn of(
        graph: &Graph,
        id: TensorId,
        fetch: &mut dyn FnMut(TensorId) -> Values,
    ) -> anyhow::Result<Option<Placement>> {
        let t = graph.get(id).context("unknown tensor")?;
        let Some(offsets_id) = t.ragged_offset else {
            return Ok(None);
        };
        let (node, port, _) = graph
            .ragged_users(offsets_id)
            .into_iter()
            .find(|&(_, _, user)| user == id)
            .with_context(|| format!("'{}' is bound to no port", shown(&t.name)))?;
        let tokens = tokens(graph, node, port, t, fetch)?;
        let offsets = counts(fetch(offsets_id)?, "a ragged offsets tensor")?;
        Ok(Some(Placement {
            view: view(t)?,
            offsets,
            tokens,
        }))
    }
}

/// True when tensor `id` is ragged.
pub fn is_ragged(graph: &Graph, id: TensorId) -> bool {
    graph.get(id).is_some_and(|t| t.ragged_offset.is_some())
}

/// The strides the user's (B, H, S, D) elements of tensor `t` have: a ragged tensor is shown
/// and given packed row-major, others as laid out.
pub fn logical_strides(t: &Tensor) -> Vec<i64> {
    if t.ragged_offset.is_some() {
        packed_strides(&t.dims)
    } else {
        t.strides.clone()
    }
}

/// Random offsets for the offsets tensor `offsets`: the packed offsets of the lengths its
/// first ragged user gets through `fetch`, in a buffer of `span` elements of type `dt`.
pub fn random_offsets(
    graph: &Graph,
    offsets: TensorId,
    dt: rime_graph::DataType,
    span: usize,
    fetch: &mut dyn FnMut(TensorId) -> Values,
) -> anyhow::Result<HostBuffer> {
    let o = graph.get(offsets).context("unknown tensor")?;
    let Some((node, port, user)) = graph.ragged_users(offsets).into_iter().next() else {
        bail!("'{}' is the ragged offsets of no port", shown(&o.name));
    };
    let t = graph.get(user).context("unknown tensor")?;
    let tokens = tokens(graph, node, port, t, fetch)?;
    let values = packed_offsets(&view(t)?, &tokens)
        .with_context(|| format!("the offsets of '{}' overflow", shown(&t.name)))?;
    let mut buffer = HostBuffer::try_zeros(dt, span, &o.name)?;
    let at = LogicalOffsets::new(&o.dims, &o.strides).context("offsets layout")?;
    let too_large = || {
        format!(
            "'{}' cannot hold the offsets of '{}'",
            shown(&o.name),
            shown(&t.name)
        )
    };
    for (at, value) in at.zip(values) {
        match &mut buffer {
            HostBuffer::I32(v) => {
                *v.get_mut(at).with_context(too_large)? =
                    i32::try_from(value).with_context(too_large)?;
            }
            HostBuffer::I64(v) => {
                *v.get_mut(at).with_context(too_large)? =
                    i64::try_from(value).with_context(too_large)?;
            }
            _ => bail!("'{}' is {dt}, not i32 or i64", shown(&o.name)),
        }
    }
    Ok(buffer)
}

/// Packs the (B, H, S, D) `logical` values given for ragged tensor `id` into a buffer of
/// `span` elements by its offsets (read through `fetch`).
pub fn pack(
    graph: &Graph,
    id: TensorId,
    logical: &HostBuffer,
    span: usize,
    fetch: &mut dyn FnMut(TensorId) -> Values,
) -> anyhow::Result<HostBuffer> {
    let t = graph.get(id).context("unknown tensor")?;
    let place = Placement::of(graph, id, fetch)?.context("not ragged")?;
    let src = logical.to_f64();
    let mut dst = vec![0.0; span];
    // As for a dense tensor (HostBuffer::from_logical): elements that share memory must be
    // given the same value, or one would be dropped without a word.
    let mut placed = FilledMap::new(span, t.overlaps_itself())?;
    let mut count = 0usize;
    for (i, at) in logical_elements(&place.view, &place.offsets, &place.tokens).enumerate() {
        count += 1;
        if let Some(at) = at {
            let (Some(slot), Some(&x)) = (dst.get_mut(at), src.get(i)) else {
                bail!(
                    "'{}': its offsets reach past its buffer of {span} elements",
                    shown(&t.name)
                );
            };
            let held = *slot;
            placed.fill(i, at, || f64::to_bits(held) == f64::to_bits(x))?;
            *slot = x;
        }
    }
    if count != src.len() {
        bail!(
            "'{}': {} elements given, its dims {:?} hold {count}",
            shown(&t.name),
            src.len(),
            t.dims
        );
    }
    HostBuffer::from_f64(logical.data_type(), &dst).context("a packed copy")
}

/// Ragged tensor `id`'s buffer as (B, H, S, D) packed row-major, zeros in the rows a sequence
/// does not have; its offsets and lengths read through `fetch`.
pub fn unpack(
    graph: &Graph,
    id: TensorId,
    buffer: &HostBuffer,
    fetch: &mut dyn FnMut(TensorId) -> Values,
) -> anyhow::Result<HostBuffer> {
    let t = graph.get(id).context("unknown tensor")?;
    let place = Placement::of(graph, id, fetch)?.context("not ragged")?;
    let src = buffer.to_f64();
    let out: Vec<f64> = logical_elements(&place.view, &place.offsets, &place.tokens)
        .map(|at| match at {
            Some(at) => src.get(at).copied().with_context(|| {
                format!("'{}': its offsets reach past its buffer", shown(&t.name))
            }),
            None => Ok(0.0),
        })
        .collect::<anyhow::Result<_>>()?;
    HostBuffer::from_f64(buffer.data_type(), &out).context("an unpacked copy")
}

/// The logical values of the integer tensor `id` held in `buffer`.
pub fn integers(graph: &Graph, id: TensorId, buffer: &HostBuffer) -> Values {
    let t = graph.get(id).context("unknown tensor")?;
    let outside = || format!("'{}': its buffer does not hold its layout", shown(&t.name));
    let at = LogicalOffsets::new(&t.dims, &t.strides).with_context(outside)?;
    let values: Option<Vec<i64>> = match buffer {
        HostBuffer::I32(v) => at.map(|o| v.get(o).map(|&x| i64::from(x))).collect(),
        HostBuffer::I64(v) => at.map(|o| v.get(o).copied()).collect(),
        _ => bail!("'{}' holds no integers", shown(&t.name)),
    };
    values.with_context(outside)
}
