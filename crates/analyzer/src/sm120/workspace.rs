//! Exact SM120 backward workspace per route (docs/sdpa-backward.md, section 4).
//!
//! In order, each region 256-byte aligned: `delta` f32 B*Hq*Sq; `dq_accum` f32 B*Hq*Sq*Dqk
//! (atomic, relay); `relay_counters` u32 B*Hq*ceil(Sq/block_q) + B*Hk (relay: the turn counters,
//! then a block ticket per KV head); `ds` io
//! B*Hq*Sq*round_up(Skv,128) (two_kernel, which also sums a broadcast bias's dBias from it);
//! `dbias_accum` f32 with dBias's element count when the bias broadcasts over batch or heads
//! (atomic, relay), or instead
//! `dbias_partials` f32 B*Hq*Sq*Skv (ordered_dbias: one dBias-sized slice per broadcast (batch,
//! head)); `dsink_rows` f32 B*Hq*Sq when dSink is requested (each row's term, summed per head
//! in a fixed order); `ragged_offsets` i64 (B+1) per ragged token tensor (THD), also in a
//! forward's workspace (its only region). ordered_dbias has relay's dQ regions.

use rime_graph::{Port, SdpaShape};

use super::kernels::{KernelConfig, IO_BYTES};
use crate::workspace::{round_up, RegionKind, WorkspaceLayout, WorkspaceOverflow};
use crate::Route;

/// Columns the two_kernel route's dS rows are padded to (Skv rounded up to a multiple): the dQ
/// GEMM's KV chunks divide it.
pub const DS_PITCH_COLUMNS: u64 = 128;

/// What besides the shape decides the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkspaceNeeds {
    /// Elements of the dBias tensor when it needs an f32 accumulator (broadcast bias).
    pub dbias_accum_elements: Option<u64>,
    /// dSink requested.
    pub dsink: bool,
    /// Ragged (THD) token tensors (Q, K, V, O, dO, Stats, dQ, dK, dV with a ragged offset).
    pub ragged_tensors: u64,
}

fn count(v: i64, kind: RegionKind) -> Result<u64, WorkspaceOverflow> {
    u64::try_from(v).map_err(|_| WorkspaceOverflow { kind })
}

fn product(dims: &[i64], kind: RegionKind) -> Result<u64, WorkspaceOverflow> {
    dims.iter().try_fold(1u64, |acc, &d| {
        acc.checked_mul(count(d, kind)?)
            .ok_or(WorkspaceOverflow { kind })
    })
}

/// The exact backward workspace of `route` with main kernel `main`.
///
/// # Errors
/// [`WorkspaceOverflow`] when a size does not fit in 64 bits.
pub fn backward_workspace(
    shape: &SdpaShape,
    route: Route,
    main: &KernelConfig,
    needs: WorkspaceNeeds,
) -> Result<WorkspaceLayout, WorkspaceOverflow> {
    use RegionKind as K;
    let s = shape;
    let mut w = WorkspaceLayout::empty();
    w.push(K::Delta, 4, product(&[s.b, s.hq, s.sq], K::Delta)?)?;
    match route {
        Route::Atomic | Route::Relay | Route::OrderedDbias => {
            w.push(
                K::DqAccum,
                4,
                product(&[s.b, s.hq, s.sq, s.dqk], K::DqAccum)?,
            )?;
        }
        Route::TwoKernel => {
            let skv = round_up(count(s.skv, K::DScores)?, DS_PITCH_COLUMNS)
                .ok_or(WorkspaceOverflow { kind: K::DScores })?;
            let rows = product(&[s.b, s.hq, s.sq], K::DScores)?;
            let elements = rows
                .checked_mul(skv)
                .ok_or(WorkspaceOverflow { kind: K::DScores })?;
            w.push(K::DScores, u64::from(IO_BYTES), elements)?;
        }
    }
    if route.relays_dq() {
        let tiles = count(s.sq, K::RelayCounters)?.div_ceil(u64::from(main.block_q.max(1)));
        let heads = product(&[s.b, s.hq], K::RelayCounters)?;
        // One turn counter per (b, hq, Q tile), then one block ticket per (b, KV head) (the
        // main kernel's blocks of a KV head take their KV tiles from it, so that a block only
        // waits for blocks already running).
        let tickets = product(&[s.b, s.hk], K::RelayCounters)?;
        let elements = heads
            .checked_mul(tiles)
            .and_then(|n| n.checked_add(tickets))
            .ok_or(WorkspaceOverflow {
                kind: K::RelayCounters,
            })?;
        w.push(K::RelayCounters, 4, elements)?;
    }
    match needs.dbias_accum_elements {
        // two_kernel sums a broadcast bias's dBias from its dS region (dbias_reduce.cu).
        Some(_) if route == Route::TwoKernel => {}
        Some(_) if route == Route::OrderedDbias => {
            let elements = product(&[s.b, s.hq, s.sq, s.skv], K::DbiasPartials)?;
            w.push(K::DbiasPartials, 4, elements)?;
        }
        Some(elements) => w.push(K::DbiasAccum, 4, elements)?,
        None => {}
    }
    if needs.dsink {
        w.push(K::DsinkRows, 4, product(&[s.b, s.hq, s.sq], K::DsinkRows)?)?;
    }
    push_ragged(&mut w, shape, needs)?;
    Ok(w)
}

/// The exact forward workspace: the ragged tensors' offsets, when there are any.
///
/// # Errors
/// [`WorkspaceOverflow`] when a size does not fit in 64 bits.
pub fn forward_workspace(
    shape: &SdpaShape,
    needs: WorkspaceNeeds,
) -> Result<WorkspaceLayout, WorkspaceOverflow> {
    let mut w = WorkspaceLayout::empty();
    push_ragged(&mut w, shape, needs)?;
    Ok(w)
}

