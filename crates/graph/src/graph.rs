//! The graph: tensors and nodes in arenas, builders, and the node dependency DAG.

use std::collections::BTreeMap;

use petgraph::graph::DiGraph;

use crate::sdpa::SdpaCommon;
use crate::{
    Context, DataType, Dataflow, GraphError, Node, NodeId, OpKind, Port, Scalar, SdpaBackwardAttrs,
    SdpaForwardAttrs, Tensor, TensorId,
};

/// A graph of SDPA nodes over tensors held by index (no shared mutable pointers).
///
/// Building never validates and never rewrites what the user gave; [`Graph::validate`] checks
/// structure and the analyzer checks support, both by reading.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Graph {
    /// Data types and name.
    pub context: Context,
    tensors: Vec<Tensor>,
    nodes: Vec<Node>,
}

/// Tensors returned by [`Graph::sdpa_backward`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdpaBackwardGrads {
    /// Node added.
    pub node: NodeId,
    /// Query gradient.
    pub dq: TensorId,
    /// Key gradient.
    pub dk: TensorId,
    /// Value gradient.
    pub dv: TensorId,
    /// Bias gradient, when asked for.
    pub dbias: Option<TensorId>,
    /// Sink gradient, when asked for.
    pub dsink: Option<TensorId>,
    /// Dropout mask dump, when asked for.
    pub rng_dump: Option<TensorId>,
}

/// Tensors returned by [`Graph::sdpa_forward`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdpaForwardOutputs {
    /// Node added.
    pub node: NodeId,
    /// Attention output.
    pub o: TensorId,
    /// Log-sum-exp (f32), when asked for.
    pub stats: Option<TensorId>,
}

impl Graph {
    /// An empty graph with the given context.
    pub fn new(context: Context) -> Self {
        Graph {
            context,
            tensors: Vec::new(),
            nodes: Vec::new(),
        }
    }

    /// Adds a tensor and returns its id.
    pub fn tensor(&mut self, tensor: Tensor) -> TensorId {
        let id = TensorId(u32::try_from(self.tensors.len()).unwrap_or(u32::MAX));
        self.tensors.push(tensor);
        id
    }

    /// Adds a node as given (ports, options) and returns its id. Builders call this; loaders
    /// use it for nodes read from files. Nothing is checked until [`Graph::validate`].
    pub fn add_node(&mut self, node: Node) -> NodeId {
        let id = NodeId(u32::try_from(self.nodes.len()).unwrap_or(u32::MAX));
        self.nodes.push(node);
        id
    }

    /// All tensors, indexed by [`TensorId::index`].
    pub fn tensors(&self) -> &[Tensor] {
        &self.tensors
    }

