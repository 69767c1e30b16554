//! A backward SDPA problem on the device for measurements: the graph of a suite row (BHSD
//! packed; THD, or BSHD padded under a padding mask, for rows with lengths), its inputs filled
//! with random values (Stats near ln(Skv), as a forward gives; NaN in padding, `fill.rs`),
//! poisoned outputs, the analyzer's sm120 candidates for the live device, and executions timed
//! with CUDA events. Shared by `rime selftest --determinism` and `rime bench`.

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use rime_analyzer::{
    analyze, heuristics, ApprovedPlan, Candidate, EngineKind, HeuristicsOptions, KernelConfig,
    SupportReport, Target,
};
use rime_engines::cuda::{CudaDevice, CudaError, DeviceBuffer, DeviceWorkspace, Sm120EnginePlan};
use rime_engines::{HostBuffer, Plan, VariantPack, Workspace};
use rime_graph::{DataType, GraphError, TensorId};

use crate::fill::{node_inputs, Fills};
use crate::spec::{BiasSpec, CaseGraph, CaseSpec, Layout, CAUSAL};
use crate::HarnessError;
use rime_analyzer::Band;

/// Which bias a suite row carries (always with dBias when present).
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

/// One backward row of a benchmark or determinism suite.
#[derive(Debug, Clone, PartialEq)]
pub struct BackwardCase {
    /// Batch.
    pub b: usize,
    /// Query heads.
    pub hq: usize,
    /// Key/value heads.
    pub hk: usize,
    /// Query length.
    pub sq: usize,
    /// Key/value length.
    pub skv: usize,
    /// Q/K head dim.
    pub d: usize,
    /// V head dim.
    pub dv: usize,
    /// Causal (top-left).
    pub causal: bool,
    /// Bias (with dBias).
    pub bias: BiasKind,
    /// io data type (bf16 or f16).
    pub io: DataType,
    /// Deterministic gradients asked for.
    pub deterministic: bool,
    /// An attention sink, with dSink.
    pub sink: bool,
    /// Where the tokens sit: every batch full, or per-batch lengths packed THD or padded.
    pub tokens: Tokens,
}

/// How a suite row's sequences hold their tokens.
#[derive(Debug, Clone, PartialEq)]
pub enum Tokens {
    /// Every batch has `sq` query and `skv` key tokens, BHSD.
    Full,
    /// Variable-length (THD) self-attention: each batch's sequence length, Q and KV alike
    /// (`b` of them, `sq` = `skv` = the longest). Every token tensor (Q, K, V, O, dO, dQ, dK,
    /// dV, Stats) is then packed THD with ragged offsets and a padding mask gives the lengths
    /// ([`crate::spec::Layout::Thd`]).
    Packed(Vec<usize>),
    /// The same lengths in a padded (B, S, H, D) layout of `sq` = `skv` rows per batch under a
    /// padding mask (`SEQ_LEN_Q` / `SEQ_LEN_KV`): what a framework's padded batch with a key
    /// padding mask is. The rows past a batch's length are padding, which no engine reads.
    Padded(Vec<usize>),
}

impl Tokens {
    /// The per-batch lengths of a packed or padded row.
    pub fn lens(&self) -> Option<&[usize]> {
        match self {
            Tokens::Full => None,
            Tokens::Packed(l) | Tokens::Padded(l) => Some(l),
        }
    }
}

impl BackwardCase {
    /// A short name, e.g. `b4 h16/16 s2048x2048 d128 bias=batch causal sink det bf16`; a THD
    /// row shows its lengths instead of the sequence sizes, `b2 h16/16 thd[512+1531] d128 ...`,
    /// and a padded one both, `b2 h16/16 s1536x1536 padding[512+1531] d128 ...`.
    pub fn name(&self) -> String {
        let d = if self.d == self.dv {
            format!("d{}", self.d)
        } else {
            format!("d{}/{}", self.d, self.dv)
        };
        let joined = |lens: &[usize]| {
            let l: Vec<String> = lens.iter().map(ToString::to_string).collect();
            l.join("+")
        };
        let tokens = match &self.tokens {
            Tokens::Full => format!("s{}x{}", self.sq, self.skv),
            Tokens::Packed(lens) => format!("thd[{}]", joined(lens)),
            Tokens::Padded(lens) => {
                format!("s{}x{} padding[{}]", self.sq, self.skv, joined(lens))
            }
        };
        format!(
            "b{} h{}/{} {tokens} {d} bias={}{}{}{} {}",
            self.b,
            self.hq,
            self.hk,
            self.bias.name(),
            if self.causal { " causal" } else { "" },
            if self.sink { " sink" } else { "" },
            if self.deterministic { " det" } else { "" },
            self.io
        )
    }