/// B + 1 i64 offsets per ragged tensor (`RegionKind::RaggedOffsets`), in the order the engine
/// lays them out.
fn push_ragged(
    w: &mut WorkspaceLayout,
    s: &SdpaShape,
    needs: WorkspaceNeeds,
) -> Result<(), WorkspaceOverflow> {
    use RegionKind as K;
    if needs.ragged_tensors == 0 {
        return Ok(());
    }
    let per_tensor = count(s.b, K::RaggedOffsets)?
        .checked_add(1)
        .ok_or(WorkspaceOverflow {
            kind: K::RaggedOffsets,
        })?;
    let elements = per_tensor
        .checked_mul(needs.ragged_tensors)
        .ok_or(WorkspaceOverflow {
            kind: K::RaggedOffsets,
        })?;
    w.push(K::RaggedOffsets, 8, elements)
}

/// The workspace needs of a node (broadcast dBias accumulator, dSink row terms).
pub(super) fn needs(ctx: &crate::rules::NodeCtx<'_>) -> WorkspaceNeeds {
    let reduces = ctx.bias_broadcast().is_some_and(|b| b.reduces());
    let dbias = ctx
        .tensor(Port::DBias)
        .filter(|_| reduces)
        .and_then(|t| t.element_count());
    let ragged = ctx
        .ragged_ports()
        .filter(|p| p.token_sequence().is_some())
        .count();
    WorkspaceNeeds {
        dbias_accum_elements: dbias,
        dsink: ctx.has(Port::DSink),
        ragged_tensors: u64::try_from(ragged).unwrap_or(u64::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sm120::kernels::{select, KernelRole};

    #[test]
    fn route_workspaces_follow_the_formulas() {
        let s = SdpaShape {
            b: 2,
            hq: 8,
            hk: 8,
            hv: 8,
            sq: 1000,
            skv: 1000,
            dqk: 128,
            dv: 128,
        };
        let main = select(KernelRole::BackwardMain, 128, 128).unwrap();
        let none = WorkspaceNeeds {
            dbias_accum_elements: None,
            dsink: false,
            ragged_tensors: 0,
        };
        let atomic = backward_workspace(&s, Route::Atomic, main, none).unwrap();
        let delta = 2 * 8 * 1000 * 4;
        let delta_aligned = round_up(delta, 256).unwrap();
        assert_eq!(atomic.regions()[1].offset, delta_aligned);
        assert_eq!(
            atomic.region(RegionKind::DqAccum).unwrap().bytes,
            2 * 8 * 1000 * 128 * 4
        );
        let relay = backward_workspace(&s, Route::Relay, main, none).unwrap();
        // ceil(1000 / 32) = 32 Q tiles (of the d128 main kernel) per (b, h), and a ticket per
        // (b, KV head).
        assert_eq!(
            relay.region(RegionKind::RelayCounters).unwrap().elements,
            2 * 8 + 2 * 8 * 32
        );
        let two = backward_workspace(&s, Route::TwoKernel, main, none).unwrap();
        assert_eq!(
            two.region(RegionKind::DScores).unwrap().bytes,
            2 * 8 * 1000 * 1024 * 2
        );
        assert!(two.region(RegionKind::DqAccum).is_none());
        let with = WorkspaceNeeds {
            dbias_accum_elements: Some(8 * 1000 * 1000),
            dsink: true,
            ragged_tensors: 0,
        };
        let full = backward_workspace(&s, Route::Relay, main, with).unwrap();
        assert_eq!(
            full.region(RegionKind::DbiasAccum).unwrap().bytes,
            32_000_000
        );
        assert_eq!(
            full.region(RegionKind::DsinkRows).unwrap().bytes,
            2 * 8 * 1000 * 4
        );
        for r in full.regions() {
            assert_eq!(r.offset % 256, 0);
        }
        // ordered_dbias: relay's regions, and one f32 dBias slice per (b, h) instead of the
        // accumulator.
        let ordered = backward_workspace(&s, Route::OrderedDbias, main, with).unwrap();
        assert!(ordered.region(RegionKind::DbiasAccum).is_none());
        assert_eq!(
            ordered.region(RegionKind::DbiasPartials).unwrap().bytes,
            2 * 8 * 1000 * 1000 * 4
        );
        assert_eq!(
            ordered.region(RegionKind::RelayCounters),
            full.region(RegionKind::RelayCounters)
        );
        assert!(ordered.region(RegionKind::DqAccum).is_some());
        let huge = SdpaShape { b: i64::MAX, ..s };
        assert!(backward_workspace(&huge, Route::Atomic, main, none).is_err());
        // Ragged tensors: B + 1 i64 offsets each, last, in the forward's workspace too.
        let thd = WorkspaceNeeds {
            ragged_tensors: 9,
            ..none
        };
        let w = backward_workspace(&s, Route::Atomic, main, thd).unwrap();
        let offsets = w.region(RegionKind::RaggedOffsets).unwrap();
        assert_eq!((offsets.bytes, offsets.offset % 256), (9 * 3 * 8, 0));
        assert_eq!(
            w.regions().last().map(|r| r.kind),
            Some(RegionKind::RaggedOffsets)
        );
        let fwd = forward_workspace(&s, thd).unwrap();
        assert_eq!(fwd.total_bytes(), 256);
        assert_eq!(forward_workspace(&s, none).unwrap().total_bytes(), 0);
        assert!(forward_workspace(&huge, thd).is_err());
    }
}
