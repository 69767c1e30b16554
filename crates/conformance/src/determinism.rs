//! `rime selftest --determinism`: for a table of backward shapes, every sm120 route the analyzer
//! approves for the deterministic graph runs N times on fresh poisoned outputs and must give
//! bitwise-identical dQ, dK, dV (and dBias, dSink) each time (FNV-1a of each output's bytes); the
//! atomic route (approved for the same graph without `deterministic`) must agree with them and
//! every route with the CPU engine, within the io type's tolerance. A ragged (THD) row is compared
//! at its real tokens, and every element between and past its sequences must keep the poison it
//! was given (it is part of the hash too). Each route is also timed
//! (CUDA events, median) so that deterministic time over atomic time is measured on the same
//! shapes. Deterministic + broadcast bias + dBias must stay rejected for sm120.

use std::sync::Arc;

use rime_analyzer::{Route, Target};
use rime_engines::cpu::Precision;
use rime_engines::cuda::CudaDevice;
use rime_engines::Buffer;
use rime_graph::DataType;

use crate::compare::{self, tolerance};
use crate::exec::{hash, on_cpu, Outputs};
use crate::spec::CaseGraph;
use crate::workload::{
    median, sm120_candidates, BackwardCase, BiasKind, Prepared, Tokens, Workload,
};
use crate::HarnessError;

