//! Performance yardsticks for the CPU engine: a packed bf16 attention problem run through the
//! public path (graph, analyzer, approved plan, CPU engine, variant pack) — what a user gets —
//! and this machine's f32 matrix-multiply rate, measured with the same `gemm` crate the engine's
//! tile products use.

use std::time::Instant;

use rime_analyzer::{analyze, EngineKind, Target};
use rime_engines::{CpuEngine, Engine, Plan, VariantPack, Workspace};

use crate::fill::{node_inputs, poisoned, Fills};
use crate::spec::{BandSpec, CaseGraph, CaseSpec};
use crate::HarnessError;

/// One node's plan with its variant pack and workspace, ready to execute again and again.
struct Ready {
    plan: Box<dyn Plan>,
    pack: VariantPack,
    workspace: Workspace,
}

impl Ready {
    fn new(g: &CaseGraph, node: rime_graph::NodeId, spec: &CaseSpec) -> Result<Self, HarnessError> {
        let cpu = Target::by_name("cpu").ok_or(HarnessError::Sizing {
            tensor: "the cpu target".to_owned(),
        })?;
        let report = analyze(&g.graph, &cpu);
        let plan = CpuEngine.build_plan(&report.approve_config(
            node,
            EngineKind::CpuReference,
            None,
        )?)?;
        let mut pack = VariantPack::new();
        let sizing = || HarnessError::Sizing {
            tensor: "an input".to_owned(),
        };
        for (id, h) in node_inputs(spec, g, node, &Fills::random(1)).ok_or_else(sizing)? {
            pack.insert(id, Box::new(h));
        }
        for &id in &plan.tensors().outputs {
            pack.insert(id, Box::new(poisoned(g, id).ok_or_else(sizing)?));
        }
        let workspace = Workspace::host(plan.workspace_size());
        Ok(Self {
            plan,
            pack,
            workspace,
        })
    }

    fn run(&mut self) -> Result<(), HarnessError> {
        Ok(self.plan.execute(&mut self.pack, &mut self.workspace)?)
    }
}

/// A packed bf16 self-attention problem (B x H x S x D) with made-up data: the forward and the
/// backward node, each built once and executed on demand.
pub struct BenchProblem {
    spec: CaseSpec,
    forward: Ready,
    backward: Ready,
}

impl BenchProblem {
    /// B x H x S x D self-attention, causal or not.
    ///
    /// # Errors
    /// When a plan cannot be built (not for sizes >= 1).
    pub fn new(b: usize, h: usize, s: usize, d: usize, causal: bool) -> Result<Self, HarnessError> {
        let mut spec = CaseSpec::new(b, h, h, s, s, d);
        if causal {
            spec.band = BandSpec::CAUSAL;
        }
        let fwd = spec.forward_graph()?;
        let bwd = spec.backward_graph()?;
        let node = |n: Option<rime_graph::NodeId>| {
            n.ok_or(HarnessError::Sizing {
                tensor: "a node".to_owned(),
            })
        };
        Ok(Self {
            forward: Ready::new(&fwd, node(fwd.forward)?, &spec)?,
            backward: Ready::new(&bwd, node(bwd.backward)?, &spec)?,
            spec,
        })
    }

    /// Runs the forward (O and Stats).
    ///
    /// # Errors
    /// As `Plan::execute`.
    pub fn forward(&mut self) -> Result<(), HarnessError> {
        self.forward.run()
    }

    /// Runs the backward (dQ, dK, dV) from random O, dO and Stats around ln(S).
    ///
    /// # Errors
    /// As `Plan::execute`.
    pub fn backward(&mut self) -> Result<(), HarnessError> {
        self.backward.run()
    }

    /// FLOPs of one backward (report convention: 10 B H S^2 D, halved when causal).
    pub fn backward_flops(&self) -> f64 {
        self.spec.backward_flops()
    }

    /// FLOPs of one forward: 0.4 of the backward's.
    pub fn forward_flops(&self) -> f64 {
        self.backward_flops() * 0.4
    }
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
    let stride = isize::try_from(n).unwrap_or(isize::MAX);
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
                stride,
                false,
                a.as_ptr(),
                1,
                stride,
                b.as_ptr(),
                1,
                stride,
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
    fn the_problem_runs_and_counts_flops_by_the_report_convention() {
        let mut p = BenchProblem::new(1, 2, 16, 8, true).expect("problem");
        p.forward().expect("forward");
        p.backward().expect("backward");
        assert_eq!(p.backward_flops(), 10.0 * 2.0 * 16.0 * 16.0 * 8.0 / 2.0);
        assert!(gemm_f32_gflops(32, 1, false) > 0.0);
    }
}
