//! The forward twin of a backward node: same Q, K, V, bias, masks, sink, scale and dropout,
//! writing the backward's O and Stats, so `rime run` can give a backward consistent O and Stats.
//!
//! A twin runs only where it cannot overwrite anything: for a backward node whose O and
//! Stats are both neither given (`--inputs`) nor produced by a node, and read by no other
//! node. A graph it cannot complete unambiguously (one of the two made elsewhere, or shared
//! by several nodes) is refused, naming the tensor.

use std::collections::BTreeMap;

use anyhow::{bail, Context as _};
use rime_analyzer::{
    analyze, heuristics, render_report, Candidate, EngineKind, HeuristicsOptions, Selector, Target,
};
use rime_engines::{CpuEngine, Engine, HostBuffer, MemoryNeeds, Plan};
use rime_graph::{shown, Dataflow, Graph, Node, NodeId, OpKind, Port, TensorId};

use super::data::Inputs;
use crate::json_doc::run::NodeRunDoc;

/// Ports the forward shares with the backward.
const SHARED: [Port; 12] = [
    Port::Q,
    Port::K,
    Port::V,
    Port::AttnScale,
    Port::Bias,
    Port::SeqLenQ,
    Port::SeqLenKv,
    Port::Sink,
    // The backward's dropout is the forward's: its O must be the dropped one.
    Port::Seed,
    Port::Offset,
    Port::DropoutMask,
    Port::DropoutScale,
];

/// Where a backward's O or Stats comes from.
enum Source {
    /// The `--inputs` file.
    Given,
    /// A node of the graph.
    Produced(NodeId),
    /// Nowhere yet.
    Missing,
}

fn source(graph: &Graph, flow: &Dataflow, inputs: &Inputs, id: TensorId) -> Source {
    if inputs.given(graph, id) {
        Source::Given
    } else if let Some(node) = flow.producer(id) {
        Source::Produced(node)
    } else {
        Source::Missing
    }
}

fn name(graph: &Graph, id: TensorId) -> String {
    graph
        .get(id)
        .map_or_else(String::new, |t| shown(&t.name).to_string())
}

fn node_name(graph: &Graph, id: NodeId) -> String {
    graph
        .node(id)
        .map_or_else(String::new, |n| shown(&n.name).to_string())
}

/// The backward nodes of `order` that get a forward twin.
///
/// # Errors
/// A backward node whose O or Stats is missing while the other is given or produced, or a
/// missing O or Stats that several nodes read: the twin would have to guess.
pub fn needed(graph: &Graph, inputs: &Inputs, order: &[NodeId]) -> anyhow::Result<Vec<NodeId>> {
    let flow = graph.dataflow();
    let mut twins = Vec::new();
    for &id in order {
        let Some(node) = graph.node(id).filter(|n| n.op == OpKind::SdpaBackward) else {
            continue;
        };
        let (Some(o), Some(stats)) = (node.input(Port::O), node.input(Port::Stats)) else {
            continue;
        };
        let here = node_name(graph, id);
        let said = |port: &str, t: TensorId| match source(graph, &flow, inputs, t) {
            Source::Given => format!("its {port} '{}' is given in --inputs", name(graph, t)),
            Source::Produced(p) => format!(
                "its {port} '{}' is produced by node '{}'",
                name(graph, t),
                node_name(graph, p)
            ),
            Source::Missing => String::new(),
        };
        let missing = |t| matches!(source(graph, &flow, inputs, t), Source::Missing);
        match (missing(o), missing(stats)) {
            (false, false) => {}
            (true, true) => {
                for t in [o, stats] {
                    let readers = flow.readers(t);
                    if readers.len() > 1 {
                        let names: Vec<String> = readers
                            .iter()
                            .map(|&n| format!("'{}'", node_name(graph, n)))
                            .collect();
                        bail!(
                            "'{}' is neither given in --inputs nor produced by a node, and nodes {} read it: rime run cannot tell which attention's forward would make it; give it in --inputs or add the forward node that produces it",
                            name(graph, t),
                            names.join(", ")
                        );
                    }
                }
                twins.push(id);
            }
            (o_missing, _) => {
                let (lacking, port, other, other_port) = if o_missing {
                    (o, "O", stats, "Stats")
                } else {
                    (stats, "Stats", o, "O")
                };
                bail!(
                    "node '{here}': {port} '{}' is neither given in --inputs nor produced by a node, while {}; rime run makes O and Stats only together, by a forward of the same attention, which would not match that {other_port}: give '{}' in --inputs, or have a node produce it",
                    name(graph, lacking),
                    said(other_port, other),
                    name(graph, lacking)
                );
            }
        }
    }
    Ok(twins)
}

/// Copies tensor `id` of `graph` into `twin` (once: a tensor bound to two ports is one tensor
/// in the twin too), with its ragged offsets tensor, recording (original, copy) in `map`.
fn copy_tensor(
    graph: &Graph,
    twin: &mut Graph,
    map: &mut Vec<(TensorId, TensorId)>,
    id: TensorId,
) -> anyhow::Result<TensorId> {
    if let Some(&(_, new)) = map.iter().find(|(orig, _)| *orig == id) {
        return Ok(new);
    }
    let mut t = graph.get(id).context("unknown tensor")?.clone();
    if let Some(offsets) = t.ragged_offset {
        t.ragged_offset = Some(copy_tensor(graph, twin, map, offsets)?);
    }
    let new = twin.tensor(t);
    map.push((id, new));
    Ok(new)
}

