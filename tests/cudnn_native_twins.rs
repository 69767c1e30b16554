//! Every real cuDNN frontend dump is the graph its native twin says it is.
//!
//! The twin of a dump of case `C` is `tests/fixtures/cudnn/native/C.json`: the same graph
//! written in rime's own format from the case's parameters (`real/cases/C.json`: sizes,
//! layout, types, masks, bias, GQA, sink, dropout, ragged offsets, scale) and the names the
//! generator and the frontend give tensors, not from the dump. A cuDNN default rime does not
//! share is written out (no scale given: `"attn_scale": 1.0`). The dump, with the frontend's
//! lowering undone by the reader, and its twin must have the same tensors (names, dims,
//! strides, effective types, values, ragged offsets), ports, options and shapes, and the uids
//! the twin gives; and where the CPU engine takes the graph, both must compute bit-identical
//! outputs from the same seeded inputs.

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use rime::analyzer::{analyze, EngineKind, Target};
use rime::engines::cpu::{packed_offsets, View4};
use rime::engines::{CpuEngine, Engine, HostBuffer, TensorKey, VariantPack, Workspace};
use rime::graph::{Graph, NodeId, Port, SdpaShape, TensorId};
use rime_conformance::fill;
use support::cudnn::{case_of, read};
use support::math::math_of;

/// A real dump, the graph read from it and its twin.
struct Pair {
    dump: String,
    twin: String,
    graph: Graph,
    native: Graph,
}

fn twin_path(case: &str) -> PathBuf {
    support::root()
        .join("tests/fixtures/cudnn/native")
        .join(format!("{case}.json"))
}

/// Every real dump with its twin (a dump without one fails: a new dump needs its twin).
fn pairs() -> Vec<Pair> {
    let dumps = support::fixtures("cudnn/real");
    assert!(!dumps.is_empty(), "no real dumps");
    dumps
        .iter()
        .map(|path| {
            let dump = support::relative(path);
            let twin_file = twin_path(&case_of(path));
            let twin = support::relative(&twin_file);
            let native = support::load_and_validate(&twin_file)
                .unwrap_or_else(|e| panic!("{dump}: its native twin {twin} does not load: {e}"));
            let graph = read(path).1.unwrap_or_else(|e| panic!("{e}"));
            Pair {
                dump,
                twin,
                graph,
                native,
            }
        })
        .collect()
}

#[test]
fn every_real_dump_reads_as_its_native_twin() {
    for p in pairs() {
        let (dump, twin) = (&p.dump, &p.twin);
        assert_eq!(
            math_of(&p.graph),
            math_of(&p.native),
            "{dump} and its twin {twin} differ"
        );
        let shapes = |g: &Graph| -> Vec<Option<SdpaShape>> {
            g.nodes().iter().map(|n| SdpaShape::of(g, n)).collect()
        };
        assert_eq!(shapes(&p.graph), shapes(&p.native), "{dump}: shapes");
        assert!(shapes(&p.graph).iter().all(Option::is_some), "{dump}");
        for t in p.native.tensors().iter().filter(|t| t.uid.is_some()) {
            let read_uid = p.graph.find(&t.name).and_then(|id| p.graph.get(id)?.uid);
            assert_eq!(read_uid, t.uid, "{dump}: uid of `{}`", t.name);
        }
    }
}

/// Each twin stands for a case of the real corpus.
#[test]
fn every_native_twin_has_its_case() {
    let cases = support::root().join("tests/fixtures/cudnn/real/cases");
    let twins = support::fixtures("cudnn/native");
    assert!(!twins.is_empty());
    for twin in &twins {
        let case = cases.join(twin.file_name().unwrap_or_default());
        assert!(
            case.is_file(),
            "{}: no case record {}",
            support::relative(twin),
            support::relative(&case)
        );
    }
}

/// FNV-1a of a tensor's name: the seed of its values, the same in a dump and its twin.
fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The first input port `id` is bound to, with its node.
fn consumer(graph: &Graph, id: TensorId) -> Option<(NodeId, Port)> {
    graph.node_ids().find_map(|n| {
        let node = graph.node(n)?;
        node.inputs
            .iter()
            .find(|(_, t)| **t == id)
            .map(|(port, _)| (n, *port))
    })
}

