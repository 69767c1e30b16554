//! The variant pack: which buffer each tensor of a plan reads or writes, keyed as the user likes
//! (uid, tensor id or name), checked against the graph before anything runs.

use std::collections::BTreeMap;
use std::fmt;

use rime_graph::{DataType, Graph, TensorId};

use crate::{Buffer, EngineError, MemorySpan};

/// How a variant-pack entry names its tensor.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TensorKey {
    /// The tensor's user id (cuDNN's variant-pack key).
    Uid(i64),
    /// The tensor's id in the graph.
    Id(TensorId),
    /// The tensor's name.
    Name(String),
}

impl fmt::Display for TensorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorKey::Uid(uid) => write!(f, "uid {uid}"),
            TensorKey::Id(id) => write!(f, "tensor #{}", id.index()),
            TensorKey::Name(name) => write!(f, "'{name}'"),
        }
    }
}

impl From<&str> for TensorKey {
    fn from(name: &str) -> Self {
        TensorKey::Name(name.to_owned())
    }
}

impl From<TensorId> for TensorKey {
    fn from(id: TensorId) -> Self {
        TensorKey::Id(id)
    }
}

/// Buffers for the tensors of one execution.
#[derive(Debug, Default)]
pub struct VariantPack {
    entries: Vec<(TensorKey, Box<dyn Buffer>)>,
}

/// Which entry of a checked pack serves which tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    entry_of: BTreeMap<TensorId, usize>,
}

impl Binding {
    /// The tensor an entry serves.
    fn tensor_of(&self, entry: usize) -> Option<TensorId> {
        self.entry_of
            .iter()
            .find(|(_, &e)| e == entry)
            .map(|(&t, _)| t)
    }
}

impl VariantPack {
    /// An empty pack.
    pub fn new() -> Self {
        VariantPack::default()
    }

    /// Adds (or replaces) the buffer of `key`.
    pub fn insert(&mut self, key: impl Into<TensorKey>, buffer: Box<dyn Buffer>) -> &mut Self {
        let key = key.into();
        self.entries.retain(|(k, _)| *k != key);
        self.entries.push((key, buffer));
        self
    }

