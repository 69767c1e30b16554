//! Who writes and who reads each tensor, found in one pass over the nodes' ports so that the
//! questions asked of every tensor (graph inputs and outputs, the dependency DAG, validation)
//! cost O(tensors + ports) in all, not O(tensors x nodes).

use crate::{Graph, NodeId, TensorId};

/// Producers, readers and ragged-offset links of every tensor of one graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dataflow {
    /// The first node (in node order) that writes each tensor.
    producer: Vec<Option<NodeId>>,
    /// The nodes that read each tensor, in node order (a node reading it twice counts once).
    readers: Vec<Vec<NodeId>>,
    /// Tensors some tensor names as its ragged offsets.
    ragged_offset: Vec<bool>,
}

impl Dataflow {
    /// The dataflow of `graph`. Ports bound to ids outside the graph are skipped (validation
    /// reports them).
    pub fn of(graph: &Graph) -> Dataflow {
        let n = graph.tensors().len();
        let mut flow = Dataflow {
            producer: vec![None; n],
            readers: vec![Vec::new(); n],
            ragged_offset: vec![false; n],
        };
        for id in graph.node_ids() {
            let Some(node) = graph.node(id) else { continue };
            for t in node.outputs.values() {
                if let Some(slot) = flow.producer.get_mut(t.index()) {
                    slot.get_or_insert(id);
                }
            }
            for t in node.inputs.values() {
                if let Some(readers) = flow.readers.get_mut(t.index()) {
                    if readers.last() != Some(&id) {
                        readers.push(id);
                    }
                }
            }
        }
        for t in graph.tensors() {
            if let Some(slot) = t
                .ragged_offset
                .and_then(|o| flow.ragged_offset.get_mut(o.index()))
            {
                *slot = true;
            }
        }
        flow
    }

    /// The node that writes `tensor` (the first, when a malformed graph has several).
    pub fn producer(&self, tensor: TensorId) -> Option<NodeId> {
        self.producer.get(tensor.index()).copied().flatten()
    }

    /// The nodes that read `tensor`, in node order.
    pub fn readers(&self, tensor: TensorId) -> &[NodeId] {
        self.readers.get(tensor.index()).map_or(&[], Vec::as_slice)
    }

    /// True when some tensor names `tensor` as its ragged offsets.
    pub fn is_ragged_offset(&self, tensor: TensorId) -> bool {
        self.ragged_offset
            .get(tensor.index())
            .copied()
            .unwrap_or(false)
    }
}
