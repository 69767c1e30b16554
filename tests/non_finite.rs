//! Non-finite inputs show in the outputs the way PyTorch's math does (NaN in, NaN out), never
//! as the zeros of a masked row: `tests/fixtures/non_finite/cases.json` puts a NaN or an
//! infinity into one element of a forward + backward graph (`tests/hostile/small_fwd_bwd.json`,
//! B 1, H 2, S 16, D 16, causal, by default) and says, per output, which rows must be
//! non-finite and which exactly zero; every other row must be finite.
//!
//! A case: `inject` changes an input before the forward, `between` a forward output before
//! the backward; `edits` (JSON pointer, as in tests/bad_input.rs) change the graph, `fill` sets
//! integer inputs; rows are `head:row`, `head:first-last` or `head:*`.

mod support;

use std::collections::BTreeMap;

use rime::analyzer::{analyze, heuristics, HeuristicsOptions, Target};
use rime::engines::{Buffer, CpuEngine, Engine, HostBuffer, VariantPack, Workspace};
use rime::graph::{json, Graph, TensorId};
use serde_json::Value;

/// The element offset of logical index `at` of tensor `id`.
fn offset(graph: &Graph, id: TensorId, at: &[usize]) -> usize {
    let t = graph.get(id).expect("tensor");
    at.iter()
        .zip(&t.strides)
        .map(|(&i, &s)| i * usize::try_from(s).expect("stride"))
        .sum()
}

fn value(v: &Value) -> f64 {
    match v.as_str() {
        Some("nan") => f64::NAN,
        Some("inf") => f64::INFINITY,
        Some("-inf") => f64::NEG_INFINITY,
        _ => v.as_f64().expect("a number or nan / inf / -inf"),
    }
}

/// Sets element `at` of `buffer` (tensor `id`) to `x`.
fn poke(graph: &Graph, id: TensorId, buffer: &mut HostBuffer, at: &[usize], x: f64) {
    let mut values = buffer.to_f64();
    values[offset(graph, id, at)] = x;
    *buffer = HostBuffer::from_f64(buffer.data_type(), &values).expect("float buffer");
}

/// Seeded values in [-1, 1) for an input, or the case's fill.
fn input(graph: &Graph, id: TensorId, fill: Option<f64>, seed: &mut u64) -> HostBuffer {
    let t = graph.get(id).expect("tensor");
    let n = usize::try_from(t.span_elements().expect("span")).expect("fits");
    let values: Vec<f64> = (0..n)
        .map(|_| {
            fill.unwrap_or_else(|| {
                *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
            })
        })
        .collect();
    HostBuffer::from_f64(graph.data_type(id).expect("type"), &values).expect("buffer")
}

/// The rows (head, row) a list of specs names.
fn rows(specs: &Value, heads: usize, len: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for spec in specs.as_array().into_iter().flatten() {
        let spec = spec.as_str().expect("row spec");
        let (h, r) = spec.split_once(':').expect("head:rows");
        let h: usize = h.parse().expect("head");
        assert!(h < heads, "{spec}");
        let range = match r {
            "*" => 0..len,
            r => match r.split_once('-') {
                Some((a, b)) => a.parse().expect("first")..b.parse::<usize>().expect("last") + 1,
                None => {
                    let i: usize = r.parse().expect("row");
                    i..i + 1
                }
            },
        };
        out.extend(range.map(|i| (h, i)));
    }
    out
}

