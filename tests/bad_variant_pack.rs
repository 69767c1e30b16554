//! Bad variant packs and workspaces are refused before anything is written, with an error that
//! names the tensor and the sizes or types involved; NaN and Inf inputs are computed through
//! (propagated), never a crash.
//!
//! The cases are generated from the plan's own tensor list (every input and output: missing,
//! one element short, wrong element type), plus extra, duplicate and out-of-range entries, so a
//! new port of the graph model gets its cases without editing this file.

use rime::analyzer::{analyze, EngineKind, Target};
use rime::engines::{
    check_workspace, CpuEngine, Engine, EngineError, HostBuffer, Plan, TensorKey, VariantPack,
    Workspace,
};
use rime::graph::{DataType, Graph, TensorId};

#[path = "support/graph_spec.rs"]
mod graph_spec;

use graph_spec::{BiasSpec, GraphSpec, MaskSpec, ScaleSpec};

/// A small backward graph with every optional input and output the CPU engine takes: per-batch
/// bias with dBias, padding, a sink with dSink, uids on every tensor.
fn graph() -> Graph {
    GraphSpec {
        io: DataType::Bf16,
        batch: 2,
        heads_kv: 1,
        group: 2,
        seq_q: 5,
        seq_kv: 6,
        d_qk: 8,
        d_v: 8,
        bshd: true,
        mask: MaskSpec::Causal {
            bottom_right: false,
        },
        bias: Some(BiasSpec {
            per_batch: true,
            per_head: false,
            dbias: true,
        }),
        padding: true,
        alibi: false,
        sink: Some(true),
        scale: ScaleSpec::Tensor(0.25),
        deterministic: true,
        forward_twin: false,
        uids: true,
    }
    .build()
}

fn plan(graph: &Graph) -> Box<dyn Plan> {
    let report = analyze(graph, &Target::by_name("cpu").expect("cpu"));
    let approved = report
        .approve_config(report.nodes[0].node, EngineKind::CpuReference, None)
        .expect("the CPU engine takes the graph");
    CpuEngine.build_plan(&approved).expect("plan")
}

fn buffer(graph: &Graph, id: TensorId, value: f64) -> HostBuffer {
    let t = graph.get(id).expect("tensor");
    let len = usize::try_from(t.span_elements().expect("span")).expect("len");
    let dt = graph.data_type(id).expect("type");
    HostBuffer::from_f64(dt, &vec![value; len]).expect("buffer")
}

/// A correct pack: inputs 0.5 (sequence lengths full), outputs NaN (so a write shows).
fn pack(graph: &Graph, plan: &dyn Plan) -> VariantPack {
    let mut pack = VariantPack::new();
    for &id in &plan.tensors().inputs {
        let t = graph.get(id).expect("tensor");
        let value = match t.name.as_str() {
            "seq_len_q" => 5.0,
            "seq_len_kv" => 6.0,
            _ => 0.5,
        };
        pack.insert(
            t.uid.map_or(TensorKey::Id(id), TensorKey::Uid),
            Box::new(buffer(graph, id, value)),
        );
    }
    for &id in &plan.tensors().outputs {
        pack.insert(id, Box::new(buffer(graph, id, f64::NAN)));
    }
    pack
}

fn host(pack: &VariantPack, key: TensorKey) -> Vec<f64> {
    pack.get(&key)
        .and_then(|b| b.as_any().downcast_ref::<HostBuffer>())
        .map(HostBuffer::to_f64)
        .unwrap_or_default()
}

/// The keys the pack uses for a tensor (uid for inputs, id for outputs: both key styles).
fn key_of(graph: &Graph, plan: &dyn Plan, id: TensorId) -> TensorKey {
    if plan.tensors().outputs.contains(&id) {
        TensorKey::Id(id)
    } else {
        TensorKey::Uid(graph.get(id).and_then(|t| t.uid).expect("uid"))
    }
}

/// Another element type of the same size class, so that only the type is wrong.
fn other_type(dt: DataType) -> DataType {
    match dt {
        DataType::Bf16 => DataType::F16,
        DataType::F16 => DataType::Bf16,
        DataType::F32 => DataType::I32,
        DataType::I32 => DataType::F32,
        _ => DataType::F32,
    }
}

/// Turns a correct pack into a bad one.
type Mutation = Box<dyn Fn(&Graph, &dyn Plan, &mut VariantPack)>;

struct Refusal {
    case: String,
    mutate: Mutation,
    expect: Vec<String>,
}

