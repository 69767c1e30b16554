//! `rime run FILE`: load, analyze, pick the top candidate, build the plan, make inputs, execute
//! and write outputs, saying what it did.
//!
//! Nodes run in dependency order, each with its top heuristic candidate (or the `--engine`
//! pin); a tensor one node writes feeds the nodes that read it. A backward node whose O and
//! Stats are neither given nor produced gets them from a forward run of the same attention
//! first, so that they are consistent with Q, K and V.
//!
//! Everything that can be refused is refused before computing: the graph, the output path
//! (never a file the run reads; reserved at once), the `--inputs` file (every tensor in it
//! must be one the run reads), O and Stats that no forward twin can make unambiguously, and
//! the host memory the whole run needs.

mod data;
mod forward_twin;
mod memory;
mod progress;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use rime_analyzer::{
    analyze, heuristics, render_report, Candidate, EngineKind, HeuristicsOptions, Target,
};
use rime_engines::cuda::CudaDevice;
use rime_engines::{engine_for, Engine, HostBuffer, Plan, VariantPack};
use rime_graph::{json, shown, Graph, NodeId, TensorId};

use crate::output::OutputFile;
use data::{Inputs, Summary};

/// Arguments of `rime run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Graph file (JSON, format rime.graph v1).
    pub file: PathBuf,
    /// Target profile: `auto` (this machine), `cpu`, or a device name (`rtx-5090`, `h100`...).
    #[arg(long, default_value = "auto", value_parser = super::target_args::target_names())]
    pub target: String,
    /// Pin an engine configuration (`cpu_reference`, `sm120`, `sm120/relay`, ...).
    #[arg(long, value_parser = super::target_args::selector)]
    pub engine: Option<String>,
    /// Input tensors by graph tensor name (safetensors); missing ones are seeded random.
    #[arg(long)]
    pub inputs: Option<PathBuf>,
    /// Where to write the output tensors (safetensors, by graph tensor name).
    #[arg(long)]
    pub outputs: Option<PathBuf>,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Most host memory the run may use (bytes; K, M, G, T suffixes); it is also refused
    /// beyond the memory available when it starts.
    #[arg(long, value_parser = crate::limits::parse_bytes)]
    pub max_memory: Option<u64>,
}

/// The engines this machine can execute: the CPU always, sm120 when a CUDA device is usable.
struct Engines {
    device: Option<Arc<CudaDevice>>,
}

impl Engines {
    /// Probes CUDA (never panics); without it, says why and keeps the CPU engine only.
    fn probe(target: &str) -> Engines {
        if target == "cpu" {
            return Engines { device: None };
        }
        match CudaDevice::open_default(0) {
            Ok(d) => Engines {
                device: Some(Arc::new(d)),
            },
            Err(e) => {
                eprintln!("note: {e}; only the CPU engine can run here");
                Engines { device: None }
            }
        }
    }

    fn get(&self, kind: EngineKind) -> Option<Box<dyn Engine>> {
        engine_for(kind, self.device.as_ref()).ok()
    }
}

/// `auto` is this machine: device 0's properties when CUDA is usable, else the CPU.
fn target(name: &str, engines: &Engines) -> anyhow::Result<Target> {
    if name == "auto" && engines.device.is_some() {
        return Ok(rime_engines::cuda::auto_target(0)?);
    }
    let name = if name == "auto" { "cpu" } else { name };
    Target::by_name(name).with_context(|| {
        let known: Vec<String> = Target::all().into_iter().map(|t| t.name).collect();
        format!(
            "unknown target '{name}' (known: auto, {})",
            known.join(", ")
        )
    })
}

/// The candidate to run for `node`: the top one this build can execute.
fn choose<'a>(node: NodeId, ranked: &'a [Candidate], engines: &Engines) -> Option<&'a Candidate> {
    let mine = || ranked.iter().filter(move |c| c.node == node);
    let top = mine().next()?;
    if engines.get(top.config.engine).is_some() {
        return Some(top);
    }
    let fallback = mine().find(|c| engines.get(c.config.engine).is_some());
    if let Some(f) = fallback {
        eprintln!(
            "note: node '{}': top candidate {} needs a GPU this machine cannot drive; running {} instead",
            shown(&top.node_name),
            top.config.label(),
            f.config.label()
        );
    }
    fallback
}

