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
//!
//! With `--json` the same run prints one document on stdout (`json_doc::run`), whatever the
//! outcome, and the lines for people go to stderr.

mod data;
mod fnv;
mod forward_twin;
mod memory;
mod padding;
mod progress;
mod ragged;
mod summary;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use rime_analyzer::{
    analyze, heuristics, render_report, Candidate, EngineKind, HeuristicsOptions, Selector, Target,
};
use rime_engines::cuda::CudaDevice;
use rime_engines::{engine_for, Engine, HostBuffer, Plan, VariantPack};
use rime_graph::json::ReadAs;
use rime_graph::{shown, shown_text, Graph, NodeId, TensorId};

use crate::human::{self, say};
use crate::json_doc::run::{NodeRunDoc, OutputDoc, RunDoc, RunStatus, FORMAT, VERSION};
use crate::json_doc::{self, ReadAsDoc};
use crate::output::OutputFile;
use crate::read::FormatArgs;
use data::Inputs;
use progress::Progress;
use summary::Summary;

/// Arguments of `rime run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Graph file (rime's format or a cuDNN frontend dump; see --format).
    pub file: PathBuf,
    #[command(flatten)]
    pub format: FormatArgs,
    /// Target profile: `auto` (this machine), `cpu`, or a device name (`rtx-5090`, `h100`...).
    #[arg(long, default_value = "auto", value_parser = super::target_args::target_names())]
    pub target: String,
    /// Pin an engine configuration (`cpu_reference`, `sm120`, `sm120/relay`, ...).
    #[arg(long, value_parser = clap::value_parser!(Selector))]
    pub engine: Option<Selector>,
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
    /// Print a JSON document (schemas/run.v1.schema.json) on stdout instead of the text, which
    /// goes to stderr: per node engine, route, workspace and time; per output its dims, a
    /// checksum and the non-finite count.
    #[arg(long)]
    pub json: bool,
}

/// What a run did, gathered for its JSON document.
#[derive(Default)]
struct Record {
    read_as: Option<ReadAs>,
    target: Option<String>,
    errors: Vec<String>,
    nodes: Vec<NodeRunDoc>,
    outputs: Vec<OutputDoc>,
    outputs_file: Option<String>,
}

