//! Performance yardsticks: the FLOP counts of SDPA and this machine's f32 matrix-multiply rate,
//! measured with the same `gemm` crate the engine's tile products use.

use std::time::Instant;

use super::problem::Shape;

/// FLOPs of one SDPA backward as reports count them: 10 * B * Hq * Sq * Skv * D with D the mean
/// of Dqk and Dv (2.5 x the forward), halved for causal masks.
pub fn backward_flops(shape: &Shape, causal: bool) -> f64 {
    let d = (shape.dqk + shape.dv) as f64 / 2.0;
    let full = 10.0 * (shape.b * shape.hq) as f64 * shape.sq as f64 * shape.skv as f64 * d;
    if causal {
        full / 2.0
    } else {
        full
    }
}

/// FLOPs of one SDPA forward: 4 * B * Hq * Sq * Skv * D, halved for causal masks.
pub fn forward_flops(shape: &Shape, causal: bool) -> f64 {
    backward_flops(shape, causal) * 0.4
}

/// Best GFLOP/s of an f32 `n x n x n` product over `reps` runs, on one thread or on all of
/// rayon's threads.
pub fn gemm_f32_gflops(n: usize, reps: usize, multithreaded: bool) -> f64 {
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 * 0.25).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 * 0.5).collect();
    let mut c = vec![0.0f32; n * n];
    let parallelism = if multithreaded {
        gemm::Parallelism::Rayon(0)
    } else {
        gemm::Parallelism::None
    };
    let mut best = f64::INFINITY;
    for _ in 0..reps.max(1) {
        let start = Instant::now();
        // SAFETY: a, b and c are n x n row-major (row stride n, column stride 1) and live
        // through the call; c is exclusively borrowed and does not alias a or b.
        unsafe {
            gemm::gemm(
                n,
                n,
                n,
                c.as_mut_ptr(),
                1,
                n as isize,
                false,
                a.as_ptr(),
                1,
                n as isize,
                b.as_ptr(),
                1,
                n as isize,
                0.0,
                1.0,
                false,
                false,
                false,
                parallelism,
            );
        }
        best = best.min(start.elapsed().as_secs_f64());
    }
    std::hint::black_box(&c);
    2.0 * (n as f64).powi(3) / best / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flop_counts_follow_the_report_convention() {
        let s = Shape {
            b: 1,
            hq: 8,
            hk: 8,
            hv: 8,
            sq: 1024,
            skv: 1024,
            dqk: 64,
            dv: 64,
        };
        assert_eq!(
            backward_flops(&s, false),
            10.0 * 8.0 * 1024.0 * 1024.0 * 64.0
        );
        assert_eq!(backward_flops(&s, true) * 2.0, backward_flops(&s, false));
        assert!(gemm_f32_gflops(32, 1, false) > 0.0);
    }
}
