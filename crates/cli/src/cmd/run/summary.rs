//! What `rime run` says about an output tensor: its sum, mean magnitude, range and non-finite
//! count (the text line), and for `--json` its checksum (`json_doc::run`): FNV-1a of its
//! elements' little-endian bytes and the f64 sums of its finite elements and their squares,
//! all over the logical elements in row-major order.

use std::fmt;

use anyhow::{bail, Context as _};
use rime_engines::HostBuffer;
use rime_graph::{shown, shown_text, DataType, Graph, TensorId};

use super::fnv::Fnv1a;
use super::ragged;
use crate::json_doc::run::{ChecksumDoc, OutputDoc};

/// A checksum summary of one tensor (over its logical elements).
pub struct Summary {
    name: String,
    data_type: DataType,
    dims: Vec<i64>,
    sum: f64,
    sum_of_squares: f64,
    abs_mean: f64,
    min: f64,
    max: f64,
    /// NaN elements.
    pub nan: u64,
    /// Infinite elements.
    pub inf: u64,
}

impl Summary {
    /// Summarizes tensor `id` held in `buffer` (a ragged one unpacked: [`ragged::unpack`]).
    pub fn of(graph: &Graph, id: TensorId, buffer: &HostBuffer) -> anyhow::Result<Summary> {
        let t = graph.get(id).context("unknown tensor")?;
        Self::over(graph, id, buffer, &t.dims, &ragged::logical_strides(t))
    }

    /// Summarizes every element `buffer` holds, in storage order: a ragged input as packed for
    /// the engine (its gaps hold zeros), for its non-finite count without unpacking it.
    pub fn of_held(graph: &Graph, id: TensorId, buffer: &HostBuffer) -> anyhow::Result<Summary> {
        let n = i64::try_from(rime_engines::Buffer::len(buffer)).context("buffer length")?;
        Self::over(graph, id, buffer, &[n], &[1])
    }

    /// The summary of `buffer`'s elements at (dims, strides), named and typed as tensor `id`.
    fn over(
        graph: &Graph,
        id: TensorId,
        buffer: &HostBuffer,
        dims: &[i64],
        strides: &[i64],
    ) -> anyhow::Result<Summary> {
        let t = graph.get(id).context("unknown tensor")?;
        let (mut sum, mut squares, mut abs, mut finite) = (0.0, 0.0, 0.0, 0u64);
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut nan, mut inf) = (0u64, 0u64);
        let fits = buffer.for_each_logical(dims, strides, |x| {
            if x.is_nan() {
                nan += 1;
            } else if x.is_infinite() {
                inf += 1;
            } else {
                finite += 1;
                sum += x;
                squares += x * x;
                abs += x.abs();
                min = min.min(x);
                max = max.max(x);
            }
        });
        if !fits {
            bail!("'{}': its buffer does not hold its layout", shown(&t.name));
        }
        Ok(Summary {
            name: t.name.clone(),
            data_type: graph.data_type(id).unwrap_or(DataType::F32),
            dims: t.dims.clone(),
            sum,
            sum_of_squares: squares,
            abs_mean: abs / finite.max(1) as f64,
            min,
            max,
            nan,
            inf,
        })
    }

    /// `name (N NaN, M inf)` when the tensor holds non-finite values.
    pub fn non_finite(&self) -> Option<String> {
        self.non_finite_in_padding(0)
    }

    /// As [`Self::non_finite`], saying how many of them lie in the `padding` no engine reads
    /// (the rows past a padding mask's lengths: `padding::non_finite_past`).
    pub fn non_finite_in_padding(&self, padding: u64) -> Option<String> {
        let where_ = match padding {
            0 => String::new(),
            n if n == self.nan + self.inf => {
                ", all past the padding mask's lengths: never read".to_owned()
            }
            n => format!(", {n} of them past the padding mask's lengths: never read"),
        };
        (self.nan + self.inf > 0).then(|| {
            format!(
                "{} ({} NaN, {} inf{where_})",
                shown(&self.name),
                self.nan,
                self.inf
            )
        })
    }

    /// The JSON entry of the tensor, `buffer` (the one summarized) hashed for its checksum.
    ///
    /// # Errors
    /// When the buffer does not hold the tensor's layout.
    pub fn doc(
        &self,
        graph: &Graph,
        id: TensorId,
        buffer: &HostBuffer,
    ) -> anyhow::Result<OutputDoc> {
        let t = graph.get(id).context("unknown tensor")?;
        let mut hash = Fnv1a::new();
        buffer
            .write_logical_le(&t.dims, &ragged::logical_strides(t), &mut hash)
            .with_context(|| {
                format!("'{}': its buffer does not hold its layout", shown(&t.name))
            })?;
        Ok(OutputDoc {
            name: shown_text(&self.name).to_string(),
            data_type: self.data_type.to_string(),
            dims: self.dims.clone(),
            checksum: ChecksumDoc {
                fnv1a64: format!("{:016x}", hash.value()),
                sum: Some(self.sum).filter(|s| s.is_finite()),
                sum_of_squares: Some(self.sum_of_squares).filter(|s| s.is_finite()),
            },
            nan: self.nan,
            inf: self.inf,
            non_finite: self.nan + self.inf,
        })
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<10} {:<4} {:?}  sum {:+.6e}  mean|x| {:.6e}  min {:+.4e}  max {:+.4e}  non-finite {}",
            shown(&self.name).to_string(),
            self.data_type,
            self.dims,
            self.sum,
            self.abs_mean,
            self.min,
            self.max,
            self.nan + self.inf
        )
    }
}