/// The shape table (odd lengths, GQA/MQA, causal, per-batch and broadcast bias + dBias, sinks
/// with dSink, both io types); `small` keeps lengths low for compute-sanitizer runs. A broadcast
/// bias with B > 1 runs on two_kernel and ordered_dbias only (BIA003 refuses atomic and relay).
pub fn cases(small: bool) -> Vec<BackwardCase> {
    use BiasKind::{Batch, Broadcast, None};
    let c = |b, hq, hk, sq, skv, d, dv, causal, bias, io| BackwardCase {
        b,
        hq,
        hk,
        sq,
        skv,
        d,
        dv,
        causal,
        bias,
        io,
        deterministic: true,
        sink: false,
        tokens: Tokens::Full,
    };
    // dSink is summed in a fixed order on every route (dsink_reduce.cu).
    let sink = |case: BackwardCase| BackwardCase { sink: true, ..case };
    // These sequence lengths (B and S come from them), ragged (THD) or in a padded BSHD
    // layout under a padding mask.
    let varlen = |case: BackwardCase, lens: &[usize], tokens: fn(Vec<usize>) -> Tokens| {
        let longest = lens.iter().copied().max().unwrap_or(0);
        BackwardCase {
            b: lens.len(),
            sq: longest,
            skv: longest,
            tokens: tokens(lens.to_vec()),
            ..case
        }
    };
    let thd = |case, lens: &[usize]| varlen(case, lens, Tokens::Packed);
    let padded = |case, lens: &[usize]| varlen(case, lens, Tokens::Padded);
    let (bf, f) = (DataType::Bf16, DataType::F16);
    if small {
        return vec![
            c(2, 2, 2, 77, 130, 64, 64, false, Batch, bf),
            c(1, 4, 2, 70, 90, 128, 128, true, Batch, bf),
            c(2, 2, 1, 33, 65, 192, 128, false, None, f),
            c(1, 2, 2, 100, 61, 64, 64, true, Broadcast, f),
            c(2, 4, 2, 70, 90, 128, 128, true, Broadcast, bf),
            c(2, 2, 1, 70, 90, 256, 256, true, Batch, f),
            sink(c(2, 4, 2, 70, 90, 64, 64, true, None, bf)),
            sink(c(2, 2, 2, 77, 130, 128, 128, false, Broadcast, f)),
            thd(c(0, 4, 2, 0, 0, 64, 64, true, Batch, bf), &[70, 1, 130]),
            thd(
                c(0, 2, 2, 0, 0, 128, 128, false, Broadcast, f),
                &[77, 0, 33],
            ),
            // The d32 and d192 envelopes (2026-12-07).
            c(2, 2, 1, 70, 90, 32, 32, true, Batch, bf),
            c(2, 4, 2, 77, 130, 192, 192, false, Broadcast, f),
            // A padded layout under a padding mask, its padding NaN (2026-12-08).
            padded(c(0, 4, 2, 0, 0, 128, 128, true, None, bf), &[70, 1, 130]),
        ];
    }
    vec![
        c(2, 4, 4, 257, 257, 64, 64, false, Batch, bf),
        c(2, 8, 2, 300, 190, 128, 128, true, Batch, bf),
        c(1, 4, 4, 129, 1000, 64, 64, true, Batch, bf),
        c(2, 4, 1, 77, 130, 192, 128, false, Batch, bf),
        c(3, 6, 3, 513, 513, 128, 128, true, None, bf),
        c(2, 4, 4, 1000, 1000, 64, 64, false, Batch, bf),
        c(2, 4, 2, 333, 444, 128, 128, true, Batch, f),
        c(2, 8, 8, 1024, 1024, 128, 128, false, None, f),
        // MQA, causal, odd lengths; a (1, H) bias with B = 1 is a per-batch bias.
        c(2, 8, 1, 191, 383, 64, 64, true, Batch, bf),
        c(1, 4, 4, 200, 300, 64, 64, true, Broadcast, bf),
        // Broadcast over the batch (B > 1): dBias summed in order (two_kernel, ordered_dbias).
        c(2, 4, 4, 257, 300, 64, 64, true, Broadcast, bf),
        c(3, 8, 2, 300, 190, 128, 128, false, Broadcast, f),
        c(2, 4, 1, 77, 130, 192, 128, true, Broadcast, bf),
        // d256 (32 x 64 tiles, V staged through the Q and dO buffers).
        c(2, 4, 2, 300, 190, 256, 256, true, Batch, bf),
        c(2, 4, 4, 257, 300, 256, 256, false, Broadcast, f),
        // Sinks with dSink: plain, per-batch bias, broadcast bias (the ordered routes), long.
        sink(c(2, 4, 4, 257, 257, 64, 64, false, None, bf)),
        sink(c(2, 8, 2, 300, 190, 128, 128, true, Batch, f)),
        sink(c(3, 8, 2, 300, 190, 128, 128, false, Broadcast, bf)),
        sink(c(2, 4, 1, 1000, 1000, 192, 128, true, None, bf)),
        // THD: per-sequence causal alignment, a one-token and an empty sequence, GQA, both
        // biases (a broadcast one at (128, 128): past it only two_kernel sums it, SMX014, and
        // the table needs an atomic route to compare with),
        // a sink, d256.
        thd(
            c(0, 8, 8, 0, 0, 64, 64, false, None, bf),
            &[512, 1531, 777, 1],
        ),
        thd(
            c(0, 8, 2, 0, 0, 128, 128, true, Batch, f),
            &[300, 0, 190, 257],
        ),
        thd(
            c(0, 4, 4, 0, 0, 128, 128, true, Broadcast, bf),
            &[257, 300, 129],
        ),
        thd(
            c(0, 4, 1, 0, 0, 192, 128, false, Batch, bf),
            &[77, 130, 333],
        ),
        sink(thd(
            c(0, 8, 2, 0, 0, 128, 128, true, None, bf),
            &[1000, 333],
        )),
        thd(c(0, 4, 2, 0, 0, 256, 256, true, None, f), &[190, 300, 64]),
        // The d32 and d192 envelopes (2026-12-07).
        c(2, 8, 2, 300, 190, 32, 32, true, Batch, f),
        c(2, 4, 4, 257, 300, 192, 192, true, Broadcast, bf),
        sink(c(2, 4, 2, 513, 513, 192, 192, false, None, bf)),
        // A padded layout under a padding mask (its padding NaN: the rows past the lengths are
        // never read, 2026-12-08), without a bias and with a per-batch one.
        padded(
            c(0, 8, 2, 0, 0, 128, 128, false, None, bf),
            &[300, 0, 190, 257],
        ),
        padded(c(0, 4, 4, 0, 0, 192, 128, true, Batch, f), &[77, 130, 333]),
    ]
}

