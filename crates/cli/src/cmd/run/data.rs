//! Tensor data for `rime run`: inputs from the `--inputs` file (by tensor name) or seeded
//! random numbers, and outputs to safetensors. Tensors are produced and consumed in place,
//! element by element: no step holds a second copy of a whole tensor.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context as _};
use rime_engines::{HostBuffer, PlaceError};
use rime_graph::{sdpa_shape, shown, DataType, Dataflow, Graph, Port, TensorId};
use safetensors::tensor::{Metadata, TensorInfo};

use super::fnv::Fnv1a;
use super::ragged;
use crate::limits::Limits;
use crate::output::OutputFile;
use crate::tensor_file::{dtype_of, TensorFile};

/// Where inputs come from: the `--inputs` file, and the seed for the rest.
pub struct Inputs {
    file: Option<TensorFile>,
    seed: u64,
    flow: Dataflow,
}

/// FNV-1a of the name, so each tensor's random data depends on its name and the seed, not on
/// order.
fn name_hash(name: &str) -> u64 {
    Fnv1a::of(name.as_bytes())
}

/// xorshift64* numbers in [0, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Bytes of one element of `dt`.
pub fn element_bytes(dt: DataType) -> u64 {
    match dt {
        DataType::Bool => 1,
        DataType::F16 | DataType::Bf16 => 2,
        DataType::F32 | DataType::I32 => 4,
        DataType::F64 | DataType::I64 => 8,
    }
}

/// Elements of tensor `id`'s buffer (its strided span; a ragged tensor's full sequences
/// packed), as a host length.
pub fn span(graph: &Graph, id: TensorId) -> anyhow::Result<usize> {
    let t = graph.get(id).context("unknown tensor")?;
    t.buffer_elements()
        .and_then(|s| usize::try_from(s).ok())
        .with_context(|| format!("'{}' is too large for this machine", shown(&t.name)))
}

impl Inputs {
    /// Reads the `--inputs` file, if any, within the input-file limit, and checks that every
    /// tensor it holds is one of `wanted` with the graph's type and dims: anything else (a
    /// misspelt name, an output, a tensor passed by value) would otherwise be ignored.
    pub fn new(
        graph: &Graph,
        path: Option<&Path>,
        seed: u64,
        wanted: &[TensorId],
    ) -> anyhow::Result<Inputs> {
        let file = match path {
            Some(p) => {
                let file = TensorFile::read(p, Limits::get().input_bytes)?;
                file.check_against(graph, wanted)?;
                Some(file)
            }
            None => None,
        };
        Ok(Inputs {
            file,
            seed,
            flow: graph.dataflow(),
        })
    }

    /// True when the `--inputs` file holds tensor `id`.
    pub fn given(&self, graph: &Graph, id: TensorId) -> bool {
        let (Some(file), Some(t)) = (&self.file, graph.get(id)) else {
            return false;
        };
        file.entry(&t.name).is_some()
    }

    /// Bytes the `--inputs` file holds in memory, and the largest of its tensors (decoded
    /// while it is laid out).
    pub fn file_bytes(&self) -> (u64, u64) {
        self.file.as_ref().map_or((0, 0), |f| {
            let largest = f
                .entries()
                .iter()
                .map(|e| {
                    let n = e.shape.iter().fold(1u64, |a, &d| {
                        a.saturating_mul(u64::try_from(d).unwrap_or(u64::MAX))
                    });
                    n.saturating_mul(
                        u64::try_from(e.dtype.bitsize().div_ceil(8)).unwrap_or(u64::MAX),
                    )
                })
                .max()
                .unwrap_or(0);
            (u64::try_from(f.bytes_held()).unwrap_or(u64::MAX), largest)
        })
    }

    /// The buffer of input `id`: from the file when it is there, else seeded random values
    /// that suit the port it feeds.
    pub fn make(&self, graph: &Graph, id: TensorId) -> anyhow::Result<HostBuffer> {
        let t = graph.get(id).context("unknown tensor")?;
        let name = shown(&t.name);
        let dt = graph
            .data_type(id)
            .with_context(|| format!("'{name}' has no data type"))?;
        let span = span(graph, id)?;
        if let Some(file) = self.file.as_ref().filter(|f| f.entry(&t.name).is_some()) {
            let logical = file.buffer(&t.name, dt)?;
            // Why the file's values could not be placed, naming the file and the tensor.
            let unplaced = |e: PlaceError| match e {
                PlaceError::Layout => anyhow::anyhow!(
                    "{}: '{name}' holds {} elements, dims {:?} with strides {:?} need them all",
                    file.source(),
                    rime_engines::Buffer::len(&logical),
                    t.dims,
                    t.strides
                ),
                PlaceError::Aliased { .. } => anyhow::anyhow!(
                    "{}: '{name}': {e}: its strides {:?} (dims {:?}) overlap; give '{name}' \
                     strides that do not, or equal values where they do",
                    file.source(),
                    t.strides,
                    t.dims
                ),
                PlaceError::Memory(m) => m.into(),
            };
            if t.ragged_offset.is_some() {
                return ragged::pack(graph, id, &logical, span, &mut |i| self.integers(graph, i))
                    .map_err(|e| match e.downcast::<PlaceError>() {
                        Ok(p) => unplaced(p),
                        Err(e) => e,
                    });
            }
            return logical
                .from_logical(&t.dims, &t.strides, span)
                .map_err(unplaced);
        }
        self.random(graph, id, dt, span)
    }

