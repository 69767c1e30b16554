//! The `--inputs` file of `rime run`: a safetensors file, read header first and checked before
//! its data is read, then matched against the graph's inputs.
//!
//! Reading: the 8-byte header length and the header come first; the header must be a JSON
//! object without duplicate keys (the safetensors crate keeps the last of two silently), and
//! the crate checks dtypes, shapes and offsets. The size the header declares is checked
//! against the file's size (a regular file) and the input-file limit before the data is read,
//! and a pipe or device is read no further than that size.
//!
//! Matching: every tensor in the file must be a tensor the run reads from its caller (not
//! produced by a node, not virtual, not passed by value, read by some node), of the graph's
//! data type and dims. Each mismatch is an error naming the tensor; all are reported at once.
//!
//! Self-contained (std, serde, safetensors, rime-graph, rime-engines), so that the fuzz target
//! `safetensors_input` compiles this very file.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io::Read;
use std::path::Path;

use rime_engines::HostBuffer;
use rime_graph::{shown, shown_text, DataType, Graph, TensorId};
use safetensors::tensor::Metadata;
use safetensors::Dtype;

/// The safetensors format's own limit on the header (the crate's `MAX_HEADER_SIZE`).
const MAX_HEADER_BYTES: u64 = 100_000_000;

/// Why an input file cannot be used. The message names the file and, where one is at
/// fault, the tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorFileError(pub String);

impl fmt::Display for TensorFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TensorFileError {}

/// One tensor of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// Its element type.
    pub dtype: Dtype,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Byte range in the data section.
    offsets: (usize, usize),
}

/// A parsed safetensors file held in memory.
#[derive(Debug)]
pub struct TensorFile {
    source: String,
    bytes: Vec<u8>,
    data_start: usize,
    entries: Vec<Entry>,
}

/// The tensors a run reads from its caller: graph inputs that take a buffer (not virtual, not
/// passed by value). These, and only these, may be in the file.
pub fn caller_inputs(graph: &Graph) -> Vec<TensorId> {
    graph
        .graph_inputs()
        .into_iter()
        .filter(|&id| {
            graph
                .get(id)
                .is_some_and(|t| !t.is_virtual && t.pass_by_value.is_none())
        })
        .collect()
}

/// The safetensors name of a graph data type (`None`: bool, which rime never reads here).
pub fn dtype_of(dt: DataType) -> Option<Dtype> {
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

/// The header's keys, read only to refuse duplicates (values are skipped).
struct Keys;

impl<'de> serde::Deserialize<'de> for Keys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Keys;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object of tensors")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut seen = HashSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    if !seen.insert(key.clone()) {
                        return Err(serde::de::Error::custom(format!(
                            "tensor `{}` is listed twice",
                            shown(&key)
                        )));
                    }
                }
                Ok(Keys)
            }
        }
        deserializer.deserialize_map(V)
    }
}

impl TensorFile {
    /// Reads the file at `path`, at most `max_bytes` of it.
    ///
    /// # Errors
    /// Unreadable, over the limit, truncated, followed by extra bytes, or not safetensors.
    pub fn read(path: &Path, max_bytes: u64) -> Result<TensorFile, TensorFileError> {
        let source = path.display().to_string();
        let fail = |what: String| TensorFileError(format!("{}: {what}", shown_text(&source)));
        let file = std::fs::File::open(path).map_err(|e| fail(format!("cannot read: {e}")))?;
        let meta = file
            .metadata()
            .map_err(|e| fail(format!("cannot read: {e}")))?;
        if meta.is_dir() {
            return Err(fail("is a directory, not a safetensors file".to_owned()));
        }
        let size = meta.is_file().then_some(meta.len());
        TensorFile::from_reader(&source, file, size, max_bytes)
    }

