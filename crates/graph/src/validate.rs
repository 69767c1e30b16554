//! Structural validation: is the graph well formed? (Support is the analyzer's question.)
//!
//! Every check reads the graph; nothing is rewritten. All problems are collected.

use std::collections::{BTreeMap, HashMap};

use crate::{
    DataType, Dataflow, Graph, GraphError, Node, OpKind, Port, Tensor, TensorId, ValidationErrors,
};

const HALF_TYPES: &[DataType] = &[DataType::F16, DataType::Bf16];
const F32_ONLY: &[DataType] = &[DataType::F32];
const I32_ONLY: &[DataType] = &[DataType::I32];
const INTEGERS: &[DataType] = &[DataType::I32, DataType::I64];

/// The logical sizes of one SDPA node, read off Q, K and V (also their JSON form in reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct SdpaShape {
    /// Batch.
    pub b: i64,
    /// Query heads.
    pub hq: i64,
    /// Key heads.
    pub hk: i64,
    /// Value heads.
    pub hv: i64,
    /// Query length.
    pub sq: i64,
    /// Key/value length.
    pub skv: i64,
    /// Q/K head dim.
    pub dqk: i64,
    /// V head dim.
    pub dv: i64,
}

impl SdpaShape {
    /// Reads the shape of an SDPA node, `None` when Q, K or V is missing or not rank 4.
    pub fn of(graph: &Graph, node: &Node) -> Option<SdpaShape> {
        let dims = |p: Port| -> Option<[i64; 4]> {
            graph.get(node.input(p)?)?.dims.as_slice().try_into().ok()
        };
        let [b, hq, sq, dqk] = dims(Port::Q)?;
        let [_, hk, skv, _] = dims(Port::K)?;
        let [_, hv, _, dv] = dims(Port::V)?;
        Some(SdpaShape {
            b,
            hq,
            hk,
            hv,
            sq,
            skv,
            dqk,
            dv,
        })
    }

    /// The dims a port must have exactly; `None` for ports with broadcast rules or no rule.
    pub fn exact_dims(&self, port: Port) -> Option<Vec<i64>> {
        let s = self;
        Some(match port {
            Port::K | Port::DK => vec![s.b, s.hk, s.skv, s.dqk],
            Port::V | Port::DV => vec![s.b, s.hv, s.skv, s.dv],
            Port::Q | Port::DQ => vec![s.b, s.hq, s.sq, s.dqk],
            Port::O | Port::DO => vec![s.b, s.hq, s.sq, s.dv],
            Port::Stats => vec![s.b, s.hq, s.sq, 1],
            Port::SeqLenQ | Port::SeqLenKv => vec![s.b, 1, 1, 1],
            Port::Sink | Port::DSink => vec![1, s.hq, 1, 1],
            Port::AttnScale
            | Port::Seed
            | Port::Offset
            | Port::DropoutScale
            | Port::DropoutScaleInv => vec![1, 1, 1, 1],
            Port::RngDump => s.scores_dims(),
            Port::Bias | Port::DBias | Port::DropoutMask => return None,
        })
    }

    /// The score scale of a node that sets none: 1/sqrt(Dqk) (`None` for a Dqk outside
    /// 1..=65535, which no engine runs).
    pub fn default_attn_scale(&self) -> Option<f32> {
        let d = u16::try_from(self.dqk).ok().filter(|d| *d > 0)?;
        Some(1.0 / f32::from(d).sqrt())
    }

    /// (B, Hq, Sq, Skv): the shape of the score matrix.
    pub fn scores_dims(&self) -> Vec<i64> {
        vec![self.b, self.hq, self.sq, self.skv]
    }
}