/// One route of one case.
#[derive(Debug, Clone)]
pub struct RouteResult {
    /// `sm120/<route>`.
    pub label: String,
    /// Main kernel (and dQ GEMM) configuration.
    pub kernel: String,
    /// True for the analyzer's first choice on the deterministic graph.
    pub chosen: bool,
    /// Whether the route is deterministic.
    pub deterministic: bool,
    /// Distinct output-hash tuples over the repeats (1 = bitwise identical every time).
    pub distinct: usize,
    /// Hash of (dQ, dK, dV[, dBias]) of the first run, combined.
    pub hash: u64,
    /// Largest relative error over the outputs against the atomic route.
    pub vs_atomic: f64,
    /// Largest relative error over the outputs against the CPU engine.
    pub vs_cpu: f64,
    /// Non-finite output elements, plus the elements of ragged outputs written outside their
    /// real tokens.
    pub bad: usize,
    /// The first element written outside a ragged output's real tokens, described.
    pub outside: Option<String>,
    /// Median backward time (ms).
    pub median_ms: f64,
    /// An error instead of results.
    pub error: Option<String>,
}

/// One case: its routes, or why it could not run.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// Case name.
    pub name: String,
    /// Tolerance of the io type.
    pub tolerance: f64,
    /// Per route; the atomic route first.
    pub routes: Vec<RouteResult>,
    /// A case-level error.
    pub error: Option<String>,
}

impl CaseResult {
    /// Every deterministic route bitwise stable, every route within tolerance and finite.
    pub fn passed(&self) -> bool {
        self.error.is_none()
            && self.routes.iter().any(|r| r.deterministic)
            && self.routes.iter().all(|r| {
                r.error.is_none()
                    && r.bad == 0
                    && (!r.deterministic || r.distinct == 1)
                    && r.vs_atomic <= self.tolerance
                    && r.vs_cpu <= self.tolerance
            })
    }

    /// Deterministic time of the analyzer's choice over the atomic route's time.
    pub fn det_over_atomic(&self) -> Option<f64> {
        let atomic = self.routes.iter().find(|r| !r.deterministic)?.median_ms;
        let chosen = self.routes.iter().find(|r| r.chosen)?.median_ms;
        (atomic > 0.0).then(|| chosen / atomic)
    }
}

/// The CPU engine's outputs on the workload's inputs.
fn cpu_outputs(w: &Workload) -> Result<Outputs, HarnessError> {
    let node = w.graph.backward.ok_or(HarnessError::Sizing {
        tensor: "the backward node".to_owned(),
    })?;
    on_cpu(&w.graph, node, &w.host_inputs, Precision::F32)
}

/// How far a run's outputs are from a reference run of the same graph `g`.
#[derive(Debug, Clone, Default, PartialEq)]
struct Distance {
    /// Largest relative error over the outputs (a ragged one's at its real tokens).
    rel_err: f64,
    /// Non-finite elements, elements of a ragged output outside its tokens that the run
    /// changed, and every element of an output the reference lacks.
    bad: usize,
    /// The first element written outside a ragged output's tokens, described.
    outside: Option<String>,
}

fn distance(g: &CaseGraph, outs: &Outputs, reference: &Outputs) -> Distance {
    let (checks, written) = compare::outputs(g, outs, reference);
    let unmatched: usize = outs
        .iter()
        .filter(|(id, _)| !reference.iter().any(|(t, _)| t == id))
        .map(|(_, h)| h.len().max(1))
        .sum();
    Distance {
        rel_err: checks.iter().map(|c| c.rel_err).fold(0.0, f64::max),
        bad: checks.iter().map(|c| c.bad).sum::<usize>() + unmatched,
        outside: written.into_iter().next(),
    }
}

struct Runs {
    outputs: Outputs,
    hashes: Vec<u64>,
    distinct: usize,
    median_ms: f64,
}

fn run_route(
    dev: &Arc<CudaDevice>,
    w: &mut Workload,
    report: &rime_analyzer::SupportReport,
    cand: &rime_analyzer::Candidate,
    repeats: usize,
    timing: (usize, usize),
) -> Result<Runs, HarnessError> {
    let mut prepared = Prepared::new(dev, report, cand, None)?;
    let mut seen: Vec<Vec<u64>> = Vec::new();
    let mut first = None;
    // At least two runs, so that "bitwise identical" compares something.
    for _ in 0..repeats.max(2) {
        w.poison_outputs(dev)?;
        prepared.execute(&mut w.pack)?;
        let outs = w.download(dev)?;
        let hashes: Vec<u64> = outs.iter().map(hash).collect();
        if !seen.contains(&hashes) {
            seen.push(hashes.clone());
        }
        first.get_or_insert((outs, hashes));
    }
    let (outs, hashes) = first.unwrap_or_default();
    let times = prepared.time(dev, &mut w.pack, timing.0, timing.1)?;
    let ids = w.outputs.iter().map(|&(id, _, _)| id);
    Ok(Runs {
        outputs: ids.zip(outs).collect(),
        hashes,
        distinct: seen.len(),
        median_ms: median(&times),
    })
}

