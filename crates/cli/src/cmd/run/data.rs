//! Tensor data for `rime run`: inputs from safetensors (by tensor name) or seeded random
//! numbers, outputs to safetensors, and checksum summaries.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use anyhow::{bail, Context as _};
use rime_engines::HostBuffer;
use rime_graph::{sdpa_shape, DataType, Graph, Port, TensorId};
use safetensors::{Dtype, SafeTensors};

/// Where inputs come from: a safetensors file's bytes, and the seed for the rest.
pub struct Inputs {
    file: Option<Vec<u8>>,
    /// The file's path as shown in messages.
    source: String,
    seed: u64,
}

fn dtype_of(dt: DataType) -> Option<Dtype> {
    Some(match dt {
        DataType::F16 => Dtype::F16,
        DataType::Bf16 => Dtype::BF16,
        DataType::F32 => Dtype::F32,
        DataType::F64 => Dtype::F64,
        DataType::I32 => Dtype::I32,
        DataType::I64 => Dtype::I64,
        DataType::Bool => return None,
    })
}

/// FNV-1a, so each tensor's random data depends on its name and the seed, not on order.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
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

impl Inputs {
    /// Reads the safetensors file, if any, and checks that it parses and that every tensor it
    /// holds is named after a tensor of the graph: a misspelt name would otherwise leave that
    /// input to the seed, silently.
    pub fn new(graph: &Graph, path: Option<&Path>, seed: u64) -> anyhow::Result<Inputs> {
        let file = match path {
            Some(p) => {
                let bytes = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
                let parsed = SafeTensors::deserialize(&bytes)
                    .with_context(|| format!("parsing {}", p.display()))?;
                let mut unknown: Vec<&str> = parsed
                    .names()
                    .into_iter()
                    .filter(|name| graph.find(name).is_none())
                    .collect();
                if !unknown.is_empty() {
                    unknown.sort_unstable();
                    let known: Vec<&str> = graph
                        .graph_inputs()
                        .into_iter()
                        .filter_map(|id| graph.get(id).map(|t| t.name.as_str()))
                        .collect();
                    bail!(
                        "{} holds {}, not tensors of the graph (its inputs: {})",
                        p.display(),
                        unknown
                            .iter()
                            .map(|n| format!("'{n}'"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        known.join(", ")
                    );
                }
                Some(bytes)
            }
            None => None,
        };
        let source = path.map_or_else(String::new, |p| p.display().to_string());
        Ok(Inputs { file, source, seed })
    }

    /// True when the safetensors file holds tensor `id`.
    pub fn given(&self, graph: &Graph, id: TensorId) -> bool {
        let (Some(bytes), Some(t)) = (&self.file, graph.get(id)) else {
            return false;
        };
        SafeTensors::deserialize(bytes).is_ok_and(|st| st.tensor(&t.name).is_ok())
    }

    /// The buffer of input `id`: from the file when it is there, else seeded random values
    /// that suit the port it feeds.
    pub fn make(&self, graph: &Graph, id: TensorId) -> anyhow::Result<HostBuffer> {
        let t = graph.get(id).context("unknown tensor")?;
        let dt = graph
            .data_type(id)
            .with_context(|| format!("'{}' has no data type", t.name))?;
        let span = t
            .span_elements()
            .and_then(|s| usize::try_from(s).ok())
            .context("tensor too large")?;
        let logical = if self.given(graph, id) {
            self.read_file(&t.name, dt, &t.dims)?
        } else {
            self.random(graph, id, dt)?
        };
        logical
            .from_logical(&t.dims, &t.strides, span)
            .with_context(|| {
                format!(
                    "'{}': cannot lay out {:?} with strides {:?}",
                    t.name, t.dims, t.strides
                )
            })
    }

    fn read_file(&self, name: &str, dt: DataType, dims: &[i64]) -> anyhow::Result<HostBuffer> {
        let bytes = self.file.as_deref().context("no input file")?;
        let st = SafeTensors::deserialize(bytes)?;
        let view = st.tensor(name)?;
        let want = dtype_of(dt).with_context(|| format!("'{name}' is {dt}"))?;
        if view.dtype() != want {
            bail!(
                "{}: input '{name}' is {:?} in the file, the graph says {dt}",
                self.source,
                view.dtype()
            );
        }
        let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
        if shape != dims {
            bail!(
                "{}: input '{name}' has shape {shape:?} in the file, the graph says {dims:?}",
                self.source
            );
        }
        HostBuffer::from_le_bytes(dt, view.data())
            .with_context(|| format!("{}: input '{name}' is truncated", self.source))
    }

    fn random(&self, graph: &Graph, id: TensorId, dt: DataType) -> anyhow::Result<HostBuffer> {
        let t = graph.get(id).context("unknown tensor")?;
        let count = t
            .element_count()
            .and_then(|c| usize::try_from(c).ok())
            .context("tensor too large")?;
        let mut rng = Rng(name_hash(&t.name) ^ self.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        // What the tensor feeds decides what random data makes sense.
        let feeds = graph.nodes().iter().enumerate().find_map(|(n, node)| {
            let port = node
                .inputs
                .iter()
                .find(|(_, &t)| t == id)
                .map(|(&p, _)| p)?;
            Some((n, port))
        });
        let shape = feeds.and_then(|(n, _)| {
            let node_id = graph.node_ids().nth(n)?;
            sdpa_shape(graph, node_id)
        });
        let values: Vec<f64> = match (feeds.map(|f| f.1), shape) {
            (Some(Port::SeqLenQ), Some(s)) => lengths(&mut rng, count, s.sq),
            (Some(Port::SeqLenKv), Some(s)) => lengths(&mut rng, count, s.skv),
            (Some(Port::AttnScale), Some(s)) => vec![1.0 / (s.dqk.max(1) as f64).sqrt(); count],
            _ => (0..count).map(|_| 2.0 * rng.next() - 1.0).collect(),
        };
        HostBuffer::from_f64(dt, &values).with_context(|| format!("'{}' is {dt}", t.name))
    }
}

/// Random lengths between half the sequence and all of it.
fn lengths(rng: &mut Rng, count: usize, max: i64) -> Vec<f64> {
    let lo = (max + 1) / 2;
    (0..count)
        .map(|_| (lo + (rng.next() * (max - lo + 1) as f64) as i64).min(max) as f64)
        .collect()
}

/// A checksum summary of one output tensor (over its logical elements).
pub struct Summary {
    name: String,
    data_type: DataType,
    dims: Vec<i64>,
    sum: f64,
    abs_mean: f64,
    min: f64,
    max: f64,
    non_finite: usize,
}

impl Summary {
    /// Summarizes output `id`.
    pub fn of(graph: &Graph, id: TensorId, buffer: &HostBuffer) -> anyhow::Result<Summary> {
        let t = graph.get(id).context("unknown tensor")?;
        let logical = buffer
            .to_logical(&t.dims, &t.strides)
            .context("output layout")?
            .to_f64();
        let finite: Vec<f64> = logical.iter().copied().filter(|x| x.is_finite()).collect();
        Ok(Summary {
            name: t.name.clone(),
            data_type: graph.data_type(id).unwrap_or(DataType::F32),
            dims: t.dims.clone(),
            sum: finite.iter().sum(),
            abs_mean: finite.iter().map(|x| x.abs()).sum::<f64>() / finite.len().max(1) as f64,
            min: finite.iter().copied().fold(f64::INFINITY, f64::min),
            max: finite.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            non_finite: logical.len() - finite.len(),
        })
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<10} {:<4} {:?}  sum {:+.6e}  mean|x| {:.6e}  min {:+.4e}  max {:+.4e}  non-finite {}",
            self.name, self.data_type, self.dims, self.sum, self.abs_mean, self.min, self.max, self.non_finite
        )
    }
}

/// Writes `outputs` (logical, packed) to a safetensors file, by tensor name.
pub fn write_safetensors(
    path: &Path,
    graph: &Graph,
    outputs: &[TensorId],
    tensors: &BTreeMap<TensorId, HostBuffer>,
) -> anyhow::Result<()> {
    let mut parts = Vec::new();
    for &id in outputs {
        let t = graph.get(id).context("unknown tensor")?;
        let buffer = tensors.get(&id).context("output missing")?;
        let logical = buffer
            .to_logical(&t.dims, &t.strides)
            .context("output layout")?;
        let dt = dtype_of(buffer_type(&logical)).context("bool outputs")?;
        let shape: Vec<usize> = t.dims.iter().map(|&d| d as usize).collect();
        parts.push((t.name.clone(), dt, shape, logical.to_le_bytes()));
    }
    let views = parts
        .iter()
        .map(|(name, dt, shape, bytes)| {
            Ok((
                name.clone(),
                safetensors::tensor::TensorView::new(*dt, shape.clone(), bytes)?,
            ))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let bytes = safetensors::serialize(views, None)?;
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

fn buffer_type(b: &HostBuffer) -> DataType {
    rime_engines::Buffer::data_type(b)
}