fn run(case: &Value) -> Vec<String> {
    let base = support::root().join("tests/hostile/small_fwd_bwd.json");
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(base).expect("base")).expect("json");
    for edit in case["edits"].as_array().into_iter().flatten() {
        support::edits::apply(&mut doc, edit);
    }
    let graph = json::from_str(&doc.to_string(), "case.json").expect("loads");
    graph.validate().expect("valid");
    let report = analyze(&graph, &Target::by_name("cpu").expect("cpu"));
    let ranked = heuristics(&report, &HeuristicsOptions::default());
    let mut tensors: BTreeMap<TensorId, HostBuffer> = BTreeMap::new();
    let mut seed = 7u64;
    for (n, node) in graph
        .topological_order()
        .expect("DAG")
        .into_iter()
        .enumerate()
    {
        let candidate = ranked.iter().find(|c| c.node == node).expect("supported");
        let plan = CpuEngine
            .build_plan(&report.approve(candidate).expect("approved"))
            .expect("plan");
        if n == 1 {
            if let Some(b) = case.get("between") {
                let id = graph
                    .find(b["tensor"].as_str().expect("tensor"))
                    .expect("exists");
                let at: Vec<usize> = serde_json::from_value(b["at"].clone()).expect("index");
                let buffer = tensors.get_mut(&id).expect("made by the forward");
                poke(&graph, id, buffer, &at, value(&b["value"]));
            }
        }
        let mut pack = VariantPack::new();
        for &id in &plan.tensors().inputs {
            let name = graph.get(id).expect("tensor").name.clone();
            if let std::collections::btree_map::Entry::Vacant(slot) = tensors.entry(id) {
                // Made (and injected) once, for the first node that reads it.
                let fill = case["fill"].get(name.as_str()).and_then(Value::as_f64);
                let mut buffer = input(&graph, id, fill, &mut seed);
                if let Some(inj) = case.get("inject").filter(|i| i["tensor"] == name.as_str()) {
                    let at: Vec<usize> = serde_json::from_value(inj["at"].clone()).expect("index");
                    poke(&graph, id, &mut buffer, &at, value(&inj["value"]));
                }
                slot.insert(buffer);
            }
            pack.insert(id, Box::new(tensors[&id].clone()));
        }
        for &id in &plan.tensors().outputs {
            let t = graph.get(id).expect("tensor");
            let n = usize::try_from(t.span_elements().expect("span")).expect("fits");
            let dt = graph.data_type(id).expect("type");
            pack.insert(id, Box::new(HostBuffer::zeros(dt, n).expect("zeros")));
        }
        plan.execute(&mut pack, &mut Workspace::host(0))
            .expect("runs");
        for &id in &plan.tensors().outputs {
            let b = pack.get(&id.into()).expect("output");
            let host = b.as_any().downcast_ref::<HostBuffer>().expect("host");
            tensors.insert(id, host.clone());
        }
    }
    let mut problems = Vec::new();
    for name in ["O", "Stats", "dQ", "dK", "dV"] {
        let id = graph.find(name).expect("output");
        let t = graph.get(id).expect("tensor");
        let dim = |k: usize| usize::try_from(t.dims[k]).expect("dim");
        let (heads, len, width) = (dim(1), dim(2), dim(3));
        let values = tensors[&id].to_f64();
        let expect = &case["expect"][name];
        let non_finite = rows(&expect["nan"], heads, len);
        let zero = rows(&expect["zero"], heads, len);
        for h in 0..heads {
            for i in 0..len {
                let row: Vec<f64> = (0..width)
                    .map(|d| values[offset(&graph, id, &[0, h, i, d])])
                    .collect();
                let bad = row.iter().filter(|x| !x.is_finite()).count();
                let problem = if non_finite.contains(&(h, i)) {
                    (bad == 0).then_some("finite, expected non-finite")
                } else if zero.contains(&(h, i)) {
                    row.iter().any(|&x| x != 0.0).then_some("not zero")
                } else {
                    (bad > 0).then_some("non-finite, expected finite")
                };
                if let Some(p) = problem {
                    problems.push(format!("{name} row {h}:{i} {p}: {row:?}"));
                }
            }
        }
    }
    problems
}

#[test]
fn non_finite_inputs_reach_exactly_the_outputs_the_math_says() {
    let path = support::root().join("tests/fixtures/non_finite/cases.json");
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(path).expect("cases")).expect("json");
    let mut failures = Vec::new();
    for case in &cases {
        let problems = run(case);
        if !problems.is_empty() {
            failures.push(format!("{}:\n  {}", case["case"], problems.join("\n  ")));
        }
    }
    assert!(cases.len() >= 10);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