    /// The buffer of `key`.
    pub fn get(&self, key: &TensorKey) -> Option<&dyn Buffer> {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, b)| b.as_ref())
    }

    /// Removes and returns the buffer of `key`.
    pub fn take(&mut self, key: &TensorKey) -> Option<Box<dyn Buffer>> {
        let at = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(at).1)
    }

    /// Keys in insertion order.
    pub fn keys(&self) -> impl Iterator<Item = &TensorKey> {
        self.entries.iter().map(|(k, _)| k)
    }

    /// Checks the pack against the tensors `needed` of `graph`: every one has exactly one
    /// buffer of its data type, long enough for its strided span (a ragged tensor's span
    /// depends on its offsets: the engine checks it), and no entry is left over.
    ///
    /// # Errors
    /// [`EngineError::ExtraBuffer`], [`EngineError::DuplicateBuffer`],
    /// [`EngineError::MissingBuffer`], [`EngineError::DataTypeMismatch`] or
    /// [`EngineError::BufferTooSmall`], naming the tensor and the sizes.
    pub fn check(&self, graph: &Graph, needed: &[TensorId]) -> Result<Binding, EngineError> {
        self.check_typed(graph, needed, |t| t)
    }

    /// [`Self::check`] with the buffer type each tensor type must have given by `buffer_type`
    /// (e.g. f64 for every float tensor of a reference plan).
    ///
    /// # Errors
    /// As [`Self::check`].
    pub fn check_typed(
        &self,
        graph: &Graph,
        needed: &[TensorId],
        buffer_type: impl Fn(DataType) -> DataType,
    ) -> Result<Binding, EngineError> {
        let name = |id: TensorId| graph.get(id).map_or_else(String::new, |t| t.name.clone());
        let mut entry_of = BTreeMap::new();
        for (n, (key, _)) in self.entries.iter().enumerate() {
            let id = match key {
                TensorKey::Uid(uid) => graph.find_uid(*uid),
                TensorKey::Id(id) => graph.get(*id).map(|_| *id),
                TensorKey::Name(name) => graph.find(name),
            }
            .filter(|id| needed.contains(id))
            .ok_or_else(|| EngineError::ExtraBuffer {
                key: key.to_string(),
            })?;
            if entry_of.insert(id, n).is_some() {
                return Err(EngineError::DuplicateBuffer { tensor: name(id) });
            }
        }
        for &id in needed {
            let tensor = graph
                .get(id)
                .ok_or_else(|| EngineError::MissingBuffer { tensor: name(id) })?;
            let &entry = entry_of
                .get(&id)
                .ok_or_else(|| EngineError::MissingBuffer {
                    tensor: tensor.name.clone(),
                })?;
            let buffer = &self.entries[entry].1;
            if let Some(expected) = graph.data_type(id).map(&buffer_type) {
                if buffer.data_type() != expected {
                    return Err(EngineError::DataTypeMismatch {
                        tensor: tensor.name.clone(),
                        expected,
                        actual: buffer.data_type(),
                    });
                }
            }
            let needed = tensor
                .span_elements()
                .and_then(|s| usize::try_from(s).ok())
                .ok_or_else(|| EngineError::BadLayout {
                    tensor: tensor.name.clone(),
                    dims: tensor.dims.clone(),
                    strides: tensor.strides.clone(),
                })?;
            // A ragged tensor's extent comes from its offsets, which the engine checks against
            // the buffer at execution; its dims and strides alone do not bound it.
            if tensor.ragged_offset.is_none() && buffer.len() < needed {
                return Err(EngineError::BufferTooSmall {
                    tensor: tensor.name.clone(),
                    needed,
                    len: buffer.len(),
                });
            }
        }
        Ok(Binding { entry_of })
    }

    /// The buffer bound to tensor `id` by a checked pack.
    pub fn bound(&self, binding: &Binding, id: TensorId) -> Option<&dyn Buffer> {
        binding
            .entry_of
            .get(&id)
            .and_then(|&n| self.entries.get(n))
            .map(|(_, b)| &**b)
    }

    /// The name of the first bound tensor whose buffer shares a byte with `span`.
    pub fn overlapping(
        &self,
        graph: &Graph,
        binding: &Binding,
        span: &MemorySpan,
    ) -> Option<String> {
        binding.entry_of.iter().find_map(|(&id, &n)| {
            let other = self.entries.get(n)?.1.span()?;
            other
                .overlaps(span)
                .then(|| graph.get(id).map_or_else(String::new, |t| t.name.clone()))
        })
    }

    /// Refuses a checked pack in which an output's buffer shares memory with any other bound
    /// buffer (views of one allocation, or memory wrapped twice).
    ///
    /// # Errors
    /// [`EngineError::AliasedBuffers`] naming both tensors.
    pub fn check_overlaps(
        &self,
        graph: &Graph,
        binding: &Binding,
        outputs: &[TensorId],
    ) -> Result<(), EngineError> {
        let name = |id: TensorId| graph.get(id).map_or_else(String::new, |t| t.name.clone());
        for &out in outputs {
            let Some(span) = self.bound(binding, out).and_then(|b| b.span()) else {
                continue;
            };
            for (&id, &n) in &binding.entry_of {
                let shared = self.entries.get(n).and_then(|(_, b)| b.span());
                if id != out && shared.is_some_and(|s| s.overlaps(&span)) {
                    return Err(EngineError::AliasedBuffers {
                        output: name(out),
                        other: name(id),
                    });
                }
            }
        }
        Ok(())
    }

    /// Splits a checked pack into read-only buffers and the writable buffers of `outputs`.
    pub fn split<'a>(
        &'a mut self,
        binding: &Binding,
        outputs: &[TensorId],
    ) -> (
        BTreeMap<TensorId, &'a dyn Buffer>,
        BTreeMap<TensorId, &'a mut dyn Buffer>,
    ) {
        let mut reads: BTreeMap<TensorId, &'a dyn Buffer> = BTreeMap::new();
        let mut writes: BTreeMap<TensorId, &'a mut dyn Buffer> = BTreeMap::new();
        for (n, (_, buffer)) in self.entries.iter_mut().enumerate() {
            let Some(id) = binding.tensor_of(n) else {
                continue;
            };
            if outputs.contains(&id) {
                let buffer: &'a mut dyn Buffer = &mut **buffer;
                writes.insert(id, buffer);
            } else {
                reads.insert(id, &**buffer);
            }
        }
        (reads, writes)
    }
}