impl Graph {
    /// Checks the graph's structure: ports, references, names, uids, ranks, strides, shapes,
    /// data types and options, that virtual tensors connect nodes, and that the node
    /// dependencies form a DAG. Linear in the size of the graph.
    ///
    /// # Errors
    /// Every problem found, in a stable order (tensors first, then nodes, then the DAG).
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        let mut errors = Vec::new();
        if self.nodes().is_empty() {
            errors.push(GraphError::EmptyGraph);
        }
        let flow = self.dataflow();
        self.check_tensors(&mut errors);
        self.check_writers(&flow, &mut errors);
        for node in self.nodes() {
            self.check_node(node, &mut errors);
        }
        if let Err(e) = self.topological_order() {
            errors.push(e);
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(ValidationErrors(errors))
        }
    }

    fn check_tensors(&self, errors: &mut Vec<GraphError>) {
        let mut names: HashMap<&str, usize> = HashMap::new();
        let mut uids: BTreeMap<i64, &str> = BTreeMap::new();
        for (index, t) in self.tensors().iter().enumerate() {
            if t.name.is_empty() {
                errors.push(GraphError::EmptyName { index });
            } else if names.insert(&t.name, index).is_some() {
                errors.push(GraphError::DuplicateName {
                    name: t.name.clone(),
                });
            }
            if let Some(uid) = t.uid {
                if let Some(first) = uids.insert(uid, &t.name) {
                    errors.push(GraphError::DuplicateUid {
                        uid,
                        first: first.to_owned(),
                        second: t.name.clone(),
                    });
                }
            }
            check_layout(t, errors);
            self.check_value(t, errors);
            if let Some(offsets) = t.ragged_offset {
                self.check_ragged(t, offsets, errors);
            }
        }
        let mut node_names: HashMap<&str, ()> = HashMap::new();
        for (index, node) in self.nodes().iter().enumerate() {
            if node.name.is_empty() {
                errors.push(GraphError::EmptyNodeName { index });
            } else if node_names.insert(&node.name, ()).is_some() {
                errors.push(GraphError::DuplicateNodeName {
                    name: node.name.clone(),
                });
            }
        }
    }

    fn check_value(&self, t: &Tensor, errors: &mut Vec<GraphError>) {
        let Some(value) = t.pass_by_value else {
            return;
        };
        if t.element_count() != Some(1) {
            errors.push(GraphError::ByValueNotScalar {
                tensor: t.name.clone(),
                dims: t.dims.clone(),
            });
        }
        if t.is_virtual {
            errors.push(GraphError::VirtualByValue {
                tensor: t.name.clone(),
            });
        }
        if let Some(declared) = t.data_type {
            if declared != value.data_type() {
                errors.push(GraphError::ByValueTypeMismatch {
                    tensor: t.name.clone(),
                    found: value.data_type(),
                    declared,
                });
            }
        }
    }

    fn check_ragged(&self, t: &Tensor, offsets: TensorId, errors: &mut Vec<GraphError>) {
        let Some(o) = self.get(offsets) else {
            errors.push(GraphError::UnknownRaggedOffset {
                tensor: t.name.clone(),
                index: offsets.index(),
            });
            return;
        };
        if let Some(found) = self.data_type(offsets).filter(|d| !INTEGERS.contains(d)) {
            errors.push(GraphError::RaggedOffsetType {
                tensor: t.name.clone(),
                offsets: o.name.clone(),
                found,
                allowed: INTEGERS.to_vec(),
            });
        }
        let batch = t.dims.first().copied().unwrap_or(0);
        let expected = vec![batch.saturating_add(1), 1, 1, 1];
        if o.dims != expected {
            errors.push(GraphError::RaggedOffsetShape {
                tensor: t.name.clone(),
                offsets: o.name.clone(),
                found: o.dims.clone(),
                expected,
            });
        }
    }

    fn check_writers(&self, flow: &Dataflow, errors: &mut Vec<GraphError>) {
        let mut written: HashMap<TensorId, ()> = HashMap::new();
        for node in self.nodes() {
            for (&port, &t) in &node.outputs {
                let Some(tensor) = self.get(t) else { continue };
                if written.insert(t, ()).is_some() {
                    errors.push(GraphError::MultipleWriters {
                        tensor: tensor.name.clone(),
                        node: node.name.clone(),
                        port,
                    });
                }
                if node.inputs.values().any(|&i| i == t) {
                    errors.push(GraphError::AliasedOutput {
                        node: node.name.clone(),
                        port,
                        tensor: tensor.name.clone(),
                    });
                }
                if tensor.pass_by_value.is_some() {
                    errors.push(GraphError::ByValueOutput {
                        node: node.name.clone(),
                        port,
                        tensor: tensor.name.clone(),
                    });
                }
                if tensor.is_virtual && flow.readers(t).is_empty() {
                    errors.push(GraphError::UnreadVirtualOutput {
                        node: node.name.clone(),
                        port,
                        tensor: tensor.name.clone(),
                    });
                }
                if tensor.overlaps_itself() {
                    errors.push(GraphError::OverlappingOutput {
                        node: node.name.clone(),
                        port,
                        tensor: tensor.name.clone(),
                        dims: tensor.dims.clone(),
                        strides: tensor.strides.clone(),
                    });
                }
            }
        }
        for t in self.tensor_ids() {
            let tensor = &self.tensors()[t.index()];
            // Ragged offsets are read like inputs, by the tensors that name them.
            let read = !flow.readers(t).is_empty() || flow.is_ragged_offset(t);
            if tensor.is_virtual && flow.producer(t).is_none() && read {
                errors.push(GraphError::VirtualWithoutProducer {
                    tensor: tensor.name.clone(),
                });
            }
        }
    }

    fn check_node(&self, node: &Node, errors: &mut Vec<GraphError>) {
        for option in node.options.set_options() {
            if !node.op.options().contains(&option) {
                errors.push(GraphError::UnexpectedOption {
                    node: node.name.clone(),
                    op: node.op.tag(),
                    option,
                });
            }
        }
        let before = errors.len();
        for &port in node.op.required_inputs() {
            if node.input(port).is_none() {
                errors.push(missing(node, port));
            }
        }
        for &port in node.op.required_outputs() {
            if node.output(port).is_none() {
                errors.push(missing(node, port));
            }
        }
        let bound = node.inputs.iter().map(|(p, t)| (p, t, true));
        let bound = bound.chain(node.outputs.iter().map(|(p, t)| (p, t, false)));
        for (&port, &t, is_input) in bound {
            let accepted = if is_input {
                node.op.accepts_input(port)
            } else {
                node.op.accepts_output(port)
            };
            if !accepted {
                errors.push(GraphError::UnexpectedPort {
                    node: node.name.clone(),
                    op: node.op.tag(),
                    port,
                });
            }
            if self.get(t).is_none() {
                errors.push(GraphError::UnknownTensor {
                    node: node.name.clone(),
                    port,
                    index: t.index(),
                });
            }
        }
        if errors.len() > before {
            return; // shapes and types need every port resolved
        }
        self.check_ranks(node, errors);
        if errors.len() > before {
            return;
        }
        if let Some(shape) = SdpaShape::of(self, node) {
            self.check_shapes(node, &shape, errors);
        }
        self.check_types(node, errors);
        self.check_values_bound(node, errors);
    }

    /// A by-value tensor on an input port that engines read from a buffer would be ignored.
    fn check_values_bound(&self, node: &Node, errors: &mut Vec<GraphError>) {
        for (&port, &t) in &node.inputs {
            let Some(tensor) = self.get(t) else { continue };
            if tensor.pass_by_value.is_some() && !port.takes_value() {
                errors.push(GraphError::ByValueOnBufferPort {
                    node: node.name.clone(),
                    port,
                    tensor: tensor.name.clone(),
                });
            }
        }
    }

    fn check_ranks(&self, node: &Node, errors: &mut Vec<GraphError>) {
        for (port, t) in ports(node) {
            let Some(tensor) = self.get(t) else { continue };
            if tensor.rank() != 4 {
                errors.push(GraphError::BadRank {
                    tensor: tensor.name.clone(),
                    port,
                    found: tensor.rank(),
                    expected: 4,
                });
            } else if is_attention_operand(port) && tensor.strides.last() != Some(&1) {
                errors.push(GraphError::LastStrideNotOne {
                    tensor: tensor.name.clone(),
                    port,
                    found: tensor.strides.last().copied().unwrap_or(0),
                });
            }
        }
    }

    fn check_shapes(&self, node: &Node, shape: &SdpaShape, errors: &mut Vec<GraphError>) {
        let scores = shape.scores_dims();
        for (port, t) in ports(node) {
            let Some(tensor) = self.get(t) else { continue };
            let mismatch = |expected: Vec<i64>| GraphError::ShapeMismatch {
                node: node.name.clone(),
                port,
                tensor: tensor.name.clone(),
                found: tensor.dims.clone(),
                expected,
            };
            match port {
                Port::Bias | Port::DropoutMask => {
                    let ok = tensor
                        .dims
                        .iter()
                        .zip(&scores)
                        .all(|(&d, &f)| d == 1 || d == f);
                    if !ok {
                        errors.push(GraphError::NotBroadcastable {
                            node: node.name.clone(),
                            port,
                            tensor: tensor.name.clone(),
                            found: tensor.dims.clone(),
                            full: scores.clone(),
                        });
                    }
                }
                Port::DBias => {
                    let bias = node.input(Port::Bias).and_then(|b| self.get(b));
                    if let Some(bias) = bias.filter(|b| b.dims != tensor.dims) {
                        errors.push(mismatch(bias.dims.clone()));
                    }
                }
                _ => {
                    if let Some(expected) = shape.exact_dims(port).filter(|e| *e != tensor.dims) {
                        errors.push(mismatch(expected));
                    }
                }
            }
        }
    }

    fn check_types(&self, node: &Node, errors: &mut Vec<GraphError>) {
        let q_type = node.input(Port::Q).and_then(|q| self.data_type(q));
        for (port, t) in ports(node) {
            let Some(tensor) = self.get(t) else { continue };
            let Some(found) = self.data_type(t) else {
                errors.push(GraphError::DataTypeUnset {
                    tensor: tensor.name.clone(),
                    which: if tensor.is_virtual {
                        "intermediate"
                    } else {
                        "io"
                    },
                });
                continue;
            };
            let allowed: &[DataType] = match port {
                Port::Stats | Port::Sink | Port::DSink | Port::AttnScale => F32_ONLY,
                Port::DropoutScale | Port::DropoutScaleInv => F32_ONLY,
                Port::SeqLenQ | Port::SeqLenKv => I32_ONLY,
                Port::Seed | Port::Offset => INTEGERS,
                Port::DropoutMask | Port::RngDump => &DataType::ALL,
                _ => HALF_TYPES,
            };
            if !allowed.contains(&found) {
                errors.push(GraphError::DataTypeNotAllowed {
                    tensor: tensor.name.clone(),
                    port,
                    found,
                    allowed: allowed.to_vec(),
                });
            } else if allowed == HALF_TYPES {
                if let Some(expected) = q_type.filter(|&q| q != found && q.is_half()) {
                    errors.push(GraphError::DataTypeMismatch {
                        tensor: tensor.name.clone(),
                        port,
                        found,
                        expected,
                    });
                }
            }
        }
    }
}