    /// All nodes, indexed by [`NodeId::index`].
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Tensor ids in order.
    pub fn tensor_ids(&self) -> impl Iterator<Item = TensorId> + '_ {
        (0..self.tensors.len()).map(|i| TensorId(i as u32))
    }

    /// Node ids in order.
    pub fn node_ids(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.nodes.len()).map(|i| NodeId(i as u32))
    }

    /// The tensor with this id, if it belongs to this graph.
    pub fn get(&self, id: TensorId) -> Option<&Tensor> {
        self.tensors.get(id.index())
    }

    /// The tensor with this id for editing (layout of an output, uid, ...), if it exists.
    pub fn get_mut(&mut self, id: TensorId) -> Option<&mut Tensor> {
        self.tensors.get_mut(id.index())
    }

    /// The node with this id, if it belongs to this graph.
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.index())
    }

    /// The tensor with this name.
    pub fn find(&self, name: &str) -> Option<TensorId> {
        self.tensor_ids()
            .find(|&id| self.tensors[id.index()].name == name)
    }

    /// The tensor with this uid.
    pub fn find_uid(&self, uid: i64) -> Option<TensorId> {
        self.tensor_ids()
            .find(|&id| self.tensors[id.index()].uid == Some(uid))
    }

    /// The effective data type of a tensor: declared, else the type of its by-value payload,
    /// else inferred from the context.
    pub fn data_type(&self, id: TensorId) -> Option<DataType> {
        let t = self.get(id)?;
        let declared = t.data_type.or(t.pass_by_value.map(Scalar::data_type));
        self.context.infer(declared, t.is_virtual)
    }

    /// Adds an SDPA backward node; returns the gradient tensors, created non-virtual with the
    /// dims and strides of their forward twins (change them with [`Graph::get_mut`]).
    ///
    /// # Errors
    /// [`GraphError::UnknownTensor`] when a given id does not belong to this graph.
    #[allow(clippy::too_many_arguments)] // the cuDNN frontend's positional Q, K, V, O, dO, Stats
    pub fn sdpa_backward(
        &mut self,
        q: TensorId,
        k: TensorId,
        v: TensorId,
        o: TensorId,
        d_o: TensorId,
        stats: TensorId,
        attrs: SdpaBackwardAttrs,
    ) -> Result<SdpaBackwardGrads, GraphError> {
        let name = self.node_name(&attrs.common, "sdpa_backward");
        let mut inputs = BTreeMap::from([
            (Port::Q, q),
            (Port::K, k),
            (Port::V, v),
            (Port::O, o),
            (Port::DO, d_o),
            (Port::Stats, stats),
        ]);
        self.bind_optional_inputs(&name, &attrs.common, &mut inputs)?;
        let dq = self.twin_output(&name, Port::DQ, q)?;
        let dk = self.twin_output(&name, Port::DK, k)?;
        let dv = self.twin_output(&name, Port::DV, v)?;
        let mut outputs = BTreeMap::from([(Port::DQ, dq), (Port::DK, dk), (Port::DV, dv)]);
        let dbias = match (attrs.dbias, inputs.get(&Port::Bias)) {
            (true, Some(&bias)) => Some(self.twin_output(&name, Port::DBias, bias)?),
            (true, None) => {
                return Err(GraphError::MissingPort {
                    node: name,
                    port: Port::Bias,
                })
            }
            (false, _) => None,
        };
        let dsink = match (attrs.dsink, inputs.get(&Port::Sink)) {
            (true, Some(&sink)) => Some(self.twin_output(&name, Port::DSink, sink)?),
            (true, None) => {
                return Err(GraphError::MissingPort {
                    node: name,
                    port: Port::Sink,
                })
            }
            (false, _) => None,
        };
        let rng_dump = if attrs.rng_dump {
            Some(self.scores_output(&name, q, k)?)
        } else {
            None
        };
        for (port, id) in [
            (Port::DBias, dbias),
            (Port::DSink, dsink),
            (Port::RngDump, rng_dump),
        ] {
            if let Some(id) = id {
                outputs.insert(port, id);
            }
        }
        let node = self.add_node(Node {
            name,
            op: OpKind::SdpaBackward,
            inputs,
            outputs,
            options: attrs.common.options,
        });
        Ok(SdpaBackwardGrads {
            node,
            dq,
            dk,
            dv,
            dbias,
            dsink,
            rng_dump,
        })
    }

    /// Adds an SDPA forward node; O is (B, Hq, Sq, Dv) with Q's layout order, Stats (B, Hq, Sq,
    /// 1) f32 packed when asked for.
    ///
    /// # Errors
    /// [`GraphError::UnknownTensor`] when a given id does not belong to this graph.
    pub fn sdpa_forward(
        &mut self,
        q: TensorId,
        k: TensorId,
        v: TensorId,
        attrs: SdpaForwardAttrs,
    ) -> Result<SdpaForwardOutputs, GraphError> {
        let name = self.node_name(&attrs.common, "sdpa_forward");
        let mut inputs = BTreeMap::from([(Port::Q, q), (Port::K, k), (Port::V, v)]);
        self.bind_optional_inputs(&name, &attrs.common, &mut inputs)?;
        let qt = self.checked(&name, Port::Q, q)?.clone();
        let vt = self.checked(&name, Port::V, v)?.clone();
        let mut dims = qt.dims.clone();
        if let (Some(last), Some(&dv)) = (dims.last_mut(), vt.dims.last()) {
            *last = dv;
        }
        let o = self.tensor(Tensor::packed(format!("{name}::O"), &dims));
        let mut outputs = BTreeMap::from([(Port::O, o)]);
        let stats = if attrs.generate_stats {
            if let Some(last) = dims.last_mut() {
                *last = 1;
            }
            let t = Tensor::packed(format!("{name}::Stats"), &dims).with_data_type(DataType::F32);
            let id = self.tensor(t);
            outputs.insert(Port::Stats, id);
            Some(id)
        } else {
            None
        };
        let node = self.add_node(Node {
            name,
            op: OpKind::SdpaForward,
            inputs,
            outputs,
            options: attrs.common.options,
        });
        Ok(SdpaForwardOutputs { node, o, stats })
    }

    /// The node that writes `tensor`, if any (the first, when a malformed graph has several).
    pub fn producer(&self, tensor: TensorId) -> Option<NodeId> {
        self.node_ids()
            .find(|&n| self.nodes[n.index()].outputs.values().any(|&t| t == tensor))
    }

    /// The nodes that read `tensor`.
    pub fn consumers(&self, tensor: TensorId) -> Vec<NodeId> {
        self.node_ids()
            .filter(|&n| self.nodes[n.index()].inputs.values().any(|&t| t == tensor))
            .collect()
    }

    /// The ports whose tensors name `offsets` as their ragged offsets: (node, port, tensor),
    /// in node then port order.
    pub fn ragged_users(&self, offsets: TensorId) -> Vec<(NodeId, Port, TensorId)> {
        self.node_ids()
            .flat_map(|n| {
                let node = &self.nodes[n.index()];
                node.inputs
                    .iter()
                    .chain(&node.outputs)
                    .map(move |(&port, &t)| (n, port, t))
            })
            .filter(|&(_, _, t)| {
                self.get(t)
                    .is_some_and(|t| t.ragged_offset == Some(offsets))
            })
            .collect()
    }

    /// Producers and readers of every tensor, in one pass (see [`Dataflow`]).
    pub fn dataflow(&self) -> Dataflow {
        Dataflow::of(self)
    }

    /// The dependency DAG: one petgraph node per graph node (weight = [`NodeId`]), an edge
    /// producer -> consumer per tensor passed between them (weight = [`TensorId`]).
    pub fn dependency_graph(&self) -> DiGraph<NodeId, TensorId> {
        let flow = self.dataflow();
        let mut dag = DiGraph::with_capacity(self.nodes.len(), self.nodes.len());
        let handles: Vec<_> = self.node_ids().map(|n| dag.add_node(n)).collect();
        for consumer in self.node_ids() {
            for &t in self.nodes[consumer.index()].inputs.values() {
                if let Some(producer) = flow.producer(t) {
                    dag.add_edge(handles[producer.index()], handles[consumer.index()], t);
                }
            }
        }
        dag
    }

    /// Nodes in an order where every producer comes before its consumers.
    ///
    /// # Errors
    /// [`GraphError::Cycle`] naming a node on a cycle.
    pub fn topological_order(&self) -> Result<Vec<NodeId>, GraphError> {
        let dag = self.dependency_graph();
        petgraph::algo::toposort(&dag, None)
            .map(|order| order.into_iter().map(|h| dag[h]).collect())
            .map_err(|cycle| GraphError::Cycle {
                node: self.nodes[dag[cycle.node_id()].index()].name.clone(),
            })
    }

    /// Tensors no node writes: what the caller must supply (non-virtual ones get buffers).
    pub fn graph_inputs(&self) -> Vec<TensorId> {
        let flow = self.dataflow();
        self.tensor_ids()
            .filter(|&t| flow.producer(t).is_none())
            .filter(|&t| !flow.readers(t).is_empty() || flow.is_ragged_offset(t))
            .collect()
    }

    /// Non-virtual tensors some node writes: what the caller receives.
    pub fn graph_outputs(&self) -> Vec<TensorId> {
        let flow = self.dataflow();
        self.tensor_ids()
            .filter(|&t| flow.producer(t).is_some() && !self.tensors[t.index()].is_virtual)
            .collect()
    }

    fn node_name(&self, common: &SdpaCommon, default: &str) -> String {
        if let Some(name) = &common.name {
            return name.clone();
        }
        let taken = |n: &str| self.nodes.iter().any(|node| node.name == n);
        if !taken(default) {
            return default.to_owned();
        }
        (1..)
            .map(|i| format!("{default}_{i}"))
            .find(|n| !taken(n))
            .unwrap_or_default()
    }

    fn bind_optional_inputs(
        &self,
        node: &str,
        common: &SdpaCommon,
        inputs: &mut BTreeMap<Port, TensorId>,
    ) -> Result<(), GraphError> {
        for &(port, id) in &common.inputs {
            inputs.insert(port, id);
        }
        for (&port, &id) in inputs.iter() {
            self.checked(node, port, id)?;
        }
        Ok(())
    }

    fn checked(&self, node: &str, port: Port, id: TensorId) -> Result<&Tensor, GraphError> {
        self.get(id).ok_or_else(|| GraphError::UnknownTensor {
            node: node.to_owned(),
            port,
            index: id.index(),
        })
    }

    fn twin_output(
        &mut self,
        node: &str,
        port: Port,
        twin: TensorId,
    ) -> Result<TensorId, GraphError> {
        let t = self.checked(node, port, twin)?;
        let mut out = Tensor::new(format!("{node}::{}", port.name()), &t.dims, &t.strides);
        if port == Port::DSink {
            out.data_type = Some(DataType::F32);
        }
        Ok(self.tensor(out))
    }

    fn scores_output(
        &mut self,
        node: &str,
        q: TensorId,
        k: TensorId,
    ) -> Result<TensorId, GraphError> {
        let (qd, kd) = (
            self.checked(node, Port::Q, q)?.dims.clone(),
            self.checked(node, Port::K, k)?.dims.clone(),
        );
        let dims = match (qd.as_slice(), kd.as_slice()) {
            ([b, h, sq, _], [_, _, skv, _]) => vec![*b, *h, *sq, *skv],
            _ => vec![1, 1, 1, 1],
        };
        Ok(self.tensor(Tensor::packed(format!("{node}::RNG_DUMP"), &dims)))
    }
}