fn cases(graph: &Graph, plan: &dyn Plan) -> Vec<Refusal> {
    let mut out = Vec::new();
    for id in plan.tensors().all() {
        let t = graph.get(id).expect("tensor").clone();
        let dt = graph.data_type(id).expect("type");
        let span = usize::try_from(t.span_elements().expect("span")).expect("len");
        let name = t.name.clone();
        out.push(Refusal {
            case: format!("missing {name}"),
            mutate: Box::new(move |g, p, pack| drop(pack.take(&key_of(g, p, id)))),
            expect: vec![format!("'{name}'"), "no buffer".into()],
        });
        out.push(Refusal {
            case: format!("short {name}"),
            mutate: Box::new(move |g, p, pack| {
                let short = HostBuffer::zeros(dt, span - 1).expect("buffer");
                drop(pack.take(&key_of(g, p, id)));
                pack.insert(key_of(g, p, id), Box::new(short));
            }),
            expect: vec![
                format!("'{}'", t.name),
                format!("spans {span} elements"),
                format!("holds {}", span - 1),
            ],
        });
        let wrong = other_type(dt);
        out.push(Refusal {
            case: format!("{wrong} {name}"),
            mutate: Box::new(move |g, p, pack| {
                let typed = HostBuffer::zeros(wrong, span).expect("buffer");
                drop(pack.take(&key_of(g, p, id)));
                pack.insert(key_of(g, p, id), Box::new(typed));
            }),
            expect: vec![
                format!("'{}'", t.name),
                format!("is {dt}"),
                format!("holds {wrong}"),
            ],
        });
    }
    let extra = |case: &str, key: TensorKey, expect: &str| Refusal {
        case: case.to_owned(),
        mutate: Box::new(move |_, _, pack| {
            pack.insert(key.clone(), Box::new(HostBuffer::F32(vec![0.0])));
        }),
        expect: vec![expect.to_owned(), "not a tensor of the graph".into()],
    };
    out.push(extra("extra uid", TensorKey::Uid(999), "uid 999"));
    out.push(extra("extra name", TensorKey::Name("Qx".into()), "'Qx'"));
    out.push(extra(
        "buffer for a by-value scalar",
        TensorKey::Name("attn_scale".into()),
        "'attn_scale'",
    ));
    out.push(Refusal {
        case: "Q by uid and by name".into(),
        mutate: Box::new(|g, _, pack| {
            let q = g.find("Q").expect("Q");
            pack.insert("Q", Box::new(buffer(g, q, 0.5)));
        }),
        expect: vec!["'Q' twice".into()],
    });
    out.push(Refusal {
        case: "empty pack".into(),
        mutate: Box::new(|_, _, pack| *pack = VariantPack::new()),
        expect: vec!["no buffer".into()],
    });
    for (case, values, expect) in [
        (
            "seq_len_q negative",
            [-1.0, 5.0],
            "length -1 for batch 0; allowed 0..=5",
        ),
        (
            "seq_len_q past Sq",
            [5.0, 6.0],
            "length 6 for batch 1; allowed 0..=5",
        ),
    ] {
        out.push(Refusal {
            case: case.into(),
            mutate: Box::new(move |g, p, pack| {
                let id = g.find("seq_len_q").expect("seq_len_q");
                drop(pack.take(&key_of(g, p, id)));
                let b = HostBuffer::from_f64(DataType::I32, &values).expect("i32");
                pack.insert(key_of(g, p, id), Box::new(b));
            }),
            expect: vec!["'seq_len_q'".into(), expect.into()],
        });
    }
    out
}

#[test]
fn bad_variant_packs_are_refused_by_name_and_nothing_is_written() {
    let graph = graph();
    let plan = plan(&graph);
    let cases = cases(&graph, plan.as_ref());
    let outputs = plan.tensors().outputs.clone();
    let mut failures = Vec::new();
    for case in &cases {
        let mut pack = pack(&graph, plan.as_ref());
        (case.mutate)(&graph, plan.as_ref(), &mut pack);
        let before: Vec<Vec<f64>> = outputs
            .iter()
            .map(|&id| host(&pack, TensorKey::Id(id)))
            .collect();
        match plan.execute(&mut pack, &mut Workspace::host(plan.workspace_size())) {
            Ok(()) => failures.push(format!("{}: executed", case.case)),
            Err(e) => {
                let message = e.to_string();
                let missing: Vec<&String> = case
                    .expect
                    .iter()
                    .filter(|x| !message.contains(x.as_str()))
                    .collect();
                if !missing.is_empty() {
                    failures.push(format!("{}: {missing:?} not in `{message}`", case.case));
                }
            }
        }
        for (&id, before) in outputs.iter().zip(&before) {
            let after = host(&pack, TensorKey::Id(id));
            let same = |a: &f64, b: &f64| a == b || (a.is_nan() && b.is_nan());
            let written =
                after.len() != before.len() || !after.iter().zip(before).all(|(a, b)| same(a, b));
            if written {
                failures.push(format!("{}: output #{} written", case.case, id.index()));
            }
        }
    }
    assert!(cases.len() >= 50, "{} cases", cases.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_small_workspace_is_refused_with_both_sizes() {
    let err = check_workspace(4096, &Workspace::host(4095)).unwrap_err();
    assert_eq!(
        err,
        EngineError::WorkspaceTooSmall {
            needed: 4096,
            given: 4095
        }
    );
    assert_eq!(
        err.to_string(),
        "workspace holds 4095 bytes, the plan needs 4096"
    );
}

#[test]
fn nan_and_inf_inputs_propagate_without_a_crash() {
    let graph = graph();
    let plan = plan(&graph);
    for (input, value) in [
        ("Q", f64::NAN),
        ("K", f64::INFINITY),
        ("dO", f64::NEG_INFINITY),
        ("Stats", f64::NAN),
        ("bias", f64::INFINITY),
        ("sink", f64::NAN),
    ] {
        let mut pack = pack(&graph, plan.as_ref());
        let id = graph.find(input).expect("input");
        let key = key_of(&graph, plan.as_ref(), id);
        let mut values = host(&pack, key.clone());
        values[0] = value;
        drop(pack.take(&key));
        let dt = graph.data_type(id).expect("type");
        pack.insert(
            key,
            Box::new(HostBuffer::from_f64(dt, &values).expect("buffer")),
        );
        plan.execute(&mut pack, &mut Workspace::host(plan.workspace_size()))
            .unwrap_or_else(|e| panic!("{input} = {value}: {e}"));
        // The sink enters only dSink (Stats already holds it); the others reach dQ as well.
        let shown = plan.tensors().outputs.iter().any(|&id| {
            host(&pack, TensorKey::Id(id))
                .iter()
                .any(|x| !x.is_finite())
        });
        assert!(
            shown,
            "{input} = {value}: a non-finite input must show in an output"
        );
    }
}
