//! Float64 gradient checks: central finite differences of L = sum(O * W) through the engine's
//! forward agree with the engine's backward (dO = W), for every supported option.

mod support;

use support::{cases, engine_f64, engine_forward, indices, worst, Case, Data, Host};

fn loss(case: &Case, data: &Data) -> f64 {
    let (o, _) = engine_forward(case, data);
    o.logical()
        .iter()
        .zip(data.w.logical())
        .map(|(a, b)| a * b)
        .sum()
}

/// Finite-difference gradient of the loss with respect to every logical element of the tensor
/// `pick` selects.
fn numeric(case: &Case, data: &Data, pick: fn(&mut Data) -> &mut Host) -> Vec<f64> {
    const H: f64 = 1e-6;
    let mut work = data.clone();
    let dims = pick(&mut work).view.dims;
    indices(dims)
        .map(|idx| {
            let at = pick(&mut work).offset(idx);
            let x0 = pick(&mut work).data[at];
            pick(&mut work).data[at] = x0 + H;
            let up = loss(case, &work);
            pick(&mut work).data[at] = x0 - H;
            let down = loss(case, &work);
            pick(&mut work).data[at] = x0;
            (up - down) / (2.0 * H)
        })
        .collect()
}

fn check(case: &Case) {
    let data = Data::random(case, 7);
    let r = engine_f64(case, &data);
    let mut grads: Vec<(&str, Vec<f64>, Vec<f64>)> = vec![
        ("dQ", r.dq.logical(), numeric(case, &data, |d| &mut d.q)),
        ("dK", r.dk.logical(), numeric(case, &data, |d| &mut d.k)),
        ("dV", r.dv.logical(), numeric(case, &data, |d| &mut d.v)),
    ];
    if let Some(dbias) = &r.dbias {
        grads.push((
            "dBias",
            dbias.logical(),
            numeric(case, &data, |d| d.bias.as_mut().unwrap()),
        ));
    }
    if let Some(dsink) = &r.dsink {
        grads.push((
            "dSink",
            dsink.logical(),
            numeric(case, &data, |d| d.sink.as_mut().unwrap()),
        ));
    }
    for (name, analytic, fd) in grads {
        let w = worst(&analytic, &fd, 1e-7, 1e-6);
        assert!(
            w <= 1.0,
            "{}: {name} differs from finite differences (score {w})",
            case.name
        );
        assert!(
            analytic.iter().any(|&x| x != 0.0),
            "{}: {name} is all zero",
            case.name
        );
    }
    for t in [&r.dq, &r.dk, &r.dv] {
        assert!(
            t.gaps_untouched(),
            "{}: {} wrote between rows",
            case.name,
            t.name
        );
    }
}

/// Checks option `name` on two tiny shapes: Sq < Skv, and Sq > Skv (top-left bands only: a
/// bottom-right band with Sq > Skv and no padding is rejected by the analyzer).
fn check_option(name: &str) {
    let small = cases(2, 5, 7, 4);
    let case = small
        .iter()
        .find(|c| c.name == name)
        .expect("option exists");
    check(case);
    let tall = cases(1, 6, 4, 3);
    let case = tall.iter().find(|c| c.name == name).expect("option exists");
    if !case.problem.band.bottom_right {
        check(case);
    }
}

macro_rules! per_option {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check_option(stringify!($name));
            }
        )*

        #[test]
        fn every_option_has_a_gradient_check() {
            let tested = [$(stringify!($name)),*];
            for case in cases(1, 4, 4, 2) {
                assert!(tested.contains(&case.name), "no gradient check for {}", case.name);
            }
        }
    };
}

per_option!(
    plain,
    causal_top_left,
    causal_bottom_right,
    sliding_window,
    band_bottom_right,
    padding,
    padding_causal_bottom_right,
    alibi_causal,
    bias_per_batch_head,
    bias_broadcast_batch,
    bias_broadcast_head,
    bias_broadcast_both,
    bias_broadcast_rows,
    bias_broadcast_rows_all_causal,
    gqa,
    mqa,
    dqk_ne_dv,
    sink,
    sink_causal_padding,
    strided_bshd_padded,
    dropout_mask,
    dropout_broadcast_mask_causal,
    dropout_philox,
    dropout_philox_causal_padding,
    everything,
);
