//! Host memory the CPU engine allocates for itself while it executes one node, beyond the
//! caller's buffers: an upper bound known from the problem's sizes before anything runs, so
//! that a caller can refuse a problem that would not fit (`rime run` does).
//!
//! What the engine holds (f32 in the engine; `H` heads in flight, see [`heads_in_flight`]):
//!
//! - per head in flight: its K and V rows packed (Skv x (Dqk + Dv)), one (BLOCK_Q x BLOCK_KV)
//!   tile of scores and one of dP/dS, and a few BLOCK_Q-row operand blocks;
//! - forward, per head in flight: its O (Sq x Dv) and Stats (Sq);
//! - backward, per head in flight: its dQ (Sq x Dqk), its share of dK and dV
//!   (Skv x (Dqk + Dv)) and, with dBias, its dS (Sq x Skv);
//! - backward, once: the dK, dV (and dBias, dSink) sums, sized like those outputs (a head's
//!   share becomes the sum of a kv head it is first to reach, so this and the shares overlap;
//!   the bound counts both).
//!
//! - per thread: the `gemm` crate's packing memory ([`GEMM_PER_THREAD`]).
//!
//! So the scratch grows with Skv x D (as the inputs do), never with Sq x Skv unless dBias,
//! which is that size itself, is asked for.

use rime_graph::OpKind;

use super::problem::Problem;
use super::{heads_in_flight, BLOCK_KV, BLOCK_Q};
use crate::MemoryNeeds;

/// What the `gemm` crate allocates per thread, at most: a slab the size of the L2 cache, kept
/// for the thread's life (1 MiB on this machine, 2 MiB on the largest current cores), plus the
/// packed operands of one tile product (at most 512 x 256 f32, 512 KiB). Counted as 4 MiB.
pub const GEMM_PER_THREAD: u64 = 4 << 20;

/// `x` as u64 (saturating: the estimate of an impossible size is an impossible size).
fn n(x: usize) -> u64 {
    u64::try_from(x).unwrap_or(u64::MAX)
}

/// Products and sums that saturate instead of wrapping.
fn mul(factors: &[u64]) -> u64 {
    factors.iter().fold(1u64, |p, &f| p.saturating_mul(f))
}

/// The scratch of one execution of `op` on `problem` with arithmetic elements of `real` bytes
/// (4: the engine's f32; 8: the f64 reference plan); `dbias` is the (batch, head) dims of the
/// dBias output when the backward writes one; `dropout` is true with a dropout mask. An upper
/// bound (tile vectors may grow to twice their size once).
pub fn scratch(
    problem: &Problem,
    op: OpKind,
    dbias: Option<[usize; 2]>,
    dropout: bool,
    real: u64,
) -> MemoryNeeds {
    let s = problem.shape;
    let tasks = n(s.b).saturating_mul(n(s.hq));
    let flight = n(heads_in_flight()).min(tasks);
    let (sq, skv, dqk, dv) = (n(s.sq), n(s.skv), n(s.dqk), n(s.dv));
    let (bq, bkv) = (n(BLOCK_Q).min(sq), n(BLOCK_KV).min(skv));
    let mut needs = MemoryNeeds::new();
    let per_head = |items: &[u64]| {
        let elements = items.iter().fold(0u64, |a, &x| a.saturating_add(x));
        mul(&[flight, elements, real])
    };
    let kv = skv.saturating_mul(dqk.saturating_add(dv));
    needs.add(
        format!("CPU engine: K and V packed for {flight} heads in flight"),
        per_head(&[kv]),
    );
    // Two tiles (three with dropout: the dropped P), a bias or mask row, operand blocks and row
    // statistics, each possibly doubled once.
    let tile_count = if dropout { 3 } else { 2 };
    let tiles = 2u64.saturating_mul(
        [
            mul(&[tile_count, bq, bkv]),
            bkv,
            mul(&[bq, dqk.saturating_add(2u64.saturating_mul(dv))]),
            mul(&[4, bq]),
        ]
        .iter()
        .fold(0u64, |a, &x| a.saturating_add(x)),
    );
    needs.add(
        format!("CPU engine: score tiles of {flight} heads in flight"),
        per_head(&[tiles]),
    );
    needs.add(
        "CPU engine: task list",
        mul(&[tasks, n(std::mem::size_of::<usize>())]),
    );
    let threads = n(rayon::current_num_threads());
    needs.add(
        format!("CPU engine: gemm packing of {threads} threads"),
        threads.saturating_mul(GEMM_PER_THREAD),
    );
    match op {
        OpKind::SdpaForward => {
            needs.add(
                format!("CPU engine: O and Stats of {flight} heads in flight"),
                per_head(&[mul(&[sq, dv.saturating_add(1)])]),
            );
        }
        OpKind::SdpaBackward => {
            let dbias_head = if dbias.is_some() { mul(&[sq, skv]) } else { 0 };
            needs.add(
                format!("CPU engine: dQ, dK, dV shares of {flight} heads in flight"),
                per_head(&[mul(&[sq, dqk]), kv, dbias_head]),
            );
            let dk = mul(&[n(s.b), n(s.hk), skv, dqk]);
            let dv_sum = mul(&[n(s.b), n(s.hv), skv, dv]);
            // One more (Sq x Skv) while a dBias broadcast along a sequence is summed down.
            let dbias_sum = dbias.map_or(0, |[bb, bh]| {
                mul(&[n(bb).saturating_mul(n(bh)).saturating_add(1), sq, skv])
            });
            needs.add(
                "CPU engine: dK, dV, dBias and dSink sums",
                mul(&[
                    [dk, dv_sum, dbias_sum, n(s.hq)]
                        .iter()
                        .fold(0u64, |a, &x| a.saturating_add(x)),
                    real,
                ]),
            );
        }
    }
    needs
}