/// Sequence lengths for `batch` rows of a sequence of `s`: full for the first, shorter after
/// (`s - b * s / (2 * batch)`), so that padding masks something.
fn lengths(batch: usize, s: i64) -> Vec<f64> {
    length_counts(batch, s).into_iter().map(f64::from).collect()
}

/// [`lengths`] as integers.
fn length_counts(batch: usize, s: i64) -> Vec<i32> {
    let rows = i64::try_from(batch).unwrap_or(i64::MAX).max(1);
    (0..rows)
        .map(|b| i32::try_from(s - b * s / (2 * rows)).unwrap_or(i32::MAX))
        .collect()
}

/// The buffer of input `id`: values seeded by the tensor's name, shaped by the port it feeds
/// (sequence lengths within the sequence, Stats around ln(Skv) as a forward leaves them,
/// everything else in [-1, 1)).
fn seeded(graph: &Graph, id: TensorId) -> HostBuffer {
    let t = graph.get(id).expect("tensor");
    let len = usize::try_from(t.buffer_elements().expect("span")).expect("length");
    if let Some(offsets) = ragged_offsets(graph, id) {
        return fill::host(graph.data_type(id).expect("type"), &offsets).expect("buffer");
    }
    let (node, port) = consumer(graph, id).expect("an input of some node");
    let node = graph.node(node).expect("node");
    let shape = SdpaShape::of(graph, node).expect("shape");
    let seed = seed_of(&t.name);
    let values = match port {
        Port::SeqLenQ => lengths(len, shape.sq),
        Port::SeqLenKv => lengths(len, shape.skv),
        Port::Stats => {
            let skv = f64::from(i32::try_from(shape.skv).expect("Skv fits i32"));
            fill::random(len, seed, Some(skv.ln()))
        }
        _ => fill::random(len, seed, None),
    };
    fill::host(graph.data_type(id).expect("type"), &values).expect("buffer")
}

/// The offsets of the offsets tensor `id` (`None` for any other tensor): its first ragged
/// user's sequences packed one after another, of the lengths [`seeded`] gives the node's
/// SEQ_LEN tensors (S for every batch without a padding mask).
fn ragged_offsets(graph: &Graph, id: TensorId) -> Option<Vec<f64>> {
    let (node, port, user) = graph.ragged_users(id).into_iter().next()?;
    let t = graph.get(user)?;
    let (batch, s) = (usize::try_from(t.dims[0]).ok()?, t.dims[2]);
    let padding = graph.node(node)?.options.padding_mask;
    let tokens: Vec<usize> = if padding {
        assert!(port.token_sequence().is_some(), "{port} is ragged");
        let counts = length_counts(batch, s).into_iter().map(usize::try_from);
        counts.collect::<Result<_, _>>().ok()?
    } else {
        vec![usize::try_from(s).ok()?; batch]
    };
    let view = View4::new(&t.name, &t.dims, &t.strides).ok()?;
    let offsets = packed_offsets(&view, &tokens)?;
    offsets
        .into_iter()
        .map(|o| u32::try_from(o).ok().map(f64::from))
        .collect()
}

