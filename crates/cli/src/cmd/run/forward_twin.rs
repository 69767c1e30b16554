//! The forward twin of a backward node: same Q, K, V, bias, masks, sink and scale, writing the
//! backward's O and Stats, so `rime run` can give a backward consistent O and Stats.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use anyhow::Context as _;
use rime_analyzer::{analyze, heuristics, render_report, HeuristicsOptions, Target};
use rime_engines::{CpuEngine, Engine, HostBuffer};
use rime_graph::{Graph, Node, NodeId, OpKind, Port, TensorId};

use super::data::Inputs;

/// Ports the forward shares with the backward.
const SHARED: [Port; 8] = [
    Port::Q,
    Port::K,
    Port::V,
    Port::AttnScale,
    Port::Bias,
    Port::SeqLenQ,
    Port::SeqLenKv,
    Port::Sink,
];

/// Runs the forward twin of backward `node` on the CPU engine and stores O and Stats (and any
/// input it had to make) in `tensors`, keyed by the original graph's ids.
pub fn run(
    graph: &Graph,
    node: NodeId,
    inputs: &Inputs,
    tensors: &mut BTreeMap<TensorId, HostBuffer>,
) -> anyhow::Result<()> {
    let bwd = graph.node(node).context("unknown node")?;
    let mut twin = Graph::new(graph.context.clone());
    let mut map: Vec<(TensorId, TensorId)> = Vec::new(); // (original, twin)
    let mut copy = |twin: &mut Graph, id: TensorId| -> anyhow::Result<TensorId> {
        let t = graph.get(id).context("unknown tensor")?.clone();
        let new = twin.tensor(t);
        map.push((id, new));
        Ok(new)
    };
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
        pin: Some("cpu_reference".to_owned()),
        ..HeuristicsOptions::default()
    };
    let ranked = heuristics(&report, &pin);
    let Some(candidate) = ranked.iter().find(|c| c.node == fwd_id) else {
        anyhow::bail!(
            "the forward that would give O and Stats is not supported:\n{}",
            render_report(&report)
        );
    };
    let plan = CpuEngine.build_plan(&report.approve(candidate)?)?;
    let mut twin_tensors = BTreeMap::new();
    for &(orig, new) in &map {
        if plan.tensors().inputs.contains(&new) {
            let buffer = match tensors.entry(orig) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => e.insert(inputs.make(graph, orig)?),
            };
            twin_tensors.insert(new, buffer.clone());
        }
    }
    println!("making O and Stats with a forward run (not given):");
    super::execute(
        &twin,
        candidate,
        plan.as_ref(),
        &mut twin_tensors,
        &CpuEngine,
    )?;
    // Only what was not given: a given O (or Stats) is the user's to keep.
    for &(orig, new) in &map {
        if let Some(out) = twin_tensors.remove(&new) {
            if plan.tensors().outputs.contains(&new) && !inputs.given(graph, orig) {
                tensors.insert(orig, out);
            }
        }
    }
    Ok(())
}