    /// Reads a safetensors file from `reader`; `size` is its length when known in advance (a
    /// regular file), checked against the header before the data is read.
    ///
    /// # Errors
    /// As [`TensorFile::read`].
    pub fn from_reader(
        source: &str,
        reader: impl Read,
        size: Option<u64>,
        max_bytes: u64,
    ) -> Result<TensorFile, TensorFileError> {
        let fail = |what: String| TensorFileError(format!("{}: {what}", shown_text(source)));
        let over = |n: u64| {
            fail(format!(
                "holds {n} bytes, over the limit of {max_bytes} bytes for input files (--max-input-bytes raises it)"
            ))
        };
        if let Some(n) = size.filter(|&n| n > max_bytes) {
            return Err(over(n));
        }
        let mut reader = reader.take(max_bytes.saturating_add(1));
        let mut len = [0u8; 8];
        reader.read_exact(&mut len).map_err(|_| {
            fail("not a safetensors file: shorter than its 8-byte header length".to_owned())
        })?;
        let header_len = u64::from_le_bytes(len);
        if header_len > MAX_HEADER_BYTES {
            return Err(fail(format!(
                "not a safetensors file: its header length {header_len} exceeds the format's limit of {MAX_HEADER_BYTES} bytes"
            )));
        }
        let header_end = 8 + header_len;
        if header_end > max_bytes {
            return Err(over(header_end));
        }
        if let Some(n) = size.filter(|&n| n < header_end) {
            return Err(fail(format!(
                "truncated: the header needs {header_end} bytes, the file has {n}"
            )));
        }
        let mut bytes = Vec::new();
        let header_end = usize::try_from(header_end).map_err(|_| over(header_end))?;
        reserve(&mut bytes, header_end).map_err(&fail)?;
        bytes.extend_from_slice(&len);
        bytes.resize(header_end, 0);
        reader
            .read_exact(&mut bytes[8..])
            .map_err(|_| fail("truncated inside its header".to_owned()))?;
        let (entries, data_len) = parse_header(&bytes[8..]).map_err(&fail)?;
        let total = u64::try_from(data_len)
            .ok()
            .and_then(|d| d.checked_add(header_end as u64))
            .ok_or_else(|| fail("its header declares more data than can be addressed".into()))?;
        if total > max_bytes {
            return Err(over(total));
        }
        match size {
            Some(n) if n < total => {
                return Err(fail(format!(
                    "truncated: the header declares {total} bytes, the file has {n}"
                )))
            }
            Some(n) if n > total => {
                return Err(fail(format!(
                    "{} bytes follow the {total} bytes the header declares",
                    n - total
                )))
            }
            _ => {}
        }
        let total = usize::try_from(total).map_err(|_| over(total))?;
        reserve(&mut bytes, total - header_end).map_err(&fail)?;
        bytes.resize(total, 0);
        reader.read_exact(&mut bytes[header_end..]).map_err(|_| {
            fail(format!(
                "truncated: the header declares {total} bytes, the file ends before"
            ))
        })?;
        let mut extra = [0u8; 1];
        if reader.read(&mut extra).is_ok_and(|n| n > 0) {
            return Err(fail(format!(
                "more bytes follow the {total} bytes the header declares"
            )));
        }
        Ok(TensorFile {
            source: source.to_owned(),
            bytes,
            data_start: header_end,
            entries,
        })
    }

    /// The tensors, in data order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Bytes held in memory (the whole file).
    pub fn bytes_held(&self) -> usize {
        self.bytes.len()
    }

    /// The path as shown in messages.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The tensor named `name`, if the file has it.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// The raw little-endian bytes of an entry.
    fn data(&self, entry: &Entry) -> &[u8] {
        let (start, end) = entry.offsets;
        &self.bytes[self.data_start + start..self.data_start + end]
    }

