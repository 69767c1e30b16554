//! Ragged (THD) tensors on the sm120 engine. The kernels place batch b of a ragged tensor at
//! element `offsets[b]` of its buffer (`TensorRef::ragged`) and read or write its real tokens
//! only (`rows_held` in attn.cuh). Before they run, [`upload`] copies every ragged tensor's
//! offsets and the padding mask's lengths to the host (one stream synchronize), checks them
//! with the CPU engine's own checks (`cpu/ragged.rs`: B + 1 offsets >= 0, not decreasing, the
//! last inside the buffer and within `max_total_seq_len_q/kv` x the token stride, each
//! sequence's tokens inside the room up to the next offset, every length within 0..=S), checks
//! that a 16-bit tensor's offsets keep its rows 16-byte aligned, and writes the checked offsets
//! as i64 into the workspace's `ragged_offsets` region, B + 1 per ragged tensor in
//! [`ragged_ports`] order. The kernels read only those checked copies, never the user's
//! offsets, so what was checked is what runs.

use std::collections::BTreeMap;

use rime_analyzer::{RegionKind, SdpaProblem, TensorSpec, WorkspaceLayout};
use rime_graph::{Graph, Port, Sequence, TensorId};

use super::buffer::{DeviceBuffer, DeviceMemory};
use super::context::CudaDevice;
use super::plan::PortAddresses;
use crate::cpu::ragged::{check_max_total, offsets_of, seq_len_values, Ragged};
use crate::cpu::View4;
use crate::{Binding, Buffer, EngineError, HostBuffer, VariantPack};

/// Elements of a 16-byte row chunk of a 16-bit tensor: what cp.async and the vector stores move.
const ROW_CHUNK_ELEMENTS: usize = 8;

/// The ragged token tensors of a problem (Q, K, V, O, dO, Stats, dQ, dK, dV with a ragged
/// offset), in the order their offsets sit in the `ragged_offsets` region.
pub(crate) fn ragged_ports(p: &SdpaProblem) -> Vec<(Port, &TensorSpec)> {
    p.tensors()
        .filter(|(port, t)| t.ragged_offset.is_some() && port.token_sequence().is_some())
        .collect()
}

/// The device buffer bound to tensor `id`.
fn device_buffer<'p>(
    pack: &'p VariantPack,
    binding: &Binding,
    name: &str,
    id: TensorId,
) -> Result<&'p DeviceBuffer, EngineError> {
    pack.bound(binding, id)
        .and_then(|b| b.as_any().downcast_ref::<DeviceBuffer>())
        .ok_or_else(|| EngineError::MissingBuffer {
            tensor: name.to_owned(),
        })
}

/// Every integer tensor the checks read (the padding mask's lengths, each offsets tensor
/// once), copied to the host with one stream synchronize.
fn download_all(
    dev: &CudaDevice,
    pack: &VariantPack,
    binding: &Binding,
    wanted: &[(String, TensorId)],
) -> Result<BTreeMap<TensorId, HostBuffer>, EngineError> {
    let buffers = wanted
        .iter()
        .map(|(name, id)| device_buffer(pack, binding, name, *id))
        .collect::<Result<Vec<_>, _>>()?;
    let hosts = DeviceBuffer::download_integers(dev, &buffers)?;
    Ok(wanted.iter().map(|(_, id)| *id).zip(hosts).collect())
}

