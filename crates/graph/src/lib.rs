//! rime-graph: SDPA forward and backward graphs in the style of the cuDNN frontend graph API.
//!
//! A [`Graph`] holds [`Tensor`]s and [`Node`]s in arenas addressed by typed ids. Builders add
//! nodes ([`Graph::sdpa_backward`], [`Graph::sdpa_forward`]); [`Graph::validate`] checks the
//! structure and collects every problem. Support for an engine is the analyzer's question
//! (crate `rime-analyzer`), not this crate's.
//!
//! ```
//! use rime_graph::{Context, DataType, Graph, SdpaBackwardAttrs, Tensor};
//!
//! let mut g = Graph::new(Context::with_io(DataType::Bf16));
//! let (b, h, s, d) = (2, 8, 128, 64);
//! let q = g.tensor(Tensor::packed("Q", &[b, h, s, d]));
//! let k = g.tensor(Tensor::packed("K", &[b, h, s, d]));
//! let v = g.tensor(Tensor::packed("V", &[b, h, s, d]));
//! let o = g.tensor(Tensor::packed("O", &[b, h, s, d]));
//! let d_o = g.tensor(Tensor::packed("dO", &[b, h, s, d]));
//! let stats = g.tensor(Tensor::packed("Stats", &[b, h, s, 1]).with_data_type(DataType::F32));
//! let grads = g
//!     .sdpa_backward(q, k, v, o, d_o, stats, SdpaBackwardAttrs::new().causal().deterministic())
//!     .unwrap();
//! assert_eq!(g.get(grads.dq).unwrap().dims, vec![b, h, s, d]);
//! g.validate().unwrap();
//! ```

mod context;
mod dataflow;
mod dtype;
mod error;
mod graph;
pub mod json;
mod node;
mod overlap;
mod port;
mod sdpa;
mod shown;
mod tensor;
mod validate;

pub use context::Context;
pub use dataflow::Dataflow;
pub use dtype::DataType;
pub use error::{GraphError, ValidationErrors};
pub use graph::{Graph, SdpaBackwardGrads, SdpaForwardOutputs};
pub use json::LoadError;
pub use node::{Node, NodeId, OpKind};
pub use overlap::layout_overlaps;
pub use port::{Port, Sequence};
pub use sdpa::{DiagonalAlignment, SdpaBackwardAttrs, SdpaForwardAttrs, SdpaOptions};
pub use shown::{shown, shown_list, shown_text, Shown, NAME_CHARS, TEXT_CHARS};
pub use tensor::{packed_strides, Scalar, Tensor, TensorId};
pub use validate::{sdpa_shape, SdpaShape};