    /// The row as a case spec: BHSD packed (THD, or BSHD padded, with its lengths as the
    /// padding mask when it has them), f32 Stats, the bias with dBias and the sink with dSink
    /// when present.
    pub fn spec(&self) -> CaseSpec {
        let layout = match &self.tokens {
            Tokens::Full => Layout::Bhsd,
            Tokens::Packed(_) => Layout::Thd,
            Tokens::Padded(_) => Layout::Bshd,
        };
        CaseSpec {
            layout,
            padding: self.tokens.lens().map(|l| (l.to_vec(), l.to_vec())),
            max_total_seq_len: layout == Layout::Thd,
            dv: self.dv,
            io: self.io,
            band: if self.causal { CAUSAL } else { Band::default() },
            bias: match self.bias {
                BiasKind::None => None,
                BiasKind::Batch => Some(BiasSpec {
                    per_batch: true,
                    per_head: true,
                }),
                BiasKind::Broadcast => Some(BiasSpec {
                    per_batch: false,
                    per_head: true,
                }),
            },
            dbias: self.bias != BiasKind::None,
            deterministic: self.deterministic,
            sink: self.sink,
            ..CaseSpec::new(self.b, self.hq, self.hk, self.sq, self.skv, self.d)
        }
    }

    /// The backward graph (O and Stats are inputs).
    ///
    /// # Errors
    /// When the graph builder refuses the row.
    pub fn graph(&self) -> Result<CaseGraph, GraphError> {
        self.spec().backward_graph()
    }

