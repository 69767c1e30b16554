//! Philox dropout on the CPU engine: the mask the forward draws is the one the backward
//! redraws, RNG_DUMP holds it (fed back as a given Dropout_mask with the matching scales, it
//! gives the same O, Stats, dQ, dK and dV bit for bit), the keep rate is 1 - p, and hostile
//! settings fail with errors that name the tensor. Gradients of the Philox path against
//! finite differences and the naive reference: `gradcheck.rs`, `agreement.rs` (cases
//! `dropout_philox*`).

mod support;

use rime_engines::cpu::{rng_dump, PhiloxDropout, Real};
use rime_engines::EngineError;
use support::{engine_in, Case, Data, Host, Layout, Results};

fn stream(probability: f32, offset: u64) -> PhiloxDropout {
    PhiloxDropout {
        probability,
        seed: 0xdead_beef_0bad_f00d,
        offset,
    }
}

fn dump_of(case: &Case, s: &PhiloxDropout) -> Host {
    let sh = case.shape();
    let mut dump = Host::zeros("RNG_DUMP", [sh.b, sh.hq, sh.sq, sh.skv], Layout::Bhsd);
    rng_dump(&sh, s, &mut dump.w()).unwrap();
    dump
}

fn bits(r: &Results) -> Vec<Vec<u64>> {
    [&r.o, &r.stats, &r.dq, &r.dk, &r.dv]
        .iter()
        .map(|h| h.logical().iter().map(|x| x.to_bits()).collect())
        .collect()
}

fn philox_case(p: f32, offset: u64) -> Case {
    let mut case = Case::new("philox", 2, 3, 70, 530, 8)
        .band(None, Some(0), false)
        .padding(&[70, 41], &[530, 300]);
    case.problem = case.problem.with_philox(stream(p, offset));
    case
}

/// Philox, then the same problem with its RNG_DUMP as the given mask: identical bits.
fn dump_replays<A: Real>() {
    for p in [0.1f32, 0.5] {
        let case = philox_case(p, 9);
        let data = Data::random(&case, 3);
        let philox = engine_in::<A>(&case, &data);
        let s = case.problem.philox.unwrap();
        let mut given = case.clone();
        given.problem.philox = None;
        given.problem.dropout = Some(s.scales());
        let sh = case.shape();
        given.dropout_mask = Some([sh.b, sh.hq, sh.sq, sh.skv]);
        let mut data2 = data.clone();
        data2.dropout_mask = Some(dump_of(&case, &s));
        let replay = engine_in::<A>(&given, &data2);
        assert_eq!(bits(&philox), bits(&replay), "p = {p}");
    }
}

#[test]
fn rng_dump_fed_back_as_the_mask_gives_the_same_bits_in_f32() {
    dump_replays::<f32>();
}

#[test]
fn rng_dump_fed_back_as_the_mask_gives_the_same_bits_in_f64() {
    dump_replays::<f64>();
}

#[test]
fn same_seed_and_offset_same_results_other_offset_other_mask() {
    let case = philox_case(0.3, 1);
    let data = Data::random(&case, 5);
    let a = engine_in::<f32>(&case, &data);
    assert_eq!(bits(&a), bits(&engine_in::<f32>(&case, &data)));
    let other = philox_case(0.3, 2);
    assert_ne!(bits(&a)[0], bits(&engine_in::<f32>(&other, &data))[0]);
    let (d1, d2) = (
        dump_of(&case, &stream(0.3, 1)),
        dump_of(&case, &stream(0.3, 2)),
    );
    assert_ne!(d1.data, d2.data);
}

#[test]
fn keep_rate_of_the_dump_is_one_minus_p() {
    let case = Case::new("rate", 1, 4, 128, 256, 8); // 131,072 elements
    for p in [0.1f32, 0.5] {
        let d = dump_of(&case, &stream(p, 0));
        assert!(d.data.iter().all(|&x| x == 0.0 || x == 1.0));
        let n = d.data.len() as f64;
        let kept: f64 = d.data.iter().sum();
        let q = 1.0 - f64::from(p);
        let sigma = (n * q * (1.0 - q)).sqrt();
        assert!((kept - n * q).abs() < 5.0 * sigma, "p = {p}: {kept} of {n}");
    }
}

#[test]
fn p_zero_is_no_dropout_and_p_near_one_stays_finite() {
    let plain = Case::new("plain", 2, 2, 20, 33, 8).band(None, Some(0), false);
    let data = Data::random(&plain, 1);
    let base = engine_in::<f32>(&plain, &data);
    let mut zero = plain.clone();
    zero.problem = zero.problem.with_philox(stream(0.0, 0));
    assert_eq!(bits(&base), bits(&engine_in::<f32>(&zero, &data)));
    let mut high = plain.clone();
    high.problem = high.problem.with_philox(stream(0.999, 0));
    let r = engine_in::<f32>(&high, &data);
    for t in [&r.o, &r.stats, &r.dq, &r.dk, &r.dv] {
        assert!(t.logical().iter().all(|x| x.is_finite()), "{}", t.name);
    }
}

#[test]
fn a_given_mask_with_a_philox_stream_is_refused_by_name() {
    let mut case = philox_case(0.2, 0);
    let sh = case.shape();
    case.dropout_mask = Some([sh.b, sh.hq, sh.sq, sh.skv]);
    let data = Data::random(&case, 2);
    let (mut o, mut stats) = (
        Host::zeros("O", [sh.b, sh.hq, sh.sq, sh.dv], Layout::Bhsd),
        Host::zeros("Stats", [sh.b, sh.hq, sh.sq, 1], Layout::Bhsd),
    );
    let out = rime_engines::cpu::ForwardOutputs {
        o: o.w(),
        stats: Some(stats.w()),
    };
    let err = rime_engines::cpu::forward::<f32>(&case.problem, &data.inputs(), out).unwrap_err();
    assert!(
        matches!(&err, EngineError::DropoutMaskWithPhilox { tensor } if tensor == "Dropout_mask"),
        "{err}"
    );
}

#[test]
fn an_rng_dump_of_other_dims_is_refused_by_name() {
    let case = philox_case(0.2, 0);
    let sh = case.shape();
    let mut dump = Host::zeros("RNG_DUMP", [sh.b, sh.hq, sh.sq, sh.skv + 1], Layout::Bhsd);
    let err = rng_dump(&sh, &stream(0.2, 0), &mut dump.w()).unwrap_err();
    assert!(
        matches!(&err, EngineError::DimsMismatch { tensor, .. } if tensor == "RNG_DUMP"),
        "{err}"
    );
    assert!(dump.data.iter().all(|&x| x == 0.0), "nothing written");
}
