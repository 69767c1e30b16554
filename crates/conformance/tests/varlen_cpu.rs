//! The sweep's variable-length cases without a GPU: the THD ones and those with a padding mask
//! on a padded layout. Every one's graphs run on the CPU engine, in f32 (the stand-in for the
//! device run) and as the f64 reference, through the harness's own inputs, poisoned outputs and
//! comparison, as `rime selftest` runs them against the sm120 engine. Real tokens must agree
//! within the case's tolerance, and every element of a ragged output outside its real tokens
//! must keep its poison, in both runs. The inputs' gaps, and a padded tensor's rows past its
//! batch's length, are NaN, so a read outside the tokens would show as NaN in the results.
//!
//! Each (case, io type) runs once: the route is the sm120 backward's, and the CPU engine has
//! none, so the routes of one spec would run the same CPU plans.

use std::collections::BTreeSet;

use rime_conformance::compare::{outputs, outside_tokens, tolerance};
use rime_conformance::exec::{on_cpu, Outputs};
use rime_conformance::fill::{node_inputs, Fills};
use rime_conformance::spec::{CaseGraph, Layout};
use rime_conformance::sweep::{cases, SweepCase};
use rime_engines::cpu::Precision;
use rime_engines::{Buffer, HostBuffer};
use rime_graph::DataType;

/// The THD cases of the full table, one per spec (the first route listed).
fn thd_cases() -> Vec<SweepCase> {
    one_per_spec(|c| c.spec.layout == Layout::Thd)
}

/// The cases of the full table that `keep` takes, one per spec (the first route listed).
fn one_per_spec(keep: impl Fn(&SweepCase) -> bool) -> Vec<SweepCase> {
    let mut seen = BTreeSet::new();
    cases(false)
        .into_iter()
        .filter(|c| keep(c))
        .filter(|c| {
            let spec = c.name.rsplit_once('/').map_or(&*c.name, |(s, _)| s);
            seen.insert(spec.to_owned())
        })
        .collect()
}

/// Compares `out` (f32 engine) with `reference` (f64) as the sweep does, and checks that
/// neither run wrote outside a ragged output's tokens (a THD case has some); returns the
/// checks' count.
fn judge(case: &SweepCase, g: &CaseGraph, out: &Outputs, reference: &Outputs) -> usize {
    let (checks, written) = outputs(g, out, reference);
    assert!(written.is_empty(), "{}: {written:?}", case.name);
    let tol = tolerance(case.spec.io);
    for c in &checks {
        assert!(c.bad == 0 && c.rel_err <= tol, "{}: {c:?}", case.name);
    }
    // The reference keeps its gaps too (it is what the device is measured against).
    let (_, written) = outputs(g, reference, reference);
    assert!(written.is_empty(), "{} (f64): {written:?}", case.name);
    // Every ragged output had its gaps checked.
    let ragged = out.iter().filter(|(id, _)| g.ragged_of(*id).is_some());
    assert!(
        case.spec.layout != Layout::Thd || ragged.clone().count() > 0,
        "{}: no ragged output",
        case.name
    );
    for (id, _) in ragged {
        let gaps = format!("{}-gaps", g.name_of(*id));
        assert!(
            checks.iter().any(|c| c.name == gaps),
            "{}: {gaps}",
            case.name
        );
    }
    checks.len()
}

#[test]
fn every_thd_case_agrees_at_real_tokens_and_keeps_its_gaps_on_the_cpu() {
    let cases = thd_cases();
    // 17 specs (4 per envelope + the sink case) and 4 inference specs, in two io types.
    assert!(cases.len() >= 2 * (4 * 4 + 1 + 4), "{}", cases.len());
    assert!(agree_on_the_cpu(&cases) > 0);
}

/// A padded layout's rows past the padding mask's lengths are padding, NaN here: the CPU
/// engine (what the sm120 engine is compared with) never reads them, so every result is finite
/// and the f32 run agrees with the f64 one.
#[test]
fn every_padding_mask_case_agrees_with_nan_padding_on_the_cpu() {
    let cases = one_per_spec(|c| c.spec.layout != Layout::Thd && c.spec.padding.is_some());
    // The padded-envelope cases (2 per envelope), GQA, sinks and masks attending to nothing.
    assert!(cases.len() >= 2 * 12, "{}", cases.len());
    for (i, case) in cases.iter().enumerate() {
        let g = case.spec.backward_graph().expect("graph");
        let bwd = g.backward.expect("bwd");
        let inputs = node_inputs(&case.spec, &g, bwd, &Fills::random(0x5eed + i as u64));
        let nan = inputs
            .expect("inputs")
            .iter()
            .any(|(_, h)| h.to_f64().iter().any(|x| x.is_nan()));
        // Unless every length is full (none of the table's are).
        assert!(nan, "{}: no NaN padding", case.name);
    }
    assert!(agree_on_the_cpu(&cases) > 0);
}

