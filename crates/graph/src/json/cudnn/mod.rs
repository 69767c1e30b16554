//! The cuDNN frontend's own serialized graphs (`Graph::serialize`, `repr()` of a Python
//! graph): read into a rime [`Graph`], and a rime graph written in that format.
//!
//! Both versions the frontend has written are read: `json_version` "1.0" (frontend up to
//! 1.26: `tensors` an object keyed by uid or name, refs by uid or name) and "2.0" (1.27 on:
//! `tensors` a list, each tensor with a uid, names optional labels, refs by uid, a `gid`).
//! Both spell floats as the hex digits of their bits (`"3E000000"` is 0.125), types as
//! `DataType_t` names (`HALF`, `BFLOAT16`, `FLOAT`, ...) and absent values as `null`. SDPA
//! backward (`SDPA_BWD`) and forward (`SDPA`) nodes are read; other tags are refused.
//!
//! What the frontend changes when it lowers a graph is undone, so that a dump taken after
//! `build_operation_graph` reads as the user's graph (see `lowering.rs`: K and V transposed to
//! (B, H, D, S), by-value tensors added for the scale and the dropout scales). cuDNN's default
//! scale (none: 1.0) is made explicit, since rime's default is 1/sqrt(Dqk). Ragged-offset links
//! are kept. Keys that do not change what is computed (`sm_count`, `gid`, versions, `alignment`,
//! the forward's `implementation` and `unfuse_fma`) are read and ignored; what would change it
//! and rime does not model (reordered layouts, scaled ragged offsets, base-2 Stats, FP8 /
//! MXFP8, paged caches, per-node compute types, unknown ports, keys or tags) is refused with
//! the file, line and column, like rime's own format. `docs/json-format.md` has the details.
//!
//! [`to_string`] writes graph JSON 2.0.

mod dtype;
mod hex;
mod lowering;
mod names;
mod ports;
mod read;
mod wire;
mod write;

pub use wire::JsonVersion;
pub use write::to_string;

use super::error::LoadError;
use crate::Graph;

/// Parses a cuDNN frontend graph dump (graph JSON 1.0 or 2.0); `source` names it in errors.
///
/// # Errors
/// As [`super::from_str`]: [`LoadError::Syntax`], [`LoadError::Format`] (an unknown or
/// unsupported version, tag, key, port or data type, a malformed hex float, something rime
/// does not model), [`LoadError::UnknownTensorName`], [`LoadError::UnknownUid`],
/// [`LoadError::AmbiguousUid`].
pub fn from_str(text: &str, source: &str) -> Result<Graph, LoadError> {
    from_str_with_version(text, source).map(|(graph, _)| graph)
}

/// [`from_str`], also saying which graph JSON version the dump is.
///
/// # Errors
/// As [`from_str`].
pub fn from_str_with_version(text: &str, source: &str) -> Result<(Graph, JsonVersion), LoadError> {
    let doc: wire::Document = super::parse(text, source)?;
    let graph = read::convert(&doc, text, source)?;
    Ok((graph, doc.json_version))
}
