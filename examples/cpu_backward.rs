//! Measures the CPU engine's SDPA backward (and forward) against this machine's f32 GEMM rate,
//! both measured in this run with the `gemm` crate the engine's tile products use.
//!
//! ```text
//! cargo run --release --example cpu_backward -- [B H S D] [--causal]
//! ```
//! Defaults: B=1, H=8, S=1024, D=64, bf16 inputs and outputs, f32 math.

use std::time::Instant;

use rime_conformance::cpu_perf::{gemm_f32_gflops, BenchProblem};

/// Best wall time of `reps` calls, seconds.
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
    let threads = rayon::current_num_threads();
    let gemm_1 = gemm_f32_gflops(1024, 5, false);
    let gemm_all = gemm_f32_gflops(1024, 5, true);
    println!("gemm crate, f32 1024x1024x1024: {gemm_1:.1} GFLOP/s on 1 thread, {gemm_all:.1} GFLOP/s on {threads} threads");

    let mut p = BenchProblem::new(b, h, s, d, causal)?;
    let mut fwd_result = Ok(());
    let fwd = best_of(3, || fwd_result = p.forward());
    fwd_result?;
    let mut bwd_result = Ok(());
    let bwd = best_of(5, || bwd_result = p.backward());
    bwd_result?;
    let fwd_rate = p.forward_flops() / fwd / 1e9;
    let bwd_rate = p.backward_flops() / bwd / 1e9;
    let mask = if causal { ", causal" } else { "" };
    println!("SDPA B={b} H={h} S={s} D={d}{mask}, bf16 io, f32 math, {threads} threads:");
    println!("  forward : {:8.2} ms  {fwd_rate:6.1} GFLOP/s", fwd * 1e3);
    println!(
        "  backward: {:8.2} ms  {bwd_rate:6.1} GFLOP/s = {:.0}% of the {threads}-thread gemm rate ({:.0}% of 1-thread)",
        bwd * 1e3,
        100.0 * bwd_rate / gemm_all,
        100.0 * bwd_rate / gemm_1
    );
    Ok(())
}