fn missing(node: &Node, port: Port) -> GraphError {
    GraphError::MissingPort {
        node: node.name.clone(),
        port,
    }
}

/// Every bound port of the node, inputs first.
fn ports(node: &Node) -> impl Iterator<Item = (Port, TensorId)> + '_ {
    node.inputs
        .iter()
        .chain(node.outputs.iter())
        .map(|(&p, &t)| (p, t))
}

/// Ports whose tensors are rows of a matrix the kernels read or write with unit last stride.
fn is_attention_operand(port: Port) -> bool {
    matches!(
        port,
        Port::Q
            | Port::K
            | Port::V
            | Port::O
            | Port::DO
            | Port::Stats
            | Port::DQ
            | Port::DK
            | Port::DV
            | Port::Bias
            | Port::DBias
    )
}

fn check_layout(t: &Tensor, errors: &mut Vec<GraphError>) {
    if t.dims.is_empty() || t.dims.len() != t.strides.len() {
        errors.push(GraphError::StrideCount {
            tensor: t.name.clone(),
            dims: t.dims.len(),
            strides: t.strides.len(),
        });
        return;
    }
    let mut bad = false;
    for (axis, &value) in t.dims.iter().enumerate() {
        if value < 1 {
            bad = true;
            errors.push(GraphError::NonPositiveDim {
                tensor: t.name.clone(),
                axis,
                value,
            });
        }
    }
    for (axis, &value) in t.strides.iter().enumerate() {
        if value < 0 {
            bad = true;
            errors.push(GraphError::NegativeStride {
                tensor: t.name.clone(),
                axis,
                value,
            });
        }
    }
    let bytes = t.span_elements().and_then(|s| s.checked_mul(8));
    let fits = |n: Option<u64>| n.is_some_and(|n| i64::try_from(n).is_ok());
    let overflows = !(fits(t.element_count()) && fits(bytes));
    if !bad && overflows {
        errors.push(GraphError::SizeOverflow {
            tensor: t.name.clone(),
            dims: t.dims.clone(),
            strides: t.strides.clone(),
        });
    }
}

