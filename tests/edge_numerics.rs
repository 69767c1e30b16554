//! Edge numerics through the whole stack (graph -> analyze -> approve -> engine plan ->
//! variant pack -> execute): Sq = 1, Skv = 1, fully masked rows, zero sequence lengths in a
//! padded batch, very negative Stats, large biases and a dominant sink. Every
//! gradient must be finite and equal the independent naive f64 reference
//! (`crates/engines/tests/support`) at bf16 resolution; Sq = Skv = 1 must be refused by the
//! analyzer (SHP002), not computed.
//!
//! `RIME_EDGE_TABLE=1 cargo test --test edge_numerics -- --nocapture` prints the table that
//! `docs/reliability.md` shows. The cases are `rime_conformance::edge` (shared with the GPU
//! check `rime selftest --edge`); only the CPU engine runs here.

use half::bf16;
use rime::analyzer::{analyze, EngineKind, ReasonCode, Target};
use rime::engines::{CpuEngine, Engine, HostBuffer, TensorKey, VariantPack, Workspace};
use rime::graph::{DataType, TensorId};
use rime_conformance::edge::{edge_cases, EdgeCase};

#[path = "../crates/engines/tests/support/mod.rs"]
mod reference;

use reference::{naive, worst, Case, Data};

/// The naive reference's description of a shared edge case.
fn reference_case(e: &EdgeCase) -> Case {
    let s = &e.spec;
    let mut c = Case::new(e.name, s.b, s.hq, s.sq, s.skv, s.dqk);
    if s.band != rime_conformance::BandSpec::default() {
        c = c.band(s.band.left, s.band.right, s.band.bottom_right);
    }
    if let Some((q, kv)) = &s.padding {
        c = c.padding(q, kv);
    }
    if let Some(b) = s.bias {
        c = c.bias(b.per_batch, b.per_head);
    }
    if s.sink {
        c = c.sink();
    }
    c
}

/// The inputs of a case: random (seeded), bf16-rounded, the bias and sink filled as the table
/// says.
fn data_of(e: &EdgeCase, case: &Case) -> Data {
    let mut data = rounded(Data::random(case, e.seed));
    if let Some(fill) = e.bias_fill {
        data = rounded(with_bias(data, fill.function()));
    }
    if let (Some(v), Some(s)) = (e.sink_value, data.sink.as_mut()) {
        s.data.iter_mut().for_each(|x| *x = v);
    }
    data
}