/// Checks every ragged tensor's offsets against its buffer and the padding mask's lengths, and
/// writes them into the workspace's `ragged_offsets` region (at `workspace`); returns the
/// device address of each ragged port's offsets (0 for the others).
///
/// # Errors
/// The CPU engine's ragged errors (`RaggedOffsetNegative`, `RaggedOffsetsNotMonotone`,
/// `RaggedPastBufferEnd`, `RaggedSequenceOverflow`, `RaggedPastMaxTotal`, `SeqLenOutOfRange`),
/// [`EngineError::RaggedOffsetMisaligned`], and driver errors of the copies. Nothing is written
/// to any output before they are returned.
pub(crate) fn upload(
    dev: &CudaDevice,
    problem: &SdpaProblem,
    graph: &Graph,
    pack: &VariantPack,
    binding: &Binding,
    layout: &WorkspaceLayout,
    workspace: Option<&DeviceMemory>,
) -> Result<PortAddresses, EngineError> {
    let mut at = PortAddresses::default();
    let ports = ragged_ports(problem);
    if ports.is_empty() {
        return Ok(at);
    }
    let missing = || EngineError::MalformedPlan {
        engine: "sm120",
        what: "a ragged_offsets workspace region",
    };
    let region = layout
        .region(RegionKind::RaggedOffsets)
        .ok_or_else(missing)?;
    let memory = workspace.ok_or_else(missing)?;
    let b = problem.shape.b;
    // The padding mask's length tensor of each side and the side's dim (its length without one).
    let length_tensor = |sequence: Sequence| {
        let (port, max) = match sequence {
            Sequence::Q => (Port::SeqLenQ, problem.shape.sq),
            Sequence::Kv => (Port::SeqLenKv, problem.shape.skv),
        };
        (problem.tensor(port).filter(|_| problem.padding), max)
    };
    // Each ragged tensor with its side and its offsets tensor, looked up once.
    let mut ragged = Vec::with_capacity(ports.len());
    for &(port, t) in &ports {
        let (Some(id), Some(sequence)) = (t.ragged_offset, port.token_sequence()) else {
            continue;
        };
        let o = graph.get(id).ok_or_else(|| EngineError::MissingBuffer {
            tensor: format!("ragged offsets of '{}'", t.name),
        })?;
        ragged.push((port, t, sequence, id, o));
    }
    let mut wanted: Vec<(String, TensorId)> = [Sequence::Q, Sequence::Kv]
        .into_iter()
        .filter_map(|s| length_tensor(s).0)
        .map(|t| (t.name.clone(), t.id))
        .collect();
    for &(_, _, _, id, o) in &ragged {
        if !wanted.iter().any(|(_, w)| *w == id) {
            wanted.push((o.name.clone(), id));
        }
    }
    let hosts = download_all(dev, pack, binding, &wanted)?;
    let host_of = |id: TensorId| hosts.get(&id).ok_or_else(missing);
    let tokens = |sequence: Sequence| -> Result<Vec<usize>, EngineError> {
        match length_tensor(sequence) {
            (None, max) => Ok(vec![max; b]),
            (Some(t), max) => {
                let host = host_of(t.id)?;
                let view = View4 {
                    dims: t.dims,
                    strides: t.strides,
                };
                seq_len_values(t, &view, host, b, max).ok_or_else(|| {
                    EngineError::DataTypeMismatch {
                        tensor: t.name.clone(),
                        expected: rime_graph::DataType::I32,
                        actual: host.data_type(),
                    }
                })?
            }
        }
    };
    let (q_tokens, kv_tokens) = (tokens(Sequence::Q)?, tokens(Sequence::Kv)?);
    let mut words: Vec<u8> = Vec::with_capacity(ragged.len() * (b + 1) * 8);
    for (slot, &(port, t, sequence, id, o)) in ragged.iter().enumerate() {
        let offsets = offsets_of(&t.name, o, host_of(id)?)?;
        check_max_total(problem, t, sequence, &o.name, &offsets)?;
        let view = View4 {
            dims: t.dims,
            strides: t.strides,
        };
        let len = pack.bound(binding, t.id).map(Buffer::len).ok_or_else(|| {
            EngineError::MissingBuffer {
                tensor: t.name.clone(),
            }
        })?;
        let ragged = Ragged::new(&o.name, &offsets);
        ragged.check(&t.name, &view, len)?;
        let lens = match sequence {
            Sequence::Q => &q_tokens,
            Sequence::Kv => &kv_tokens,
        };
        ragged.check_tokens(&t.name, &view, |b| lens[b])?;
        if t.data_type.size_bytes() == 2 {
            if let Some((index, &value)) = offsets
                .iter()
                .enumerate()
                .find(|(_, &v)| v % ROW_CHUNK_ELEMENTS != 0)
            {
                return Err(EngineError::RaggedOffsetMisaligned {
                    tensor: t.name.clone(),
                    offsets: o.name.clone(),
                    index,
                    value,
                    multiple: ROW_CHUNK_ELEMENTS,
                });
            }
        }
        for &v in &offsets {
            // Checked above: inside a buffer, so below 2^63.
            let v = i64::try_from(v).map_err(|_| EngineError::LimitExceeded {
                engine: "sm120",
                what: "a ragged offset",
                value: u64::try_from(v).unwrap_or(u64::MAX),
                limit: i64::MAX as u64,
            })?;
            words.extend_from_slice(&v.to_le_bytes());
        }
        let base = region.offset + u64::try_from(slot * (b + 1) * 8).unwrap_or(u64::MAX);
        if let Some(addr) = at.slot(port) {
            *addr = memory.ptr() + base;
        }
    }
    let start = usize::try_from(region.offset).unwrap_or(usize::MAX);
    memory
        .slice(start..start + words.len())?
        .upload(dev, &words)?;
    Ok(at)
}