/// Convenience for builders and tests: the shape of node `node`, when it is an SDPA node with
/// rank-4 Q, K and V.
pub fn sdpa_shape(graph: &Graph, node: crate::NodeId) -> Option<SdpaShape> {
    let node = graph.node(node)?;
    matches!(node.op, OpKind::SdpaForward | OpKind::SdpaBackward)
        .then(|| SdpaShape::of(graph, node))
        .flatten()
}

#[cfg(test)]
mod tests {
    use crate::{Context, DataType, Graph, GraphError, Port, Scalar, SdpaBackwardAttrs, Tensor};

    /// A one-batch, one-head backward with `attrs` (their tensors added by `extra`).
    fn backward(extra: impl FnOnce(&mut Graph) -> SdpaBackwardAttrs) -> Graph {
        let mut g = Graph::new(Context::with_io(DataType::Bf16));
        let dims = [1, 1, 16, 64];
        let [q, k, v, o, d_o] =
            ["Q", "K", "V", "O", "dO"].map(|n| g.tensor(Tensor::packed(n, &dims)));
        let stats = Tensor::packed("Stats", &[1, 1, 16, 1]).with_data_type(DataType::F32);
        let stats = g.tensor(stats);
        let attrs = extra(&mut g);
        g.sdpa_backward(q, k, v, o, d_o, stats, attrs)
            .expect("the builder takes its own tensors");
        g
    }