fn combined(hashes: &[u64]) -> u64 {
    hashes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| {
        (h ^ x).wrapping_mul(0x100_0000_01b3)
    })
}

fn run_case(
    dev: &Arc<CudaDevice>,
    target: &Target,
    case: &BackwardCase,
    repeats: usize,
    timing: (usize, usize),
) -> CaseResult {
    let tolerance = tolerance(case.io);
    let mut result = CaseResult {
        name: case.name(),
        tolerance,
        routes: Vec::new(),
        error: None,
    };
    let atomic_case = BackwardCase {
        deterministic: false,
        ..case.clone()
    };
    let graphs = case
        .graph()
        .and_then(|d| atomic_case.graph().map(|a| (d, a)));
    let (det_graph, atomic_graph) = match graphs {
        Ok(g) => g,
        Err(e) => {
            result.error = Some(e.to_string());
            return result;
        }
    };
    // Both graphs are built in the same order, so their tensor ids coincide: one workload.
    let mut w = match Workload::new(dev, case, 17) {
        Ok(w) => w,
        Err(e) => {
            result.error = Some(e.to_string());
            return result;
        }
    };
    let cpu = match cpu_outputs(&w) {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(format!("CPU engine: {e}"));
            return result;
        }
    };
    let (atomic_report, atomic_ranked) = sm120_candidates(&atomic_graph.graph, target);
    let (det_report, det_ranked) = sm120_candidates(&det_graph.graph, target);
    let mut jobs: Vec<(
        &rime_analyzer::SupportReport,
        &rime_analyzer::Candidate,
        bool,
    )> = atomic_ranked
        .iter()
        .filter(|c| c.config.route == Some(Route::Atomic))
        .take(1)
        .map(|c| (&atomic_report, c, false))
        .collect();
    jobs.extend(
        det_ranked
            .iter()
            .enumerate()
            .map(|(i, c)| (&det_report, c, i == 0)),
    );
    let mut atomic_out: Option<Outputs> = None;
    for (report, cand, chosen) in jobs {
        let kernel = [cand.config.kernel, cand.config.dq_kernel]
            .iter()
            .flatten()
            .map(|k| k.name)
            .collect::<Vec<_>>()
            .join("+");
        let deterministic = cand.config.route != Some(Route::Atomic);
        let mut r = RouteResult {
            label: cand.config.label(),
            kernel,
            chosen,
            deterministic,
            distinct: 0,
            hash: 0,
            vs_atomic: f64::NAN,
            vs_cpu: f64::NAN,
            bad: 0,
            outside: None,
            median_ms: 0.0,
            error: None,
        };
        match run_route(dev, &mut w, report, cand, repeats, timing) {
            Ok(runs) => {
                let vs_cpu = distance(&w.graph, &runs.outputs, &cpu);
                r.vs_cpu = vs_cpu.rel_err;
                r.bad = vs_cpu.bad;
                r.outside = vs_cpu.outside;
                r.distinct = runs.distinct;
                r.hash = combined(&runs.hashes);
                r.median_ms = runs.median_ms;
                match &atomic_out {
                    Some(a) => r.vs_atomic = distance(&w.graph, &runs.outputs, a).rel_err,
                    None if !deterministic => {
                        r.vs_atomic = 0.0;
                        atomic_out = Some(runs.outputs);
                    }
                    None => {}
                }
            }
            Err(e) => r.error = Some(e.to_string()),
        }
        result.routes.push(r);
    }
    if atomic_out.is_none() {
        result.error = Some("no atomic route result to compare with".into());
    }
    result
}

/// Runs the table (the cases whose name contains `filter`, when given) on `dev` for `target`,
/// `repeats` executions per route (at least two), calling `each` with each case's result.
pub fn run(
    dev: &Arc<CudaDevice>,
    target: &Target,
    small: bool,
    filter: Option<&str>,
    repeats: usize,
    mut each: impl FnMut(&CaseResult),
) -> Vec<CaseResult> {
    cases(small)
        .iter()
        .filter(|c| filter.is_none_or(|f| c.name().contains(f)))
        .map(|c| {
            // Small runs are for compute-sanitizer: few timed runs.
            let timing = if small { (1, 2) } else { (3, 20) };
            let r = run_case(dev, target, c, repeats, timing);
            each(&r);
            r
        })
        .collect()
}

