//! Performance yardsticks: the FLOP counts of SDPA and this machine's f32 matrix-multiply rate,
//! measured with the same `gemm` crate the engine's tile products use.

use std::time::Instant;

use half::bf16;

use super::layout::{HostSlice, HostSliceMut, TensorMut, TensorRef, View4};
use super::problem::{
    AttentionInputs, BackwardInputs, BackwardOutputs, Band, ForwardOutputs, Problem, Shape,
};
use super::{backward, forward};
use crate::EngineError;

/// A packed bf16 attention problem with made-up data, for benchmarks: run the forward once
/// (O, Stats), then time [`BenchProblem::backward`].
#[derive(Debug, Clone)]
pub struct BenchProblem {
    /// What is computed.
    pub problem: Problem,
    q: Vec<bf16>,
    k: Vec<bf16>,
    v: Vec<bf16>,
    d_o: Vec<bf16>,
    o: Vec<bf16>,
    stats: Vec<f32>,
    grads: [Vec<bf16>; 3],
}

impl BenchProblem {
    /// B x H x S x D, self-attention, causal or not.
    pub fn new(b: usize, h: usize, s: usize, d: usize, causal: bool) -> BenchProblem {
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
        let n = b * h * s * d;
        let data = |seed: u32| -> Vec<bf16> {
            (0..n as u32)
                .map(|i| {
                    let x = (i.wrapping_mul(2_654_435_761) ^ seed.wrapping_mul(40_503)) % 1000;
                    bf16::from_f32(x as f32 / 500.0 - 1.0)
                })
                .collect()
        };
        BenchProblem {
            problem,
            q: data(1),
            k: data(2),
            v: data(3),
            d_o: data(4),
            o: vec![bf16::ZERO; n],
            stats: vec![0.0; b * h * s],
            grads: [
                vec![bf16::ZERO; n],
                vec![bf16::ZERO; n],
                vec![bf16::ZERO; n],
            ],
        }
    }

    fn views(&self) -> (View4, View4) {
        let s = self.problem.shape;
        (
            View4::packed([s.b, s.hq, s.sq, s.dqk]),
            View4::packed([s.b, s.hq, s.sq, 1]),
        )
    }

    /// Runs the forward, writing O and Stats.
    ///
    /// # Errors
    /// As [`forward`] (not expected: the buffers are sized from the problem).
    pub fn forward(&mut self) -> Result<(), EngineError> {
        let (view, stats_view) = self.views();
        let inputs = AttentionInputs {
            q: TensorRef::new("Q", HostSlice::Bf16(&self.q), view)?,
            k: TensorRef::new("K", HostSlice::Bf16(&self.k), view)?,
            v: TensorRef::new("V", HostSlice::Bf16(&self.v), view)?,
            bias: None,
            sink: None,
        };
        let outputs = ForwardOutputs {
            o: TensorMut::new("O", HostSliceMut::Bf16(&mut self.o), view)?,
            stats: Some(TensorMut::new(
                "Stats",
                HostSliceMut::F32(&mut self.stats),
                stats_view,
            )?),
        };
        forward::<f32>(&self.problem, &inputs, outputs)
    }

    /// Runs the backward from the last forward's O and Stats, writing dQ, dK, dV.
    ///
    /// # Errors
    /// As [`backward`] (not expected: the buffers are sized from the problem).
    pub fn backward(&mut self) -> Result<(), EngineError> {
        let (view, stats_view) = self.views();
        let inputs = BackwardInputs {
            attn: AttentionInputs {
                q: TensorRef::new("Q", HostSlice::Bf16(&self.q), view)?,
                k: TensorRef::new("K", HostSlice::Bf16(&self.k), view)?,
                v: TensorRef::new("V", HostSlice::Bf16(&self.v), view)?,
                bias: None,
                sink: None,
            },
            o: TensorRef::new("O", HostSlice::Bf16(&self.o), view)?,
            d_o: TensorRef::new("dO", HostSlice::Bf16(&self.d_o), view)?,
            stats: TensorRef::new("Stats", HostSlice::F32(&self.stats), stats_view)?,
        };
        let [dq, dk, dv] = &mut self.grads;
        let outputs = BackwardOutputs {
            dq: TensorMut::new("dQ", HostSliceMut::Bf16(dq), view)?,
            dk: TensorMut::new("dK", HostSliceMut::Bf16(dk), view)?,
            dv: TensorMut::new("dV", HostSliceMut::Bf16(dv), view)?,
            dbias: None,
            dsink: None,
        };
        backward::<f32>(&self.problem, &inputs, outputs)
    }

    /// FLOPs of one backward (report convention).
    pub fn backward_flops(&self) -> f64 {
        backward_flops(&self.problem.shape, self.problem.band.right_bound.is_some())
    }

    /// FLOPs of one forward (report convention).
    pub fn forward_flops(&self) -> f64 {
        forward_flops(&self.problem.shape, self.problem.band.right_bound.is_some())
    }
}

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
        let mut p = BenchProblem::new(1, 2, 16, 8, true);
        p.forward().unwrap();
        p.backward().unwrap();
        assert!(p.grads[0].iter().any(|x| x.to_f32() != 0.0));
        assert_eq!(p.backward_flops(), 10.0 * 2.0 * 16.0 * 16.0 * 8.0 / 2.0);
    }
}