    fn by_value(g: &mut Graph, name: &str, value: Scalar) -> crate::TensorId {
        g.tensor(Tensor::packed(name, &[1, 1, 1, 1]).with_value(value))
    }

    #[test]
    fn a_value_on_a_port_read_from_a_buffer_is_an_error() {
        // One batch: the (B, 1, 1, 1) sequence lengths are one element, so STR013's
        // element-count rule alone would let them through, and an engine would ignore them.
        let g = backward(|g| {
            let q = by_value(g, "seq_q", Scalar::I32(8));
            let kv = by_value(g, "seq_kv", Scalar::I32(8));
            SdpaBackwardAttrs::new().padding(q, kv)
        });
        let errors = g.validate().expect_err("by-value sequence lengths").0;
        let ports: Vec<Port> = errors
            .iter()
            .filter_map(|e| match e {
                GraphError::ByValueOnBufferPort { port, .. } => Some(*port),
                _ => None,
            })
            .collect();
        assert_eq!(ports, [Port::SeqLenQ, Port::SeqLenKv], "{errors:?}");
    }

    #[test]
    fn a_value_on_a_scalar_port_is_accepted() {
        let g = backward(|g| {
            let scale = by_value(g, "scale", Scalar::F32(0.125));
            SdpaBackwardAttrs::new().attn_scale_tensor(scale)
        });
        g.validate().expect("Attn_scale takes a value");
    }
}
