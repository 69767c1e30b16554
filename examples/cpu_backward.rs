//! Measures the CPU engine's SDPA backward (and forward) against this machine's f32 GEMM rate.
//!
//! ```text
//! cargo run --release --example cpu_backward -- [B H S D] [--causal]
//! ```
//! Defaults: B=1, H=8, S=1024, D=64, bf16 inputs, f32 math.

use std::time::Instant;

use half::bf16;
use rime::engines::cpu::{
    backward, forward, perf, AttentionInputs, BackwardInputs, BackwardOutputs, Band,
    ForwardOutputs, HostSlice, HostSliceMut, Problem, Shape, TensorMut, TensorRef, View4,
};

fn best_of(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let causal = args.iter().any(|a| a == "--causal");
    let nums: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let [b, h, s, d] = match nums.as_slice() {
        [b, h, s, d] => [*b, *h, *s, *d],
        _ => [1, 8, 1024, 64],
    };
    let shape = Shape {
        b,
        hq: h,
        hk: h,
        hv: h,
        sq: s,
        skv: s,
        dqk: d,
        dv: d,
    };
    let mut problem = Problem::new(shape);
    if causal {
        problem.band = Band {
            right_bound: Some(0),
            ..Band::default()
        };
    }
    let threads = rayon::current_num_threads();
    println!("machine: {threads} rayon threads");
    let gemm_1 = perf::gemm_f32_gflops(1024, 5, false);
    let gemm_all = perf::gemm_f32_gflops(1024, 5, true);
    println!("gemm crate f32 1024^3: {gemm_1:.1} GFLOP/s on 1 thread, {gemm_all:.1} GFLOP/s on {threads}");

    let view = View4::packed([b, h, s, d]);
    let stats_view = View4::packed([b, h, s, 1]);
    let n = b * h * s * d;
    let rand = |seed: u32| -> Vec<bf16> {
        (0..n as u32)
            .map(|i| {
                bf16::from_f32(((i.wrapping_mul(2654435761) ^ seed) % 1000) as f32 / 500.0 - 1.0)
            })
            .collect()
    };
    let (q, k, v, d_o) = (rand(1), rand(2), rand(3), rand(4));
    let t = |name, x: &'static [bf16]| TensorRef::new(name, HostSlice::Bf16(x), view);
    let (q, k, v, d_o) = (q.leak(), k.leak(), v.leak(), d_o.leak());
    let inputs = AttentionInputs {
        q: t("Q", q)?,
        k: t("K", k)?,
        v: t("V", v)?,
        bias: None,
        sink: None,
    };
    let mut o = vec![bf16::ZERO; n];
    let mut stats = vec![0f32; b * h * s];
    let fwd = best_of(3, || {
        let out = ForwardOutputs {
            o: TensorMut::new("O", HostSliceMut::Bf16(&mut o), view).expect("O fits"),
            stats: Some(
                TensorMut::new("Stats", HostSliceMut::F32(&mut stats), stats_view)
                    .expect("Stats fits"),
            ),
        };
        forward::<f32>(&problem, &inputs, out).expect("forward runs");
    });
    let (mut dq, mut dk, mut dv) = (
        vec![bf16::ZERO; n],
        vec![bf16::ZERO; n],
        vec![bf16::ZERO; n],
    );
    let bwd_in = BackwardInputs {
        attn: inputs,
        o: TensorRef::new("O", HostSlice::Bf16(&o), view)?,
        d_o: t("dO", d_o)?,
        stats: TensorRef::new("Stats", HostSlice::F32(&stats), stats_view)?,
    };
    let bwd = best_of(3, || {
        let out = BackwardOutputs {
            dq: TensorMut::new("dQ", HostSliceMut::Bf16(&mut dq), view).expect("dQ fits"),
            dk: TensorMut::new("dK", HostSliceMut::Bf16(&mut dk), view).expect("dK fits"),
            dv: TensorMut::new("dV", HostSliceMut::Bf16(&mut dv), view).expect("dV fits"),
            dbias: None,
            dsink: None,
        };
        backward::<f32>(&problem, &bwd_in, out).expect("backward runs");
    });
    let fwd_rate = perf::forward_flops(&shape, causal) / fwd / 1e9;
    let bwd_rate = perf::backward_flops(&shape, causal) / bwd / 1e9;
    println!(
        "problem: B={b} H={h} S={s} D={d} bf16 in, f32 math{}",
        if causal { ", causal" } else { "" }
    );
    println!("forward : {:8.2} ms  {fwd_rate:7.1} GFLOP/s", fwd * 1e3);
    println!(
        "backward: {:8.2} ms  {bwd_rate:7.1} GFLOP/s = {:.0}% of the {threads}-thread gemm rate, {:.0}% of 1-thread",
        bwd * 1e3,
        100.0 * bwd_rate / gemm_all,
        100.0 * bwd_rate / gemm_1
    );
    Ok(())
}
