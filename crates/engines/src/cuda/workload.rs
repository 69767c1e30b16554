//! A backward SDPA problem on the device for measurements: the graph of a case (BHSD, packed),
//! its inputs filled with random values in [-1, 1) (Stats near ln(Skv), as a forward gives),
//! poisoned outputs, the analyzer's sm120 candidates for the live device, and executions timed
//! with CUDA events. Shared by `rime selftest --determinism` and `rime bench`.

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use half::{bf16, f16};
use rayon::prelude::*;
use rime_analyzer::{analyze, heuristics, Candidate, EngineKind, HeuristicsOptions, Target};
use rime_graph::{Context, DataType, Graph, GraphError, SdpaBackwardAttrs, Tensor, TensorId};

use super::buffer::{DeviceBuffer, DeviceWorkspace};
use super::context::CudaDevice;
use super::engine::Sm120EnginePlan;
use super::error::CudaError;
use crate::{EngineError, HostBuffer, Plan, VariantPack, Workspace};

/// Which bias a case carries (always with dBias when present).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BiasKind {
    /// No bias.
    None,
    /// One bias per batch and head: (B, Hq, Sq, Skv).
    Batch,
    /// One bias shared by the batch: (1, Hq, Sq, Skv).
    Broadcast,
}

impl BiasKind {
    /// The name used in suites and by the PyTorch peer script.
    pub fn name(self) -> &'static str {
        match self {
            BiasKind::None => "none",
            BiasKind::Batch => "batch",
            BiasKind::Broadcast => "broadcast",
        }
    }

    /// The kind named `name` (`none`, `batch`, `broadcast`).
    pub fn from_name(name: &str) -> Option<BiasKind> {
        [BiasKind::None, BiasKind::Batch, BiasKind::Broadcast]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

/// One backward case.
#[derive(Debug, Clone, PartialEq)]
pub struct BackwardCase {
    /// Batch.
    pub b: i64,
    /// Query heads.
    pub hq: i64,
    /// Key/value heads.
    pub hk: i64,
    /// Query length.
    pub sq: i64,
    /// Key/value length.
    pub skv: i64,
    /// Q/K head dim.
    pub d: i64,
    /// V head dim.
    pub dv: i64,
    /// Causal (top-left).
    pub causal: bool,
    /// Bias (with dBias).
    pub bias: BiasKind,
    /// io data type (bf16 or f16).
    pub io: DataType,
    /// Deterministic gradients asked for.
    pub deterministic: bool,
}

impl BackwardCase {
    /// A short name, e.g. `b4 h16/16 s2048x2048 d128 bias=batch causal det bf16`.
    pub fn name(&self) -> String {
        let d = if self.d == self.dv {
            format!("d{}", self.d)
        } else {
            format!("d{}/{}", self.d, self.dv)
        };
        format!(
            "b{} h{}/{} s{}x{} {d} bias={}{}{} {}",
            self.b,
            self.hq,
            self.hk,
            self.sq,
            self.skv,
            self.bias.name(),
            if self.causal { " causal" } else { "" },
            if self.deterministic { " det" } else { "" },
            self.io
        )
    }

    /// The backward graph: BHSD packed tensors, f32 Stats, the bias with dBias when present.
    ///
    /// # Errors
    /// When the graph builder refuses the case (e.g. non-positive sizes).
    pub fn graph(&self) -> Result<Graph, GraphError> {
        let (b, hq, hk) = (self.b, self.hq, self.hk);
        let mut g = Graph::new(Context::with_io(self.io));
        let t = |name: &str, h: i64, s: i64, d: i64| Tensor::packed(name, &[b, h, s, d]);
        let q = g.tensor(t("Q", hq, self.sq, self.d));
        let k = g.tensor(t("K", hk, self.skv, self.d));
        let v = g.tensor(t("V", hk, self.skv, self.dv));
        let o = g.tensor(t("O", hq, self.sq, self.dv));
        let d_o = g.tensor(t("dO", hq, self.sq, self.dv));
        let stats =
            g.tensor(Tensor::packed("Stats", &[b, hq, self.sq, 1]).with_data_type(DataType::F32));
        let mut attrs = SdpaBackwardAttrs::new().name("bwd");
        if self.causal {
            attrs = attrs.causal();
        }
        if self.deterministic {
            attrs = attrs.deterministic();
        }
        let bias_batch = match self.bias {
            BiasKind::None => None,
            BiasKind::Batch => Some(b),
            BiasKind::Broadcast => Some(1),
        };
        if let Some(bb) = bias_batch {
            let bias = g.tensor(Tensor::packed("Bias", &[bb, hq, self.sq, self.skv]));
            attrs = attrs.bias(bias).dbias();
        }
        g.sdpa_backward(q, k, v, o, d_o, stats, attrs)?;
        Ok(g)
    }

    /// Backward FLOPs as the suites count them: 10 * B * Hq * Sq * Skv * Dqk, halved when causal.
    pub fn flops(&self) -> f64 {
        let f = 10.0 * (self.b * self.hq * self.sq * self.skv * self.d) as f64;
        if self.causal {
            f / 2.0
        } else {
            f
        }
    }

    /// Bytes of bias read plus dBias written, each once (0 without a bias).
    pub fn bias_bytes(&self) -> f64 {
        let bb = match self.bias {
            BiasKind::None => return 0.0,
            BiasKind::Batch => self.b,
            BiasKind::Broadcast => 1,
        };
        2.0 * 2.0 * (bb * self.hq * self.sq * self.skv) as f64
    }
}

/// The sm120 candidates the analyzer ranks for `graph` on `target`, best first (rank 1 is the
/// configuration the analyzer chooses), with the report they were approved from.
pub fn sm120_candidates(
    graph: &Graph,
    target: &Target,
) -> (rime_analyzer::SupportReport, Vec<Candidate>) {
    let report = analyze(graph, target);
    let ranked = heuristics(&report, &HeuristicsOptions::default())
        .into_iter()
        .filter(|c| c.config.engine == EngineKind::Sm120)
        .collect();
    (report, ranked)
}

/// Fills `n` values in [-1, 1) (or ln(skv) + [-0.5, 0.5) for Stats), reproducibly from `seed`
/// and in parallel: large biases are a gigabyte or more.
fn random_host(
    data_type: DataType,
    n: usize,
    seed: u64,
    stats_center: Option<f64>,
) -> Option<HostBuffer> {
    const CHUNK: usize = 1 << 16;
    let value = |x: &mut u64| {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        let u = (*x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        stats_center.map_or(u, |c| c + 0.5 * u)
    };
    macro_rules! gen {
        ($t:ty, $conv:expr) => {{
            let mut v = vec![<$t>::default(); n];
            v.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
                let mut x = (seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
                    .wrapping_mul(0x2545_f491_4f6c_dd1d)
                    | 1;
                for e in chunk {
                    *e = $conv(value(&mut x));
                }
            });
            v
        }};
    }
    Some(match data_type {
        DataType::Bf16 => HostBuffer::Bf16(gen!(bf16, bf16::from_f64)),
        DataType::F16 => HostBuffer::F16(gen!(f16, f16::from_f64)),
        DataType::F32 => HostBuffer::F32(gen!(f32, |x: f64| x as f32)),
        _ => return None,
    })
}

/// A case's buffers on the device, in a variant pack (inputs random, outputs poisoned), with
/// optional host copies of the inputs for a CPU reference.
pub struct Workload {
    /// The graph.
    pub graph: Graph,
    /// The variant pack (device buffers).
    pub pack: VariantPack,
    /// Host copies of the inputs (when asked for).
    pub host_inputs: Vec<(TensorId, HostBuffer)>,
    /// The outputs: tensor, data type, elements.
    pub outputs: Vec<(TensorId, DataType, usize)>,
}

impl Workload {
    /// Uploads random inputs (seeded by `seed` and the tensor's position) and poisoned outputs
    /// for the backward node of `graph`.
    ///
    /// # Errors
    /// Sizes that do not fit, or driver errors.
    pub fn new(
        dev: &CudaDevice,
        graph: Graph,
        seed: u64,
        keep_host: bool,
    ) -> Result<Self, EngineError> {
        let node = graph.nodes().first().ok_or(EngineError::Unsupported {
            engine: "sm120",
            feature: "an empty graph",
        })?;
        let sizing = EngineError::Unsupported {
            engine: "sm120",
            feature: "tensor sizes",
        };
        let skv = rime_graph::SdpaShape::of(&graph, node).map_or(1, |s| s.skv.max(1));
        // A tensor's span in elements and its data type.
        let span = |id| -> Result<(&rime_graph::Tensor, usize, DataType), EngineError> {
            let t = graph.get(id).ok_or_else(|| sizing.clone())?;
            let len = t
                .span_elements()
                .and_then(|x| usize::try_from(x).ok())
                .ok_or_else(|| sizing.clone())?;
            let dt = graph.data_type(id).ok_or_else(|| sizing.clone())?;
            Ok((t, len, dt))
        };
        let mut pack = VariantPack::new();
        let mut host_inputs = Vec::new();
        for (n, (_, &id)) in node.inputs.iter().enumerate() {
            let (t, len, dt) = span(id)?;
            let center = (t.name == "Stats").then(|| (skv as f64).ln());
            let host = random_host(dt, len, seed.wrapping_add(n as u64 * 7919), center)
                .ok_or_else(|| sizing.clone())?;
            pack.insert(id, Box::new(DeviceBuffer::upload(dev, &host)?));
            if keep_host {
                host_inputs.push((id, host));
            }
        }
        let mut outputs = Vec::new();
        for &id in node.outputs.values() {
            let (_, len, dt) = span(id)?;
            outputs.push((id, dt, len));
        }
        let mut w = Self {
            graph,
            pack,
            host_inputs,
            outputs,
        };
        w.poison_outputs(dev)?;
        Ok(w)
    }

    /// Replaces every output with a fresh poisoned (all bits set) buffer.
    ///
    /// # Errors
    /// Driver errors.
    pub fn poison_outputs(&mut self, dev: &CudaDevice) -> Result<(), EngineError> {
        for &(id, dt, len) in &self.outputs {
            self.pack
                .insert(id, Box::new(DeviceBuffer::poisoned(dev, dt, len)?));
        }
        Ok(())
    }

    /// Every output copied back, in node order.
    ///
    /// # Errors
    /// Driver errors, or an output missing from the pack.
    pub fn download(&self, dev: &CudaDevice) -> Result<Vec<HostBuffer>, EngineError> {
        self.outputs
            .iter()
            .map(|&(id, _, _)| {
                let buf = self
                    .pack
                    .get(&id.into())
                    .and_then(|b| b.as_any().downcast_ref::<DeviceBuffer>())
                    .ok_or_else(|| EngineError::MissingBuffer {
                        tensor: format!("{id:?}"),
                    })?;
                Ok(buf.download(dev)?)
            })
            .collect()
    }
}

/// FNV-1a of a buffer's little-endian bytes: equal hashes over runs mean bitwise-equal outputs.
pub fn hash(buffer: &HostBuffer) -> u64 {
    buffer
        .to_le_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
}

/// A built plan and its device workspace.
pub struct Prepared {
    /// The plan.
    pub plan: Sm120EnginePlan,
    /// Its workspace.
    pub workspace: Workspace,
}

impl Prepared {
    /// Approves `candidate` from `report`, builds (compiles) the plan and allocates its workspace.
    ///
    /// # Errors
    /// Approval, compile or driver errors.
    pub fn new(
        dev: &Arc<CudaDevice>,
        report: &rime_analyzer::SupportReport,
        candidate: &Candidate,
    ) -> Result<Self, EngineError> {
        Self::with_main_kernel(dev, report, candidate, None)
    }

    /// [`Prepared::new`] with the main kernel swapped for `kernel` when given (an
    /// [`H200_TUNED`](rime_analyzer::sm120::kernels::H200_TUNED) entry of the same envelope and
    /// Q tile; see [`ApprovedPlan::with_main_kernel`](rime_analyzer::ApprovedPlan::with_main_kernel)).
    ///
    /// # Errors
    /// Approval, a kernel that does not match the candidate's, compile or driver errors.
    pub fn with_main_kernel(
        dev: &Arc<CudaDevice>,
        report: &rime_analyzer::SupportReport,
        candidate: &Candidate,
        kernel: Option<&'static rime_analyzer::KernelConfig>,
    ) -> Result<Self, EngineError> {
        let unsupported = |feature| EngineError::Unsupported {
            engine: "sm120",
            feature,
        };
        let mut approved = report
            .approve(candidate)
            .map_err(|_| unsupported("approval"))?;
        if let Some(k) = kernel {
            approved = approved
                .with_main_kernel(k)
                .ok_or_else(|| unsupported("a main kernel of another envelope or Q tile"))?;
        }
        let plan = Sm120EnginePlan::new(Arc::clone(dev), &approved)?;
        let workspace = Workspace::Device(DeviceWorkspace::new(dev, plan.workspace_size().max(1))?);
        Ok(Self { plan, workspace })
    }

    /// Executes once and waits.
    ///
    /// # Errors
    /// Engine or driver errors.
    pub fn execute(&mut self, pack: &mut VariantPack) -> Result<(), EngineError> {
        self.plan.execute(pack, &mut self.workspace)
    }

    /// `warmup` untimed executions, then `iters` executions each between two CUDA events on the
    /// plan's stream (every kernel of the backward included); the times in milliseconds, sorted.
    ///
    /// # Errors
    /// Engine or driver errors.
    pub fn time(
        &mut self,
        dev: &CudaDevice,
        pack: &mut VariantPack,
        warmup: usize,
        iters: usize,
    ) -> Result<Vec<f64>, EngineError> {
        for _ in 0..warmup {
            self.plan.enqueue(pack, &mut self.workspace)?;
        }
        dev.synchronize()?;
        let drv = || CudaError::driver("event timing");
        let mut times = Vec::with_capacity(iters);
        for _ in 0..iters {
            let start = dev
                .stream()
                .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(drv())?;
            self.plan.enqueue(pack, &mut self.workspace)?;
            let end = dev
                .stream()
                .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(drv())?;
            times.push(f64::from(start.elapsed_ms(&end).map_err(drv())?));
        }
        dev.synchronize()?;
        times.sort_by(f64::total_cmp);
        Ok(times)
    }
}

/// The median of sorted times (0 when empty).
pub fn median(sorted: &[f64]) -> f64 {
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rime_analyzer::Route;

    fn case(bias: BiasKind, deterministic: bool) -> BackwardCase {
        BackwardCase {
            b: 2,
            hq: 8,
            hk: 2,
            sq: 300,
            skv: 190,
            d: 128,
            dv: 128,
            causal: true,
            bias,
            io: DataType::Bf16,
            deterministic,
        }
    }

    fn routes(c: &BackwardCase) -> Vec<Option<Route>> {
        let target = Target::by_name("rtx-5090").expect("profile");
        let graph = c.graph().expect("graph");
        assert!(graph.validate().is_ok(), "{}", c.name());
        sm120_candidates(&graph, &target)
            .1
            .iter()
            .map(|cand| cand.config.route)
            .collect()
    }

    #[test]
    fn deterministic_graphs_get_only_deterministic_routes() {
        let det = routes(&case(BiasKind::Batch, true));
        assert!(!det.is_empty());
        assert!(det.iter().all(|r| *r != Some(Route::Atomic)), "{det:?}");
        assert!(routes(&case(BiasKind::Batch, false)).contains(&Some(Route::Atomic)));
    }

    #[test]
    fn deterministic_broadcast_dbias_is_rejected() {
        assert!(routes(&case(BiasKind::Broadcast, true)).is_empty());
        assert!(!routes(&case(BiasKind::Broadcast, false)).is_empty());
    }

    #[test]
    fn flops_and_bias_bytes_follow_the_suite_formulas() {
        let c = case(BiasKind::Broadcast, false);
        assert_eq!(c.flops(), 10.0 * (2 * 8 * 300 * 190 * 128) as f64 / 2.0);
        assert_eq!(c.bias_bytes(), 4.0 * (8 * 300 * 190) as f64);
        assert_eq!(case(BiasKind::None, false).bias_bytes(), 0.0);
        assert_eq!(BiasKind::from_name("batch"), Some(BiasKind::Batch));
        assert_eq!(BiasKind::from_name("per-batch"), None);
    }

    #[test]
    fn random_inputs_are_reproducible_and_never_zero() {
        let a = random_host(DataType::Bf16, 200_000, 3, None).expect("bf16");
        let b = random_host(DataType::Bf16, 200_000, 3, None).expect("bf16");
        assert_eq!(a, b);
        let v = a.to_f64();
        // bf16 rounds values near 1 to 1.
        assert!(v.iter().all(|x| (-1.0..=1.0).contains(x)));
        assert!(v.iter().filter(|x| **x == 0.0).count() < 100);
        assert_ne!(
            hash(&a),
            hash(&random_host(DataType::Bf16, 200_000, 4, None).expect("bf16"))
        );
    }
}