/// Runs every node of `graph` on the CPU engine (in order, later nodes reading what earlier
/// ones wrote) from [`seeded`] inputs; every output, by tensor name, as the bits of its values.
fn run_on_cpu(graph: &Graph, name: &str) -> BTreeMap<String, Vec<u64>> {
    let report = analyze(graph, &Target::by_name("cpu").expect("cpu target"));
    let mut written: BTreeMap<TensorId, HostBuffer> = BTreeMap::new();
    for node in &report.nodes {
        let approved = report
            .approve_config(node.node, EngineKind::CpuReference, None)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let plan = CpuEngine
            .build_plan(&approved)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let tensors = plan.tensors();
        let buffered = |ids: &[TensorId]| -> Vec<TensorId> {
            ids.iter()
                .copied()
                .filter(|id| !tensors.virtuals.contains(id))
                .collect()
        };
        let mut pack = VariantPack::new();
        for id in buffered(&tensors.inputs) {
            let buffer = written
                .get(&id)
                .cloned()
                .unwrap_or_else(|| seeded(graph, id));
            pack.insert(id, Box::new(buffer));
        }
        let outputs = buffered(&tensors.outputs);
        for &id in &outputs {
            let len = graph
                .get(id)
                .and_then(|t| t.buffer_elements())
                .and_then(|n| usize::try_from(n).ok())
                .expect("span");
            let poison = vec![f64::NAN; len];
            let dt = graph.data_type(id).expect("type");
            pack.insert(id, Box::new(fill::host(dt, &poison).expect("buffer")));
        }
        plan.execute(&mut pack, &mut Workspace::host(plan.workspace_size()))
            .unwrap_or_else(|e| panic!("{name}: node `{}`: {e}", node.name));
        for id in outputs {
            let buffer = pack
                .take(&TensorKey::Id(id))
                .and_then(|b| b.as_any().downcast_ref::<HostBuffer>().cloned())
                .expect("a host buffer");
            written.insert(id, buffer);
        }
    }
    let produced: Vec<TensorId> = graph
        .nodes()
        .iter()
        .flat_map(|n| n.outputs.values().copied())
        .collect();
    produced
        .into_iter()
        .filter_map(|id| {
            let buffer = written.get(&id)?;
            let values = buffer.to_f64();
            let name = &graph.get(id)?.name;
            assert!(
                values.iter().any(|v| v.is_finite()),
                "{name}: output `{name}` was not written"
            );
            Some((name.clone(), values.iter().map(|v| v.to_bits()).collect()))
        })
        .collect()
}

/// The reason codes of the CPU engine's refusals of `graph`.
fn cpu_refusals(graph: &Graph) -> Vec<String> {
    let report = analyze(graph, &Target::by_name("cpu").expect("cpu target"));
    let mut codes: Vec<String> = report
        .graph_rejections
        .iter()
        .chain(report.nodes.iter().flat_map(|n| {
            n.configs
                .iter()
                .filter(|c| c.engine == EngineKind::CpuReference)
                .flat_map(|c| &c.rejections)
        }))
        .map(|r| r.code.code().to_owned())
        .collect();
    codes.sort();
    codes.dedup();
    codes
}

/// A Dropout_mask or RNG_DUMP of a non-floating type is what the CPU engine does not take
/// (it runs Philox dropout); a dump it refuses for any other reason is a reader bug (a port or
/// option the lowering left behind).
const CPU_GAPS: [&str; 1] = ["CPU001"];

#[test]
fn real_dumps_and_their_native_twins_compute_the_same_on_the_cpu() {
    let mut ran = Vec::new();
    let mut refused = Vec::new();
    for p in pairs() {
        let (dump, twin) = (&p.dump, &p.twin);
        let refusals = cpu_refusals(&p.graph);
        assert_eq!(refusals, cpu_refusals(&p.native), "{dump} vs {twin}");
        if !refusals.is_empty() {
            assert!(
                refusals.iter().all(|c| CPU_GAPS.contains(&c.as_str())),
                "{dump}: the CPU engine refuses it for {refusals:?}"
            );
            refused.push(dump.clone());
            continue;
        }
        let (a, b) = (run_on_cpu(&p.graph, dump), run_on_cpu(&p.native, twin));
        assert_eq!(
            a.keys().collect::<Vec<_>>(),
            b.keys().collect::<Vec<_>>(),
            "{dump}: outputs"
        );
        for (name, bits) in &a {
            assert!(
                b.get(name) == Some(bits),
                "{dump}: output `{name}` differs from its twin's"
            );
        }
        ran.push(dump.clone());
    }
    assert!(
        ran.len() > refused.len(),
        "only {} dumps ran on the CPU engine ({} refused: {refused:?})",
        ran.len(),
        refused.len()
    );
}