impl Record {
    fn doc(self, args: &RunArgs, status: RunStatus) -> RunDoc {
        RunDoc {
            format: FORMAT.to_owned(),
            version: VERSION,
            file: shown_text(&args.file.display().to_string()).to_string(),
            read_as: self.read_as.map(ReadAsDoc::from),
            status,
            target: self.target,
            seed: args.seed,
            errors: self.errors,
            nodes: self.nodes,
            outputs: self.outputs,
            outputs_file: self.outputs_file,
        }
    }
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

/// Runs the command: exit 0 when every node ran, 1 otherwise. With `--json`, stdout holds the
/// run's document whatever the outcome (an error is also printed on stderr).
pub fn run(args: &RunArgs) -> anyhow::Result<ExitCode> {
    if !args.json {
        return run_graph(args, &mut Record::default()).map(exit_code);
    }
    human::to_stderr();
    let mut record = Record::default();
    let status = match run_graph(args, &mut record) {
        Ok(status) => status,
        Err(e) => {
            let message = format!("{e:#}");
            eprintln!("error: {message}");
            record.errors.push(message);
            RunStatus::Error
        }
    };
    json_doc::print(&record.doc(args, status))?;
    Ok(exit_code(status))
}

fn exit_code(status: RunStatus) -> ExitCode {
    if status == RunStatus::Ran {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The run itself: what it did goes to `record` as it happens (and to the human lines).
fn run_graph(args: &RunArgs, record: &mut Record) -> anyhow::Result<RunStatus> {
    let read = match crate::read::graph_file(&args.file, &args.format) {
        Ok(g) => g,
        Err(e) if args.json => {
            let message = format!("{e:#}");
            eprintln!("error: {message}");
            record.errors.push(message);
            return Ok(RunStatus::Invalid);
        }
        Err(e) => return Err(e),
    };
    record.read_as = Some(read.loaded.read_as);
    let problems = read.problems();
    let file = read.name;
    if !problems.is_empty() {
        say!("FAIL {}", shown_text(&file));
        for p in &problems {
            say!("  {p}");
        }
        record.errors = problems;
        return Ok(RunStatus::Invalid);
    }
    let graph = read.loaded.graph;
    // The text is not needed once the graph is valid (it may be large).
    drop(read.text);
    let mut reads = vec![("the graph", args.file.as_path())];
    reads.extend(args.inputs.as_deref().map(|p| ("the --inputs file", p)));
    let output = args
        .outputs
        .as_deref()
        .map(|p| OutputFile::prepare(p, &reads))
        .transpose()?;
    let engines = Engines::probe(&args.target);
    let target = target(&args.target, &engines)?;
    record.target = Some(target.name.clone());
    let report = analyze(&graph, &target);
    let options = HeuristicsOptions {
        pin: args.engine,
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
                    let message = format!(
                        "node '{}': {} {} it, but {} a GPU this machine cannot drive; use --engine cpu_reference or leave --engine out",
                        node_name(&graph, node),
                        undriveable.join(", "),
                        if undriveable.len() == 1 { "supports" } else { "support" },
                        if undriveable.len() == 1 { "needs" } else { "need" }
                    );
                    eprintln!("error: {message}");
                    record.errors.push(message);
                }
                let message = format!(
                    "no engine of this build can run node '{}'",
                    node_name(&graph, node)
                );
                say!("{message}:");
                human::text(render_report(&report));
                record.errors.push(message);
                record
                    .errors
                    .extend(super::refusals::refusals(&report, None));
                return Ok(RunStatus::Unsupported);
            }
        }
    }
    say!(
        "graph:  {} ({} nodes), target {}",
        shown_text(&file),
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
        // The sm120 engine compiles the plan's kernels with NVRTC (seconds, unless cached).
        let progress = (candidate.config.engine == EngineKind::Sm120).then(|| {
            Progress::start(&format!(
                "compiling the kernels of {} (NVRTC)",
                shown(&candidate.node_name)
            ))
        });
        let plan = engine.build_plan(&approved);
        if let Some(p) = progress {
            p.stop();
        }
        let plan = plan?;
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
            record.nodes.push(twin.run(&graph, &inputs, &mut tensors)?);
        }
        for &id in &plan.tensors().inputs {
            if let std::collections::btree_map::Entry::Vacant(slot) = tensors.entry(id) {
                slot.insert(inputs.make(&graph, id)?);
            }
        }
        record.nodes.push(execute(
            &graph,
            candidate,
            plan.as_ref(),
            &mut tensors,
            engine.as_ref(),
        )?);
    }

    let outputs: Vec<TensorId> = chosen
        .iter()
        .filter_map(|c| graph.node(c.node))
        .flat_map(|n| n.outputs.values().copied())
        .filter(|id| tensors.contains_key(id))
        .collect();
    // Ragged outputs as (B, H, S, D), the rows a sequence does not have zero.
    let mut unpacked = BTreeMap::new();
    for &id in outputs.iter().filter(|&&id| ragged::is_ragged(&graph, id)) {
        let mut held = |i: TensorId| {
            let buffer = tensors
                .get(&i)
                .context("the offsets or lengths of an output")?;
            ragged::integers(&graph, i, buffer)
        };
        let logical = ragged::unpack(&graph, id, &tensors[&id], &mut held)?;
        unpacked.insert(id, logical);
    }
    let shown_buffer = |id: TensorId| unpacked.get(&id).or_else(|| tensors.get(&id));
    let mut non_finite = Vec::new();
    for &id in &outputs {
        let buffer = shown_buffer(id).context("output vanished")?;
        let summary = Summary::of(&graph, id, buffer)?;
        say!("  {summary}");
        non_finite.extend(summary.non_finite());
        if args.json {
            record.outputs.push(summary.doc(&graph, id, buffer)?);
        }
    }
    // NaN and inf in the inputs propagate (docs/cpu-engine.md): say where they ended up, and
    // name given inputs that hold them even when no output does (Stats = +inf marks a row as
    // fully masked: it gives that row zero dQ, which the outputs alone would not explain).
    if !non_finite.is_empty() {
        say!("non-finite values in: {}", non_finite.join(", "));
    }
    let mut lengths = |i: TensorId| {
        let buffer = tensors.get(&i).context("a padding mask's lengths")?;
        ragged::integers(&graph, i, buffer)
    };
    let mut given = Vec::new();
    for &id in held.iter().filter(|&&id| inputs.given(&graph, id)) {
        let Some(buffer) = tensors.get(&id) else {
            continue;
        };
        let summary = if ragged::is_ragged(&graph, id) {
            Summary::of_held(&graph, id, buffer)
        } else {
            Summary::of(&graph, id, buffer)
        };
        let Ok(summary) = summary else { continue };
        if summary.nan + summary.inf == 0 {
            continue;
        }
        // NaN or inf only in a padded tensor's padding is harmless: say so (a note: what it
        // cannot tell leaves the count as it is, and never fails a run that ran).
        let padding = padding::rows_read(&graph, id, &mut lengths)
            .ok()
            .flatten()
            .and_then(|rows| padding::non_finite_past(&graph, id, buffer, &rows).ok())
            .unwrap_or(0);
        given.extend(summary.non_finite_in_padding(padding));
    }
    if !given.is_empty() && !non_finite.is_empty() {
        say!("  from non-finite inputs: {}", given.join(", "));
    } else if !given.is_empty() {
        say!(
            "non-finite values in given inputs (every output is finite): {}",
            given.join(", ")
        );
    }
    if let Some(output) = output {
        let shown_path = output.shown().to_owned();
        let written: Vec<(TensorId, &HostBuffer)> = outputs
            .iter()
            .filter_map(|&id| Some((id, shown_buffer(id)?)))
            .collect();
        data::write_safetensors(output, &graph, &written)?;
        say!("wrote {} tensors to {shown_path}", outputs.len());
        record.outputs_file = Some(shown_path);
    }
    Ok(RunStatus::Ran)
}