/// The analyzer's verdict on deterministic + broadcast bias + dBias for sm120: `Ok(codes)`, the
/// other routes' reason codes, when only routes that sum dBias in a fixed order are approved
/// (two_kernel, ordered_dbias; ordered_dbias always) and the atomic ones are refused with
/// BIA003, as they must be; `Err(routes)`, the approved routes, otherwise.
pub fn broadcast_dbias_ordered_routes(target: &Target) -> Result<Vec<String>, Vec<String>> {
    let case = BackwardCase {
        b: 2,
        hq: 4,
        hk: 4,
        sq: 128,
        skv: 128,
        d: 64,
        dv: 64,
        causal: false,
        bias: BiasKind::Broadcast,
        io: DataType::Bf16,
        deterministic: true,
        sink: false,
        tokens: Tokens::Full,
    };
    let Ok(graph) = case.graph() else {
        return Err(vec!["graph build failed".into()]);
    };
    let (report, ranked) = sm120_candidates(&graph.graph, target);
    let approved: Vec<Option<Route>> = ranked.iter().map(|c| c.config.route).collect();
    let mut codes: Vec<String> = report
        .all_rejections()
        .map(|r| r.code.to_string())
        .collect();
    codes.sort();
    codes.dedup();
    let ordered = |r: &Option<Route>| matches!(r, Some(Route::TwoKernel | Route::OrderedDbias));
    if approved.iter().all(ordered)
        && approved.contains(&Some(Route::OrderedDbias))
        && codes.iter().any(|c| c == "BIA003")
    {
        Ok(codes)
    } else {
        Err(ranked.iter().map(|c| c.config.label()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fill::{node_inputs, Fills};
    use rime_engines::HostBuffer;

    /// Every row can be judged: the graph without `deterministic` gets the atomic route (the
    /// table's reference) and the deterministic graph at least one other route, on each SM120
    /// profile.
    #[test]
    fn every_row_has_an_atomic_and_a_deterministic_route() {
        for name in ["rtx-5090", "rtx-pro-6000"] {
            let target = Target::by_name(name).expect("profile");
            for case in cases(false).into_iter().chain(cases(true)) {
                let atomic = BackwardCase {
                    deterministic: false,
                    ..case.clone()
                };
                let graph = atomic.graph().expect("graph");
                let (_, ranked) = sm120_candidates(&graph.graph, &target);
                let routes: Vec<_> = ranked.iter().map(|c| c.config.route).collect();
                assert!(
                    routes.contains(&Some(Route::Atomic)),
                    "{name} {}: {routes:?}",
                    case.name()
                );
                let graph = case.graph().expect("graph");
                let (_, ranked) = sm120_candidates(&graph.graph, &target);
                let routes: Vec<_> = ranked.iter().map(|c| c.config.route).collect();
                assert!(
                    routes.iter().any(|r| r.is_some_and(|r| r != Route::Atomic)),
                    "{name} {}: {routes:?}",
                    case.name()
                );
            }
        }
    }

    /// A THD row is judged at its real tokens: two runs that agree there are at distance 0
    /// whatever the poison between sequences, a changed token shows as an error, and a write
    /// between two sequences is counted as bad and described.
    #[test]
    fn a_ragged_row_is_compared_at_its_tokens_and_its_gaps_are_checked() {
        let case = cases(true)
            .into_iter()
            .find(|c| matches!(c.tokens, Tokens::Packed(_)))
            .expect("a THD row");
        let g = case.graph().expect("graph");
        let bwd = g.backward.expect("backward node");
        let inputs = node_inputs(&case.spec(), &g, bwd, &Fills::random(7)).expect("inputs");
        let a = on_cpu(&g, bwd, &inputs, Precision::F32).expect("a run");
        let b = on_cpu(&g, bwd, &inputs, Precision::F32).expect("a second run");
        assert_eq!(distance(&g, &a, &b), Distance::default());

        let dq = g.id("dQ").expect("dQ");
        let r = g.ragged_of(dq).expect("ragged dQ").clone();
        // `a` with dQ's element `at` set to 0.5.
        let with = |at: usize| -> Outputs {
            let mut out = a.clone();
            let (_, h) = out.iter_mut().find(|(id, _)| *id == dq).expect("dQ out");
            let mut v = h.to_f64();
            v[at] = 0.5;
            *h = HostBuffer::from_f64(h.data_type(), &v).expect("buffer");
            out
        };
        let gap = r.starts[2] - 1;
        assert!(!r.real_mask()[gap], "element {gap} is a gap");
        let d = distance(&g, &with(gap), &b);
        assert_eq!((d.rel_err, d.bad), (0.0, 1));
        assert!(d.outside.is_some_and(|o| o.contains("dQ")));
        let token = r.real_elements().next().expect("a token");
        let d = distance(&g, &with(token), &b);
        assert!(d.rel_err > 0.0 && d.bad == 0, "{d:?}");
    }

    /// The padded rows' inputs hold NaN past the lengths (what an uninitialised buffer may
    /// hold), and the CPU engine, which the table compares every route with, never reads it:
    /// its gradients are finite, and zero in the rows past each batch's length.
    #[test]
    fn padded_rows_have_nan_padding_and_finite_cpu_gradients() {
        let rows: Vec<_> = cases(true)
            .into_iter()
            .chain(cases(false))
            .filter(|c| matches!(c.tokens, Tokens::Padded(_)))
            .collect();
        assert_eq!(rows.len(), 3);
        for case in rows.iter().filter(|c| c.flops() < 1e9) {
            let g = case.graph().expect("graph");
            let bwd = g.backward.expect("backward node");
            let inputs = node_inputs(&case.spec(), &g, bwd, &Fills::random(7)).expect("inputs");
            let q = g.id("Q").expect("Q");
            let (_, q_in) = inputs.iter().find(|(id, _)| *id == q).expect("Q in");
            assert!(q_in.to_f64().iter().any(|x| x.is_nan()), "{}", case.name());
            let out = on_cpu(&g, bwd, &inputs, Precision::F32).expect("a run");
            let lens = case.tokens.lens().expect("lengths");
            for (id, h) in &out {
                let v = h.to_f64();
                assert!(
                    v.iter().all(|x| x.is_finite()),
                    "{} {}",
                    case.name(),
                    g.name_of(*id)
                );
            }
            // dQ is (B, S, H, D) packed: the rows of batch b past lens[b] are zero.
            let dq = g.id("dQ").expect("dQ");
            let (_, h) = out.iter().find(|(id, _)| *id == dq).expect("dQ out");
            let row = case.hq * case.d;
            for (b, chunk) in h.to_f64().chunks(case.sq * row).enumerate() {
                let past = &chunk[lens[b] * row..];
                assert!(past.iter().all(|&x| x == 0.0), "{} batch {b}", case.name());
                assert!(lens[b] == 0 || chunk[..lens[b] * row].iter().any(|&x| x != 0.0));
            }
        }
    }

    /// Deterministic dSink: no route refuses it any more (SMX007 is retired); broadcast bias
    /// cases keep only the ordered routes (BIA003).
    #[test]
    fn deterministic_dsink_is_approved_on_the_deterministic_routes() {
        let target = Target::by_name("rtx-5090").expect("profile");
        for case in cases(false).into_iter().filter(|c| c.sink) {
            let graph = case.graph().expect("graph");
            let (_, ranked) = sm120_candidates(&graph.graph, &target);
            let routes: Vec<_> = ranked.iter().filter_map(|c| c.config.route).collect();
            let want = if case.bias == BiasKind::Broadcast && case.b > 1 {
                Route::OrderedDbias
            } else {
                Route::Relay
            };
            assert!(routes.contains(&want), "{}: {routes:?}", case.name());
            assert!(!routes.contains(&Route::Atomic), "{}", case.name());
        }
    }

    #[test]
    fn deterministic_broadcast_dbias_is_approved_only_on_the_ordered_routes() {
        for name in ["rtx-5090", "rtx-pro-6000", "h200"] {
            let target = Target::by_name(name).expect("profile");
            let codes = broadcast_dbias_ordered_routes(&target).expect(name);
            assert!(codes.iter().any(|c| c == "BIA003"), "{name}: {codes:?}");
        }
    }
}
