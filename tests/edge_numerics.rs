//! Edge numerics through the whole stack (graph -> analyze -> approve -> engine plan ->
//! variant pack -> execute): Sq = 1, Skv = 1, fully masked rows, zero sequence lengths in a
//! padded batch, very negative Stats, large biases and a dominant sink. Every
//! gradient must be finite and equal the independent naive f64 reference
//! (`crates/engines/tests/support`) at bf16 resolution; Sq = Skv = 1 must be refused by the
//! analyzer (SHP002), not computed.
//!
//! `RIME_EDGE_TABLE=1 cargo test --test edge_numerics -- --nocapture` prints the table that
//! `docs/reliability.md` shows. Only the CPU engine runs here; the CUDA engine's column needs a
//! GPU and is filled by the GPU conformance run.

use half::bf16;
use rime::analyzer::{analyze, EngineKind, ReasonCode, Target};
use rime::engines::{CpuEngine, Engine, HostBuffer, TensorKey, VariantPack, Workspace};
use rime::graph::{
    Context, DataType, DiagonalAlignment, Graph, SdpaBackwardAttrs, Tensor, TensorId,
};

#[path = "../crates/engines/tests/support/mod.rs"]
mod reference;

use reference::{naive, worst, Case, Data};

/// The backward graph of a case (BHSD, bf16), with its tensor ids by name.
fn graph_of(case: &Case) -> (Graph, Vec<(&'static str, TensorId)>) {
    let s = case.shape();
    let p = &case.problem;
    let dims = |b: usize, h: usize, sq: usize, d: usize| [b, h, sq, d].map(|x| x as i64);
    let mut g = Graph::new(Context::with_io(DataType::Bf16));
    let mut ids = Vec::new();
    let mut add = |g: &mut Graph, name: &'static str, t: Tensor| {
        let id = g.tensor(t);
        ids.push((name, id));
        id
    };
    let q = add(
        &mut g,
        "Q",
        Tensor::packed("Q", &dims(s.b, s.hq, s.sq, s.dqk)),
    );
    let k = add(
        &mut g,
        "K",
        Tensor::packed("K", &dims(s.b, s.hk, s.skv, s.dqk)),
    );
    let v = add(
        &mut g,
        "V",
        Tensor::packed("V", &dims(s.b, s.hv, s.skv, s.dv)),
    );
    let o = add(
        &mut g,
        "O",
        Tensor::packed("O", &dims(s.b, s.hq, s.sq, s.dv)),
    );
    let d_o = add(
        &mut g,
        "dO",
        Tensor::packed("dO", &dims(s.b, s.hq, s.sq, s.dv)),
    );
    let stats = Tensor::packed("Stats", &dims(s.b, s.hq, s.sq, 1)).with_data_type(DataType::F32);
    let stats = add(&mut g, "Stats", stats);
    let mut attrs = SdpaBackwardAttrs::new()
        .name("bwd")
        .attn_scale(p.scale as f32);
    if let Some(right) = p.band.right_bound {
        attrs = attrs.right_bound(right);
    }
    if let Some(left) = p.band.left_bound {
        attrs = attrs.left_bound(left);
    }
    if p.band.bottom_right {
        attrs = attrs.diagonal_alignment(DiagonalAlignment::BottomRight);
    }
    if let Some(dims) = case.bias {
        let bias = add(
            &mut g,
            "Bias",
            Tensor::packed("Bias", &dims.map(|x| x as i64)),
        );
        attrs = attrs.bias(bias).dbias();
    }
    if p.seq_lens.is_some() {
        let lens =
            |n: &str| Tensor::packed(n, &[s.b as i64, 1, 1, 1]).with_data_type(DataType::I32);
        let lq = add(&mut g, "SEQ_LEN_Q", lens("SEQ_LEN_Q"));
        let lkv = add(&mut g, "SEQ_LEN_KV", lens("SEQ_LEN_KV"));
        attrs = attrs.padding(lq, lkv);
    }
    if case.sink {
        let t = Tensor::packed("Sink", &[1, s.hq as i64, 1, 1]).with_data_type(DataType::F32);
        let sink = add(&mut g, "Sink", t);
        attrs = attrs.sink(sink).dsink();
    }
    let grads = g.sdpa_backward(q, k, v, o, d_o, stats, attrs).expect("ids");
    ids.extend([("dQ", grads.dq), ("dK", grads.dk), ("dV", grads.dv)]);
    if let Some(id) = grads.dbias {
        ids.push(("dBias", id));
    }
    if let Some(id) = grads.dsink {
        ids.push(("dSink", id));
    }
    (g, ids)
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
fn run(case: &Case, note: &'static str, data: Data) -> Row {
    let (graph, ids) = graph_of(case);
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
        note,
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
    let c = |name, b, h, sq, skv| Case::new(name, b, h, sq, skv, 8);
    let plain = |case: &Case, seed| rounded(Data::random(case, seed));
    let mut rows = Vec::new();

    let case = c("sq_1", 2, 2, 1, 7);
    rows.push(run(&case, "one query row", plain(&case, 1)));
    let case = c("skv_1", 2, 2, 7, 1);
    rows.push(run(&case, "one key: P = 1", plain(&case, 2)));
    let case = c("sq_1_causal_bottom_right", 2, 2, 1, 9).band(None, Some(0), true);
    rows.push(run(&case, "decode step", plain(&case, 3)));

    let case = c("fully_masked_rows", 2, 2, 6, 5)
        .band(None, Some(0), true)
        .padding(&[6, 3], &[2, 5]);
    rows.push(run(
        &case,
        "rows 0..4 of batch 0 see no key",
        plain(&case, 4),
    ));
    let case = c("zero_len_batch", 3, 2, 5, 6).padding(&[5, 0, 3], &[6, 0, 2]);
    rows.push(run(
        &case,
        "batch 1: seq_len_q = seq_len_kv = 0",
        plain(&case, 5),
    ));
    let case = c("zero_kv_len_batch", 2, 2, 5, 6).padding(&[5, 4], &[0, 6]);
    rows.push(run(&case, "batch 0: queries, no keys", plain(&case, 6)));
    let case = c("zero_len_with_sink", 2, 2, 5, 6)
        .padding(&[5, 4], &[0, 6])
        .sink();
    rows.push(run(&case, "no keys, sink only", plain(&case, 7)));

    let case = c("very_negative_stats", 2, 2, 6, 7).bias(true, true);
    let data = with_bias(plain(&case, 8), |[b, h, i, j]| {
        -30000.0 + ((b + h + i + j) % 3) as f64
    });
    rows.push(run(&case, "bias -3e4: Stats ~ -3e4", rounded(data)));
    let case = c("large_bias_one_hot", 2, 2, 6, 7).bias(false, true);
    let data = with_bias(plain(&case, 9), |[_, h, i, j]| {
        if j == (i + h) % 7 {
            20000.0
        } else {
            -20000.0
        }
    });
    rows.push(run(&case, "bias +-2e4: one-hot softmax", rounded(data)));
    let case = c("large_bias_mixed_masked", 2, 2, 6, 7)
        .bias(true, false)
        .band(Some(2), Some(0), false);
    let data = with_bias(plain(&case, 10), |[b, _, i, j]| {
        ((i * 7 + j + b) % 5) as f64 * 8000.0 - 16000.0
    });
    rows.push(run(&case, "bias +-1.6e4 with a window", rounded(data)));
    let case = c("dominant_sink", 2, 2, 6, 7).sink();
    let mut data = plain(&case, 12);
    if let Some(s) = data.sink.as_mut() {
        s.data.iter_mut().for_each(|x| *x = 40.0);
    }
    rows.push(run(&case, "sink 40: P ~ e^-40", data));
    rows
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
    let case = Case::new("sq_1_skv_1", 2, 2, 1, 1, 8);
    let (graph, _) = graph_of(&case);
    let report = analyze(&graph, &Target::by_name("cpu").expect("cpu"));
    assert!(!report.supports(EngineKind::CpuReference));
    assert!(report
        .all_rejections()
        .any(|r| r.code == ReasonCode::from_code("SHP002").expect("SHP002")));
}
