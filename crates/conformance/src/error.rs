//! Why a harness case could not run (as opposed to running and failing its check).

use rime_analyzer::ApproveError;
use rime_engines::cuda::CudaError;
use rime_engines::EngineError;
use rime_graph::GraphError;

/// A case that could not be run to the end.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HarnessError {
    /// The case's graph could not be built.
    #[error("graph: {0}")]
    Graph(#[from] GraphError),
    /// The analyzer did not approve the configuration asked for.
    #[error("approval: {0}")]
    Approve(#[from] ApproveError),
    /// The engine refused or failed.
    #[error("{0}")]
    Engine(#[from] EngineError),
    /// A device call of the harness itself failed.
    #[error("{0}")]
    Cuda(#[from] CudaError),
    /// A tensor of the case could not be sized or filled (its span does not fit memory).
    #[error("tensor {tensor} could not be sized or filled")]
    Sizing {
        /// The tensor's port name.
        tensor: String,
    },
    /// The bytes around a tensor or the workspace changed during execution: a write out of
    /// bounds.
    #[error(
        "guard zone of {tensor} overwritten: first changed byte at offset {offset} from the \
         tensor's start ({side} it), 0x{expected:02x} -> 0x{found:02x}"
    )]
    GuardOverwritten {
        /// The tensor (or `workspace`).
        tensor: String,
        /// Byte offset of the first changed byte from the tensor's first byte (negative: before).
        offset: i64,
        /// `before` or `after`.
        side: &'static str,
        /// The guard pattern byte.
        expected: u8,
        /// What was found there.
        found: u8,
    },
}
