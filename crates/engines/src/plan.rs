//! Plans: an approved configuration made executable, with its exact workspace size and the
//! tensors it reads and writes.

use std::fmt::Debug;

use rime_analyzer::EngineConfig;
use rime_graph::{Graph, Node, TensorId};

use crate::{Binding, EngineError, MemoryNeeds, VariantPack, Workspace};

/// An executable plan for one node.
pub trait Plan: Debug + Send + Sync {
    /// The configuration the analyzer approved.
    fn config(&self) -> &EngineConfig;

    /// Exact workspace bytes `execute` needs: the analyzer's `WorkspaceLayout` total.
    fn workspace_size(&self) -> usize;

    /// The tensors the plan reads or writes, each of which needs a variant-pack buffer.
    fn tensors(&self) -> &PlanTensors;

    /// Host memory `execute` allocates for itself, beyond the caller's buffers and workspace
    /// (known before it runs, so that a caller can refuse a problem that would not fit).
    /// Engines whose work happens in device memory the caller provides need none: the
    /// default.
    fn scratch(&self) -> MemoryNeeds {
        MemoryNeeds::new()
    }

    /// Checks a variant pack without executing.
    ///
    /// # Errors
    /// As [`VariantPack::check`], plus engine-specific refusals (e.g. memory location).
    fn check(&self, pack: &VariantPack) -> Result<Binding, EngineError>;

    /// Checks the pack and the workspace, then runs; on any refusal nothing is written.
    ///
    /// # Errors
    /// As [`Plan::check`], [`EngineError::WorkspaceTooSmall`], or input values the engine
    /// refuses (e.g. [`EngineError::SeqLenOutOfRange`]).
    fn execute(&self, pack: &mut VariantPack, workspace: &mut Workspace)
        -> Result<(), EngineError>;
}

/// The tensors of a node that need buffers: every port tensor not passed by value, and the
/// offsets tensors of its ragged (THD) tensors (read like inputs, listed once each).
///
/// A plan covers one node, so a virtual tensor that carries data from one node to the next (O
/// and Stats of a forward feeding a backward) must live somewhere between the two plans: it is
/// listed in `virtuals` too, and the caller gives it a buffer of its intermediate data type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanTensors {
    /// Inputs, in port order, then the ragged offsets tensors.
    pub inputs: Vec<TensorId>,
    /// Outputs, in port order.
    pub outputs: Vec<TensorId>,
    /// The virtual ones among inputs and outputs.
    pub virtuals: Vec<TensorId>,
}

impl PlanTensors {
    /// The buffered tensors of `node`.
    pub fn of(graph: &Graph, node: &Node) -> PlanTensors {
        let buffered = |id: &TensorId| graph.get(*id).is_some_and(|t| t.pass_by_value.is_none());
        let mut inputs: Vec<TensorId> = node.inputs.values().copied().filter(buffered).collect();
        let outputs: Vec<TensorId> = node.outputs.values().copied().filter(buffered).collect();
        let offsets: Vec<TensorId> = node
            .inputs
            .values()
            .chain(node.outputs.values())
            .filter_map(|&id| graph.get(id)?.ragged_offset)
            .filter(buffered)
            .collect();
        for id in offsets {
            if !inputs.contains(&id) {
                inputs.push(id);
            }
        }
        let virtuals = inputs
            .iter()
            .chain(&outputs)
            .copied()
            .filter(|id| graph.get(*id).is_some_and(|t| t.is_virtual))
            .collect();
        PlanTensors {
            inputs,
            outputs,
            virtuals,
        }
    }

    /// Inputs then outputs.
    pub fn all(&self) -> Vec<TensorId> {
        self.inputs.iter().chain(&self.outputs).copied().collect()
    }
}

/// Refuses a workspace smaller than `needed` bytes.
///
/// # Errors
/// [`EngineError::WorkspaceTooSmall`].
pub fn check_workspace(needed: usize, workspace: &Workspace) -> Result<(), EngineError> {
    if workspace.len() < needed {
        return Err(EngineError::WorkspaceTooSmall {
            needed,
            given: workspace.len(),
        });
    }
    Ok(())
}