/// A planned forward twin: its own one-node graph (tensors copied from the original) and its
/// CPU plan.
pub struct Twin {
    graph: Graph,
    /// (original id, twin id) of every tensor copied.
    map: Vec<(TensorId, TensorId)>,
    candidate: Candidate,
    plan: Box<dyn Plan>,
}

impl Twin {
    /// Builds the twin of backward `node` and its CPU plan.
    ///
    /// # Errors
    /// The node is not a backward with O and Stats, or the forward is not supported.
    pub fn prepare(graph: &Graph, node: NodeId) -> anyhow::Result<Twin> {
        let bwd = graph.node(node).context("unknown node")?;
        let mut twin = Graph::new(graph.context.clone());
        let mut map: Vec<(TensorId, TensorId)> = Vec::new();
        let mut copy = |twin: &mut Graph, id: TensorId| copy_tensor(graph, twin, &mut map, id);
        let mut fwd = Node {
            name: format!("{}::forward", bwd.name),
            op: OpKind::SdpaForward,
            inputs: BTreeMap::new(),
            outputs: BTreeMap::new(),
            options: bwd.options.clone(),
        };
        fwd.options.deterministic = false;
        for port in SHARED {
            if let Some(id) = bwd.input(port) {
                fwd.inputs.insert(port, copy(&mut twin, id)?);
            }
        }
        for port in [Port::O, Port::Stats] {
            let id = bwd.input(port).context("backward without O or Stats")?;
            fwd.outputs.insert(port, copy(&mut twin, id)?);
        }
        let fwd_id = twin.add_node(fwd);
        let target = Target::by_name("cpu").context("no cpu target")?;
        let report = analyze(&twin, &target);
        let pin = HeuristicsOptions {
            pin: Some(Selector::engine(EngineKind::CpuReference)),
            ..HeuristicsOptions::default()
        };
        let ranked = heuristics(&report, &pin);
        let Some(candidate) = ranked.into_iter().find(|c| c.node == fwd_id) else {
            bail!(
                "the forward that would give O and Stats is not supported:\n{}",
                render_report(&report)
            );
        };
        let plan = CpuEngine.build_plan(&report.approve(&candidate)?)?;
        Ok(Twin {
            graph: twin,
            map,
            candidate,
            plan,
        })
    }

    /// Host memory the twin's execution allocates for itself.
    pub fn scratch(&self) -> MemoryNeeds {
        self.plan.scratch()
    }

    /// The original graph's tensors the twin reads or writes.
    pub fn originals(&self) -> impl Iterator<Item = TensorId> + '_ {
        self.map.iter().map(|&(orig, _)| orig)
    }

    /// Runs the twin on the CPU engine: its inputs come from `tensors` (made first when
    /// absent), and O and Stats join `tensors` under the original graph's ids. Says what ran.
    ///
    /// # Errors
    /// Making an input or executing fails.
    pub fn run(
        &self,
        graph: &Graph,
        inputs: &Inputs,
        tensors: &mut BTreeMap<TensorId, HostBuffer>,
    ) -> anyhow::Result<NodeRunDoc> {
        let mut twin_tensors = BTreeMap::new();
        for &(orig, new) in &self.map {
            if self.plan.tensors().inputs.contains(&new) {
                let buffer = match tensors.remove(&orig) {
                    Some(b) => b,
                    None => inputs.make(graph, orig)?,
                };
                twin_tensors.insert(new, buffer);
            }
        }
        crate::human::say!("making O and Stats with a forward run (not given):");
        let ran = super::execute(
            &self.graph,
            &self.candidate,
            self.plan.as_ref(),
            &mut twin_tensors,
            &CpuEngine,
        );
        // Inputs go back whatever happened; O and Stats only when the forward ran.
        for &(orig, new) in &self.map {
            if let Some(buffer) = twin_tensors.remove(&new) {
                let is_output = self.plan.tensors().outputs.contains(&new);
                if !is_output || ran.is_ok() {
                    tensors.insert(orig, buffer);
                }
            }
        }
        ran.map(|run| NodeRunDoc {
            forward_twin: true,
            ..run
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The twin of a backward with dropout applies the same dropout: O must be the dropped
    /// one, or the backward's rowsum(dO * O) would not match its own P.
    #[test]
    fn the_twin_forward_carries_the_backwards_dropout() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/valid/bwd_dropout_mask.json"
        );
        let graph = rime_graph::json::load_file(path).expect("fixture");
        let bwd = graph.node_ids().next().expect("one node");
        let twin = Twin::prepare(&graph, bwd).expect("twin");
        let fwd = &twin.graph.nodes()[0];
        assert_eq!(fwd.op, OpKind::SdpaForward);
        for port in [Port::DropoutMask, Port::DropoutScale] {
            let (orig, copy) = (graph.nodes()[0].input(port), fwd.input(port));
            assert!(orig.is_some() && copy.is_some(), "{port}");
            let (a, b) = (graph.get(orig.unwrap()), twin.graph.get(copy.unwrap()));
            assert_eq!(a.map(|t| &t.name), b.map(|t| &t.name), "{port}");
        }
    }
}