/// The backward graph of a case (shared with `rime selftest --edge`), with its tensors by name.
fn graph_of(e: &EdgeCase) -> (rime::graph::Graph, Vec<(&'static str, TensorId)>) {
    let g = e.spec.backward_graph().expect("edge graph");
    (g.graph, g.ids)
}

/// Inputs rounded to bf16 (what the engine reads), the sink to f32.
fn rounded(mut data: Data) -> Data {
    let round = |h: &mut reference::Host| {
        h.data
            .iter_mut()
            .for_each(|x| *x = bf16::from_f64(*x).to_f64());
    };
    for h in [&mut data.q, &mut data.k, &mut data.v, &mut data.w] {
        round(h);
    }
    if let Some(b) = data.bias.as_mut() {
        round(b);
    }
    if let Some(s) = data.sink.as_mut() {
        s.data.iter_mut().for_each(|x| *x = f64::from(*x as f32));
    }
    data
}

/// One row of the table: the worst score (|got - want| / (atol + rtol |want|)) per gradient.
struct Row {
    name: &'static str,
    note: &'static str,
    finite: bool,
    scores: Vec<(&'static str, f64)>,
}

/// Runs a case through the CPU engine's plan and compares it with the naive reference.
fn run(edge: &EdgeCase) -> Row {
    let case = &reference_case(edge);
    let data = data_of(edge, case);
    let (graph, ids) = graph_of(edge);
    let report = analyze(&graph, &Target::by_name("cpu").expect("cpu"));
    let plan = report
        .approve_config(report.nodes[0].node, EngineKind::CpuReference, None)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}\n{}",
                case.name,
                rime::analyzer::render_report(&report)
            )
        });
    let plan = CpuEngine.build_plan(&plan).expect("plan");
    let want = naive(case, &data);
    let s = case.shape();
    let mut pack = VariantPack::new();
    let put = |pack: &mut VariantPack, name: &str, dt, values: &[f64]| {
        pack.insert(
            name,
            Box::new(HostBuffer::from_f64(dt, values).expect("buffer")),
        );
    };
    put(&mut pack, "Q", DataType::Bf16, &data.q.data);
    put(&mut pack, "K", DataType::Bf16, &data.k.data);
    put(&mut pack, "V", DataType::Bf16, &data.v.data);
    put(&mut pack, "O", DataType::Bf16, &want.o);
    put(&mut pack, "dO", DataType::Bf16, &data.w.data);
    put(&mut pack, "Stats", DataType::F32, &want.stats);
    if let Some(b) = &data.bias {
        put(&mut pack, "Bias", DataType::Bf16, &b.data);
    }
    if let Some(lens) = &case.problem.seq_lens {
        let f = |v: &[usize]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
        put(&mut pack, "SEQ_LEN_Q", DataType::I32, &f(&lens.q));
        put(&mut pack, "SEQ_LEN_KV", DataType::I32, &f(&lens.kv));
    }
    if let Some(sink) = &data.sink {
        put(&mut pack, "Sink", DataType::F32, &sink.data);
    }
    let outputs: Vec<(&str, DataType, usize, &Vec<f64>)> = [
        ("dQ", DataType::Bf16, s.b * s.hq * s.sq * s.dqk, &want.dq),
        ("dK", DataType::Bf16, s.b * s.hk * s.skv * s.dqk, &want.dk),
        ("dV", DataType::Bf16, s.b * s.hv * s.skv * s.dv, &want.dv),
        ("dBias", DataType::Bf16, want.dbias.len(), &want.dbias),
        ("dSink", DataType::F32, want.dsink.len(), &want.dsink),
    ]
    .into_iter()
    .filter(|(name, ..)| ids.iter().any(|(n, _)| n == name))
    .collect();
    for &(name, dt, len, _) in &outputs {
        let id = ids.iter().find(|(n, _)| *n == name).expect("output").1;
        pack.insert(
            id,
            Box::new(HostBuffer::from_f64(dt, &vec![f64::NAN; len]).expect("out")),
        );
    }
    plan.execute(&mut pack, &mut Workspace::host(plan.workspace_size()))
        .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    let mut finite = true;
    let mut scores = Vec::new();
    for &(name, _, _, expected) in &outputs {
        let id = ids.iter().find(|(n, _)| *n == name).expect("output").1;
        let got = pack
            .get(&TensorKey::from(id))
            .and_then(|b| b.as_any().downcast_ref::<HostBuffer>())
            .expect("host output")
            .to_f64();
        finite &= got.iter().all(|x| x.is_finite());
        // bf16 outputs: one bf16 rounding of the result, plus f32 accumulation.
        scores.push((name, worst(&got, expected, 1e-2, 1.6e-2)));
    }
    Row {
        name: case.name,
        note: edge.note,
        finite,
        scores,
    }
}

fn with_bias(mut data: Data, f: impl Fn([usize; 4]) -> f64) -> Data {
    if let Some(b) = data.bias.take() {
        data.bias = Some(b.filled(f));
    }
    data
}

fn rows() -> Vec<Row> {
    edge_cases().iter().map(run).collect()
}

#[test]
fn edge_cases_give_finite_gradients_equal_to_the_reference() {
    let rows = rows();
    let table = std::env::var_os("RIME_EDGE_TABLE").is_some();
    if table {
        println!("| case | what | finite | dQ | dK | dV | dBias | dSink |");
        println!("|---|---|---|---|---|---|---|---|");
    }
    let mut failures = Vec::new();
    for row in &rows {
        let cell = |name: &str| {
            row.scores
                .iter()
                .find(|(n, _)| *n == name)
                .map_or("-".to_owned(), |(_, s)| format!("{s:.2}"))
        };
        if table {
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                row.name,
                row.note,
                if row.finite { "yes" } else { "NO" },
                cell("dQ"),
                cell("dK"),
                cell("dV"),
                cell("dBias"),
                cell("dSink")
            );
        }
        if !row.finite || row.scores.iter().any(|(_, s)| *s > 1.0) {
            failures.push(format!(
                "{}: finite {} {:?}",
                row.name, row.finite, row.scores
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_single_query_and_a_single_key_is_refused_not_computed() {
    let mut case = EdgeCase {
        name: "sq_1_skv_1",
        ..edge_cases()[0].clone()
    };
    (case.spec.sq, case.spec.skv) = (1, 1);
    let (graph, _) = graph_of(&case);
    let report = analyze(&graph, &Target::by_name("cpu").expect("cpu"));
    assert!(!report.supports(EngineKind::CpuReference));
    assert!(report
        .all_rejections()
        .any(|r| r.code == ReasonCode::from_code("SHP002").expect("SHP002")));
}