/// Runs every case's forward and backward on the CPU engine in f32 and f64 and judges them;
/// returns the checks' count.
fn agree_on_the_cpu(cases: &[SweepCase]) -> usize {
    let mut checked = 0;
    for (i, case) in cases.iter().enumerate() {
        let spec = &case.spec;
        let g = match case.route {
            Some(_) => spec.graph(),
            None => spec.inference_graph(),
        }
        .expect("graph");
        let fills = Fills::random(0x5eed + i as u64);
        let fwd = g.forward.expect("fwd");
        let inputs = node_inputs(spec, &g, fwd, &fills).expect("inputs");
        // The inputs' gaps are NaN, their tokens finite.
        for (id, h) in &inputs {
            if let Some(r) = g.ragged_of(*id) {
                let v = h.to_f64();
                let real = r.real_mask();
                assert_eq!(v.len(), real.len(), "{}", case.name);
                assert!(
                    v.iter().zip(&real).all(|(x, &r)| r == x.is_finite()),
                    "{}: {}",
                    case.name,
                    g.name_of(*id)
                );
            }
        }
        let o32 = on_cpu(&g, fwd, &inputs, Precision::F32).expect("f32 forward");
        let o64 = on_cpu(&g, fwd, &inputs, Precision::F64).expect("f64 forward");
        checked += judge(case, &g, &o32, &o64);
        let Some(bwd) = g.backward else { continue };
        // The backward reads the f32 run's O and Stats, as the sweep's reads the device's.
        let mut bwd_inputs = node_inputs(spec, &g, bwd, &fills).expect("inputs");
        bwd_inputs.extend(o32.iter().cloned());
        let g32 = on_cpu(&g, bwd, &bwd_inputs, Precision::F32).expect("f32 backward");
        let g64 = on_cpu(&g, bwd, &bwd_inputs, Precision::F64).expect("f64 backward");
        checked += judge(case, &g, &g32, &g64);
    }
    checked
}

/// A write outside the tokens is found and named: the tensor, the batch whose room it lies in,
/// the element; so is one past the last offset. A token's value is not mistaken for one.
#[test]
fn a_write_outside_the_tokens_names_the_tensor_batch_and_element() {
    let case = thd_cases()
        .into_iter()
        .find(|c| c.route.is_some())
        .expect("a THD case");
    let g = case.spec.backward_graph().expect("graph");
    let dq = g.id("dQ").expect("dQ");
    let r = g.ragged_of(dq).expect("ragged dQ").clone();
    let poison = rime_conformance::fill::poisoned(&g, dq).expect("buffer");
    assert_eq!(outside_tokens("dQ", &r, &poison), (0, None));
    // The poisoned buffer with element `at` set to 0.5 (bf16 0x3f00), bytes kept elsewhere.
    let with = |at: usize| {
        let mut bytes = poison.to_le_bytes();
        bytes[2 * at..2 * at + 2].copy_from_slice(&0x3f00u16.to_le_bytes());
        HostBuffer::from_le_bytes(DataType::Bf16, &bytes).expect("buffer")
    };
    assert_eq!(poison.data_type(), DataType::Bf16);
    // Batch 1's gap: right after its tokens, before batch 2's offset.
    let gap = r.starts[2] - 1;
    let (n, first) = outside_tokens("dQ", &r, &with(gap));
    let first = first.expect("found");
    assert_eq!(n, 1);
    assert!(
        first.starts_with(&format!("dQ: element {gap}")) && first.contains("batch 1"),
        "{first}"
    );
    let past = r.buffer_len() - 1;
    let (_, first) = outside_tokens("dQ", &r, &with(past));
    assert!(first.expect("found").contains("past the last offset"));
    // A real token written is no finding (the comparison judges it).
    let token = r.real_elements().next().expect("a token");
    assert_eq!(outside_tokens("dQ", &r, &with(token)).0, 0);
}