    /// Backward FLOPs as the suites count them: 10 * B * Hq * Sq * Skv * Dqk, halved when causal;
    /// a THD or padded row counts its real tokens only, 10 * Hq * Dqk * sum over b of
    /// `lens[b]^2` (halved when causal).
    pub fn flops(&self) -> f64 {
        self.spec().backward_flops()
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
    graph: &rime_graph::Graph,
    target: &Target,
) -> (SupportReport, Vec<Candidate>) {
    let report = analyze(graph, target);
    let ranked = heuristics(&report, &HeuristicsOptions::default())
        .into_iter()
        .filter(|c| c.config.engine == EngineKind::Sm120)
        .collect();
    (report, ranked)
}

/// A row's buffers on the device, in a variant pack (inputs random, outputs poisoned), with
/// host copies of the inputs for a reference.
pub struct Workload {
    /// The graph.
    pub graph: CaseGraph,
    /// The variant pack (device buffers).
    pub pack: VariantPack,
    /// Host copies of the inputs.
    pub host_inputs: Vec<(TensorId, HostBuffer)>,
    /// The outputs: tensor, data type, elements.
    pub outputs: Vec<(TensorId, DataType, usize)>,
}

impl Workload {
    /// Uploads random inputs (from `seed`) and poisoned outputs for the backward of `case`.
    ///
    /// # Errors
    /// Sizes that do not fit, or driver errors.
    pub fn new(dev: &CudaDevice, case: &BackwardCase, seed: u64) -> Result<Self, HarnessError> {
        let spec = case.spec();
        let graph = spec.backward_graph()?;
        let sizing = |what: &str| HarnessError::Sizing {
            tensor: what.to_owned(),
        };
        let node = graph.backward.ok_or_else(|| sizing("the backward node"))?;
        let host_inputs = node_inputs(&spec, &graph, node, &Fills::random(seed))
            .ok_or_else(|| sizing("an input"))?;
        let mut pack = VariantPack::new();
        for (id, h) in &host_inputs {
            pack.insert(*id, Box::new(DeviceBuffer::upload(dev, h)?));
        }
        let mut outputs = Vec::new();
        let n = graph
            .graph
            .node(node)
            .ok_or_else(|| sizing("the backward node"))?;
        for &id in n.outputs.values() {
            let t = graph
                .graph
                .get(id)
                .ok_or_else(|| sizing(graph.name_of(id)))?;
            let len = graph.buffer_len(id).ok_or_else(|| sizing(&t.name))?;
            let dt = graph.graph.data_type(id).ok_or_else(|| sizing(&t.name))?;
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
    pub fn poison_outputs(&mut self, dev: &CudaDevice) -> Result<(), CudaError> {
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
    pub fn download(&self, dev: &CudaDevice) -> Result<Vec<HostBuffer>, HarnessError> {
        self.outputs
            .iter()
            .map(|&(id, _, _)| {
                let buf = self
                    .pack
                    .get(&id.into())
                    .and_then(|b| b.as_any().downcast_ref::<DeviceBuffer>())
                    .ok_or_else(|| HarnessError::Sizing {
                        tensor: self.graph.name_of(id).to_owned(),
                    })?;
                Ok(buf.download(dev)?)
            })
            .collect()
    }
}

/// A built plan and its device workspace.
pub struct Prepared {
    /// The plan.
    pub plan: Sm120EnginePlan,
    /// Its workspace.
    pub workspace: Workspace,
}

impl Prepared {
    /// Approves `candidate` from `report` (its main kernel swapped for `kernel` when given: an
    /// H200-tuned entry of the same envelope and Q tile, see
    /// [`ApprovedPlan::with_main_kernel`]), builds (compiles) the plan and allocates its
    /// workspace.
    ///
    /// # Errors
    /// Approval, a kernel that does not stand in for the candidate's, compile or driver errors.
    pub fn new(
        dev: &Arc<CudaDevice>,
        report: &SupportReport,
        candidate: &Candidate,
        kernel: Option<&'static KernelConfig>,
    ) -> Result<Self, HarnessError> {
        let mut approved: ApprovedPlan = report.approve(candidate)?;
        if let Some(k) = kernel {
            approved = approved.with_main_kernel(k).ok_or(HarnessError::Sizing {
                tensor: format!("a plan with main kernel {}", k.name),
            })?;
        }
        let plan = Sm120EnginePlan::new(Arc::clone(dev), &approved)?;
        let workspace = Workspace::Device(DeviceWorkspace::new(dev, plan.workspace_size())?);
        Ok(Self { plan, workspace })
    }

    /// Executes once and waits.
    ///
    /// # Errors
    /// Engine or driver errors.
    pub fn execute(&mut self, pack: &mut VariantPack) -> Result<(), HarnessError> {
        Ok(self.plan.execute(pack, &mut self.workspace)?)
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
    ) -> Result<Vec<f64>, HarnessError> {
        for _ in 0..warmup {
            self.plan.enqueue(pack, &mut self.workspace)?;
        }
        dev.synchronize()?;
        let timing = |error| {
            HarnessError::Cuda(CudaError::Driver {
                during: "event timing",
                error,
            })
        };
        let mut times = Vec::with_capacity(iters);
        for _ in 0..iters {
            let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
            let start = dev.stream().record_event(flags).map_err(timing)?;
            self.plan.enqueue(pack, &mut self.workspace)?;
            let end = dev.stream().record_event(flags).map_err(timing)?;
            times.push(f64::from(start.elapsed_ms(&end).map_err(timing)?));
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
            sink: false,
            tokens: Tokens::Full,
        }
    }

    fn routes(c: &BackwardCase) -> Vec<Option<Route>> {
        let target = Target::by_name("rtx-5090").expect("profile");
        let graph = c.graph().expect("graph");
        assert!(graph.graph.validate().is_ok(), "{}", c.name());
        sm120_candidates(&graph.graph, &target)
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
    fn deterministic_broadcast_dbias_runs_only_on_the_ordered_routes() {
        let det = routes(&case(BiasKind::Broadcast, true));
        assert_eq!(det.len(), 2, "{det:?}");
        assert!(det.contains(&Some(Route::TwoKernel)), "{det:?}");
        assert!(det.contains(&Some(Route::OrderedDbias)), "{det:?}");
        // Without determinism every route runs it, and two_kernel, which sums dBias from its dS
        // workspace, ranks before atomic's dBias atomics (1.05-1.82x faster on the H200).
        let any = routes(&case(BiasKind::Broadcast, false));
        assert_eq!(any.first(), Some(&Some(Route::TwoKernel)), "{any:?}");
        assert!(any.contains(&Some(Route::Atomic)), "{any:?}");
        assert!(any.contains(&Some(Route::OrderedDbias)), "{any:?}");
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
}