    /// The logical values of the integer input `id` (sequence lengths, offsets).
    fn integers(&self, graph: &Graph, id: TensorId) -> anyhow::Result<Vec<i64>> {
        ragged::integers(graph, id, &self.make(graph, id)?)
    }

    fn random(
        &self,
        graph: &Graph,
        id: TensorId,
        dt: DataType,
        span: usize,
    ) -> anyhow::Result<HostBuffer> {
        let t = graph.get(id).context("unknown tensor")?;
        let mut rng = Rng(name_hash(&t.name) ^ self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        // What the tensor feeds decides what random data makes sense.
        let reader = self.flow.readers(id).first().copied();
        let port = reader.and_then(|n| {
            let node = graph.node(n)?;
            node.inputs.iter().find(|(_, &t)| t == id).map(|(&p, _)| p)
        });
        let shape = reader.and_then(|n| sdpa_shape(graph, n));
        if self.flow.is_ragged_offset(id) {
            return ragged::random_offsets(graph, id, dt, span, &mut |i| self.integers(graph, i));
        }
        let mut buffer = HostBuffer::try_zeros(dt, span, &t.name)?;
        // Lengths whose sum stays within the node's packed token total, when it has one.
        let options = reader.and_then(|n| graph.node(n)).map(|n| &n.options);
        let cap = |s: i64, total: Option<i64>| match total {
            Some(total) => s.min(total / t.dims[0].max(1)),
            None => s,
        };
        let filled = match (port, shape) {
            (Some(Port::SeqLenQ), Some(s)) => {
                let max = cap(s.sq, options.and_then(|o| o.max_total_seq_len_q));
                buffer.fill_logical(&t.dims, &t.strides, || length(&mut rng, max))
            }
            (Some(Port::SeqLenKv), Some(s)) => {
                let max = cap(s.skv, options.and_then(|o| o.max_total_seq_len_kv));
                buffer.fill_logical(&t.dims, &t.strides, || length(&mut rng, max))
            }
            (Some(Port::AttnScale), Some(s)) => {
                let scale = 1.0 / (s.dqk.max(1) as f64).sqrt();
                buffer.fill_logical(&t.dims, &t.strides, || scale)
            }
            // A ragged tensor's elements are its buffer's (its batch stride is unused).
            _ if t.ragged_offset.is_some() => {
                buffer.fill_logical(&[buffer_len(span)?], &[1], || 2.0 * rng.next() - 1.0)
            }
            _ => buffer.fill_logical(&t.dims, &t.strides, || 2.0 * rng.next() - 1.0),
        };
        if !filled {
            bail!(
                "'{}': dims {:?} with strides {:?} do not fit",
                shown(&t.name),
                t.dims,
                t.strides
            );
        }
        Ok(buffer)
    }
}

/// A buffer length as a dim.
fn buffer_len(span: usize) -> anyhow::Result<i64> {
    i64::try_from(span).context("a buffer too large for a dim")
}

/// A random length between half the sequence and all of it.
fn length(rng: &mut Rng, max: i64) -> f64 {
    let lo = (max + 1) / 2;
    (lo + (rng.next() * (max - lo + 1) as f64) as i64).min(max) as f64
}

/// Writes `outputs` (logical, packed) to a safetensors file, by tensor name, streaming each
/// tensor from its buffer (a ragged one given unpacked: [`ragged::unpack`]).
pub fn write_safetensors(
    out: OutputFile,
    graph: &Graph,
    outputs: &[(TensorId, &HostBuffer)],
) -> anyhow::Result<()> {
    let mut parts = Vec::new();
    for &(id, buffer) in outputs {
        let t = graph.get(id).context("unknown tensor")?;
        let dt = rime_engines::Buffer::data_type(buffer);
        let dtype = dtype_of(dt).with_context(|| format!("'{}' is {dt}", shown(&t.name)))?;
        let shape: Vec<usize> = t
            .dims
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<_, _>>()
            .with_context(|| format!("'{}' has a negative dim", shown(&t.name)))?;
        parts.push((t.name.clone(), dtype, shape, t, buffer, element_bytes(dt)));
    }
    // The safetensors crate's order: larger alignments first, then by name.
    parts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut offset = 0usize;
    let mut infos = Vec::new();
    for (name, dtype, shape, _, _, size) in &parts {
        let bytes = shape
            .iter()
            .try_fold(usize::try_from(*size)?, |a, &d| a.checked_mul(d))
            .context("an output is too large for safetensors")?;
        let end = offset.checked_add(bytes).context("outputs too large")?;
        infos.push((
            name.clone(),
            TensorInfo {
                dtype: *dtype,
                shape: shape.clone(),
                data_offsets: (offset, end),
            },
        ));
        offset = end;
    }
    let metadata = Metadata::new(None, infos).context("safetensors header")?;
    let mut header = serde_json::to_string(&metadata)?.into_bytes();
    header.resize(header.len().next_multiple_of(8), b' ');
    out.write(|w: &mut dyn Write| {
        w.write_all(&(header.len() as u64).to_le_bytes())?;
        w.write_all(&header)?;
        for (_, _, _, t, buffer, _) in &parts {
            buffer.write_logical_le(&t.dims, &ragged::logical_strides(t), w)?;
        }
        Ok(())
    })
}