/// Runs the command.
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    let text = crate::read::graph_text(&args.file)?;
    let file = args.file.display().to_string();
    let graph = json::from_str(&text, &file)?;
    if let Err(errors) = graph.validate() {
        println!("FAIL {}", rime_graph::shown_text(&file));
        let describer = json::Describer::new(&text, &file, &graph);
        for e in &errors.0 {
            println!("  {}", describer.describe(e));
        }
        return Ok(ExitCode::FAILURE);
    }
    drop(text);
    let mut reads = vec![("the graph", args.file.as_path())];
    reads.extend(args.inputs.as_deref().map(|p| ("the --inputs file", p)));
    let output = args
        .outputs
        .as_deref()
        .map(|p| OutputFile::prepare(p, &reads))
        .transpose()?;
    let engines = Engines::probe(&args.target);
    let target = target(&args.target, &engines)?;
    let report = analyze(&graph, &target);
    let options = HeuristicsOptions {
        pin: args.engine.clone(),
        ..HeuristicsOptions::default()
    };
    let ranked = heuristics(&report, &options);
    let order = graph.topological_order().context("graph has a cycle")?;
    let mut chosen = Vec::new();
    for &node in &order {
        match choose(node, &ranked, &engines) {
            Some(c) => chosen.push(c),
            None => {
                // Supported configurations this machine cannot drive: the user pinned a GPU
                // engine where CUDA is unavailable. Say so before the report.
                let undriveable: Vec<String> = ranked
                    .iter()
                    .filter(|c| c.node == node && engines.get(c.config.engine).is_none())
                    .map(|c| c.config.label())
                    .collect();
                if !undriveable.is_empty() {
                    eprintln!(
                        "error: node '{}': {} supports it, but needs a GPU this machine cannot drive; use --engine cpu_reference or leave --engine out",
                        node_name(&graph, node),
                        undriveable.join(", ")
                    );
                }
                println!(
                    "no engine of this build can run node '{}':",
                    node_name(&graph, node)
                );
                print!("{}", render_report(&report));
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    println!(
        "graph:  {} ({} nodes), target {}",
        rime_graph::shown_text(&file),
        order.len(),
        target.name
    );

    let inputs = Inputs::new(
        &graph,
        args.inputs.as_deref(),
        args.seed,
        &crate::tensor_file::caller_inputs(&graph),
    )?;
    let mut twins = BTreeMap::new();
    for node in forward_twin::needed(&graph, &inputs, &order)? {
        twins.insert(node, forward_twin::Twin::prepare(&graph, node)?);
    }
    let mut plans = Vec::new();
    for candidate in &chosen {
        let approved = report.approve(candidate)?;
        let engine = engines
            .get(candidate.config.engine)
            .context("engine vanished")?;
        let plan = engine.build_plan(&approved)?;
        plans.push((*candidate, engine, plan));
    }
    // Every tensor the run will hold, once, and the largest scratch of any one plan.
    let mut held: Vec<TensorId> = plans
        .iter()
        .flat_map(|(_, _, p)| p.tensors().all())
        .chain(twins.values().flat_map(forward_twin::Twin::originals))
        .collect();
    held.sort_unstable();
    held.dedup();
    let scratch = plans
        .iter()
        .map(|(_, _, p)| p.scratch())
        .chain(twins.values().map(forward_twin::Twin::scratch))
        .collect();
    let needs = memory::needs(&graph, &held, scratch, inputs.file_bytes());
    memory::check(&needs, args.max_memory)?;

    let mut tensors: BTreeMap<TensorId, HostBuffer> = BTreeMap::new();
    for (candidate, engine, plan) in &plans {
        if let Some(twin) = twins.get(&candidate.node) {
            twin.run(&graph, &inputs, &mut tensors)?;
        }
        for &id in &plan.tensors().inputs {
            if let std::collections::btree_map::Entry::Vacant(slot) = tensors.entry(id) {
                slot.insert(inputs.make(&graph, id)?);
            }
        }
        execute(
            &graph,
            candidate,
            plan.as_ref(),
            &mut tensors,
            engine.as_ref(),
        )?;
    }

    let outputs: Vec<TensorId> = chosen
        .iter()
        .filter_map(|c| graph.node(c.node))
        .flat_map(|n| n.outputs.values().copied())
        .filter(|id| tensors.contains_key(id))
        .collect();
    let mut non_finite = Vec::new();
    for &id in &outputs {
        let summary = Summary::of(&graph, id, &tensors[&id])?;
        println!("  {summary}");
        non_finite.extend(summary.non_finite());
    }
    if !non_finite.is_empty() {
        // NaN and inf in the inputs propagate (docs/cpu-engine.md): say where they ended up.
        println!("non-finite values in: {}", non_finite.join(", "));
        let given: Vec<String> = held
            .iter()
            .filter(|&&id| inputs.given(&graph, id))
            .filter_map(|&id| {
                Summary::of(&graph, id, tensors.get(&id)?)
                    .ok()?
                    .non_finite()
            })
            .collect();
        if !given.is_empty() {
            println!("  from non-finite inputs: {}", given.join(", "));
        }
    }
    if let Some(output) = output {
        let shown_path = output.shown().to_owned();
        let written: Vec<(TensorId, &HostBuffer)> =
            outputs.iter().map(|&id| (id, &tensors[&id])).collect();
        data::write_safetensors(output, &graph, &written)?;
        println!("wrote {} tensors to {shown_path}", outputs.len());
    }
    Ok(ExitCode::SUCCESS)
}

fn node_name(graph: &Graph, node: NodeId) -> String {
    graph
        .node(node)
        .map_or_else(String::new, |n| shown(&n.name).to_string())
}

/// Executes one plan over the tensors made so far, in its engine's memory; its outputs join
/// them. Host buffers move into a CPU plan's variant pack and back (no copies); a device
/// engine gets copies.
fn execute(
    graph: &Graph,
    candidate: &Candidate,
    plan: &dyn Plan,
    tensors: &mut BTreeMap<TensorId, HostBuffer>,
    engine: &dyn Engine,
) -> anyhow::Result<()> {
    let mut pack = VariantPack::new();
    for &id in &plan.tensors().inputs {
        let host = tensors
            .remove(&id)
            .with_context(|| format!("no data for '{}'", tensor_name(graph, id)))?;
        let (buffer, kept) = engine.upload_owned(host)?;
        if let Some(kept) = kept {
            tensors.insert(id, kept);
        }
        pack.insert(id, buffer);
    }
    for &id in &plan.tensors().outputs {
        let t = graph.get(id).context("output vanished")?;
        let name = shown(&t.name);
        let dt = graph
            .data_type(id)
            .with_context(|| format!("'{name}' has no data type"))?;
        let span = t
            .span_elements()
            .and_then(|s| usize::try_from(s).ok())
            .with_context(|| format!("'{name}' is too large for this machine"))?;
        let zeros = HostBuffer::try_zeros(dt, span, &t.name)?;
        pack.insert(id, engine.upload_owned(zeros)?.0);
    }
    let mut workspace = engine.workspace(plan.workspace_size())?;
    let started = Instant::now();
    let progress = progress::Progress::start(&candidate.node_name);
    let result = plan.execute(&mut pack, &mut workspace);
    progress.stop();
    // Inputs the engine took come back whether or not the plan ran.
    for &id in &plan.tensors().inputs {
        if tensors.contains_key(&id) {
            continue;
        }
        if let Some(buffer) = pack.take(&id.into()) {
            tensors.insert(id, engine.download_owned(buffer)?);
        }
    }
    result?;
    let elapsed = started.elapsed();
    let route = candidate
        .config
        .route
        .map_or_else(|| "-".to_owned(), |r| r.to_string());
    println!(
        "node:   {} ({}) engine {} route {} workspace {} B, {:.3} ms",
        shown(&candidate.node_name),
        graph.node(candidate.node).map_or("", |n| n.op.tag()),
        candidate.config.engine,
        route,
        plan.workspace_size(),
        elapsed.as_secs_f64() * 1e3
    );
    for &id in &plan.tensors().outputs {
        let buffer = pack.take(&id.into()).context("output buffer vanished")?;
        tensors.insert(id, engine.download_owned(buffer)?);
    }
    Ok(())
}

fn tensor_name(graph: &Graph, id: TensorId) -> String {
    graph
        .get(id)
        .map_or_else(String::new, |t| shown(&t.name).to_string())
}