    /// Checks every entry against the tensors of `graph` the run reads from its caller
    /// (`wanted`): each must be one of them, with the graph's data type and dims.
    ///
    /// # Errors
    /// Every mismatch, one line each, naming the tensor and what the graph says about it.
    pub fn check_against(&self, graph: &Graph, wanted: &[TensorId]) -> Result<(), TensorFileError> {
        let mut by_name: HashMap<&str, TensorId> = HashMap::new();
        for id in graph.tensor_ids() {
            if let Some(t) = graph.get(id) {
                // The first of duplicate names wins, as everywhere else.
                by_name.entry(t.name.as_str()).or_insert(id);
            }
        }
        let wanted_set: HashSet<TensorId> = wanted.iter().copied().collect();
        let flow = graph.dataflow();
        let mut problems = Vec::new();
        for e in &self.entries {
            let name = shown(&e.name);
            let Some(&id) = by_name.get(e.name.as_str()) else {
                problems.push(format!("'{name}' is not a tensor of the graph"));
                continue;
            };
            let Some(t) = graph.get(id) else { continue };
            if !wanted_set.contains(&id) {
                let why = if let Some(node) = flow.producer(id).and_then(|n| graph.node(n)) {
                    format!(
                        "is written by node '{}', not read from the file",
                        shown(&node.name)
                    )
                } else if t.pass_by_value.is_some() {
                    "is passed by value: its value is in the graph file".to_owned()
                } else if t.is_virtual {
                    "is virtual: it never has a buffer".to_owned()
                } else {
                    "is read by no node".to_owned()
                };
                problems.push(format!("'{name}' {why}"));
                continue;
            }
            match graph.data_type(id).and_then(dtype_of) {
                Some(want) if want != e.dtype => problems.push(format!(
                    "input '{name}' is {:?} in the file, the graph says {}",
                    e.dtype,
                    graph.data_type(id).map_or("?", |d| d.name())
                )),
                _ => {}
            }
            let dims: Vec<i64> = e
                .shape
                .iter()
                .map(|&d| i64::try_from(d).unwrap_or(-1))
                .collect();
            if dims != t.dims {
                problems.push(format!(
                    "input '{name}' has shape {dims:?} in the file, the graph says {:?}",
                    t.dims
                ));
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        let inputs: Vec<String> = wanted
            .iter()
            .filter_map(|&id| graph.get(id).map(|t| shown(&t.name).to_string()))
            .collect();
        Err(TensorFileError(format!(
            "{}: {} (the graph's inputs: {})",
            shown_text(&self.source),
            problems.join("; "),
            inputs.join(", ")
        )))
    }

    /// The logical (packed) elements of entry `name` as a buffer of type `dt`.
    ///
    /// # Errors
    /// No such entry, a type rime cannot hold, or a data size that does not fit the type.
    pub fn buffer(&self, name: &str, dt: DataType) -> Result<HostBuffer, TensorFileError> {
        let fail = |what: String| TensorFileError(format!("{}: {what}", shown_text(&self.source)));
        let entry = self
            .entry(name)
            .ok_or_else(|| fail(format!("has no tensor '{}'", shown(name))))?;
        HostBuffer::from_le_bytes(dt, self.data(entry)).ok_or_else(|| {
            fail(format!(
                "input '{}' does not hold {dt} elements",
                shown(name)
            ))
        })
    }
}

/// Grows `bytes` by `more` without aborting when memory is short.
fn reserve(bytes: &mut Vec<u8>, more: usize) -> Result<(), String> {
    bytes
        .try_reserve_exact(more)
        .map_err(|_| format!("cannot allocate {more} bytes to read it"))
}

/// The entries of a header and the length of the data section they declare.
fn parse_header(header: &[u8]) -> Result<(Vec<Entry>, usize), String> {
    let bad = |e: serde_json::Error| format!("not a safetensors file: bad header: {e}");
    serde_json::from_slice::<Keys>(header).map_err(bad)?;
    let metadata: Metadata = serde_json::from_slice(header).map_err(bad)?;
    let mut entries = Vec::new();
    for name in metadata.offset_keys() {
        let Some(info) = metadata.info(&name) else {
            continue;
        };
        entries.push(Entry {
            name,
            dtype: info.dtype,
            shape: info.shape.clone(),
            offsets: info.data_offsets,
        });
    }
    Ok((entries, metadata.data_len()))
}