fn node_name(graph: &Graph, node: NodeId) -> String {
    graph
        .node(node)
        .map_or_else(String::new, |n| shown(&n.name).to_string())
}

/// Executes one plan over the tensors made so far, in its engine's memory; its outputs join
/// them. Host buffers move into a CPU plan's variant pack and back (no copies); a device
/// engine gets copies. Says what ran where and how long it took.
fn execute(
    graph: &Graph,
    candidate: &Candidate,
    plan: &dyn Plan,
    tensors: &mut BTreeMap<TensorId, HostBuffer>,
    engine: &dyn Engine,
) -> anyhow::Result<NodeRunDoc> {
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
        let span = data::span(graph, id)?;
        let zeros = HostBuffer::try_zeros(dt, span, &t.name)?;
        pack.insert(id, engine.upload_owned(zeros)?.0);
    }
    let mut workspace = engine.workspace(plan.workspace_size())?;
    let started = Instant::now();
    let progress = Progress::start(&format!("running {}", shown(&candidate.node_name)));
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
    let op = graph.node(candidate.node).map_or("", |n| n.op.tag());
    let route = candidate.config.route.map(|r| r.to_string());
    let workspace = plan.workspace_size();
    let milliseconds = elapsed.as_secs_f64() * 1e3;
    say!(
        "node:   {} ({op}) engine {} route {} workspace {workspace} B, {milliseconds:.3} ms",
        shown(&candidate.node_name),
        candidate.config.engine,
        route.as_deref().unwrap_or("-"),
    );
    for &id in &plan.tensors().outputs {
        let buffer = pack.take(&id.into()).context("output buffer vanished")?;
        tensors.insert(id, engine.download_owned(buffer)?);
    }
    Ok(NodeRunDoc {
        name: shown_text(&candidate.node_name).to_string(),
        op: op.to_owned(),
        forward_twin: false,
        engine: candidate.config.engine.to_string(),
        route,
        workspace_bytes: u64::try_from(workspace).unwrap_or(u64::MAX),
        milliseconds,
    })
}

fn tensor_name(graph: &Graph, id: TensorId) -> String {
    graph
        .get(id)
        .map_or_else(String::new, |t| shown(&t.name).to_string())
}
