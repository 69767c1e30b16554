//! Tensor maps for the main backward kernel's tensor copies (`TMA_TILES` in bwd_main.cu): each
//! streamed Q or dO tile arrives as one box of a rank-5 map over the tensor as (16 columns,
//! sequence, panel of 16 columns, head, batch), so that shared memory receives the tile's
//! 16-column panels one after the other, each 32-byte swizzled (the kernel's `PANELS` layout,
//! common.cuh). Coordinates past a dim land as zeros, so the rows past Sq and the panels past a
//! head dim below the envelope (160 in the 192 envelope) need no code of their own; a head dim
//! that ends inside a panel (200) would read past its rows, and is not tensor-copied.
//!
//! A map holds the tensor's address, so it is encoded for each execution, on the host, from the
//! launch parameters the kernel receives (what the kernel reads through its map is what its
//! `AttnParams` describe).

use cudarc::driver::sys;
use rime_graph::DataType;

use super::abi::{AttnParams, TensorMap, TensorRef, TmaMaps};
use super::error::CudaError;
use crate::EngineError;

/// Columns of one panel: 32 bytes of 16-bit elements, the 32-byte swizzle's span.
const PANEL_COLUMNS: u32 = 16;
/// Bytes of an element of Q and dO.
const IO_BYTES: u64 = 2;
/// Strides a tensor map takes: multiples of 16 bytes, below 2^40.
const STRIDE_LIMIT: u64 = 1 << 40;

/// What `cuTensorMapEncodeTiled` is given for one tensor, innermost dim first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TileMap {
    /// (16 columns of a panel, sequence, panels, heads, batch): the tensor's extents, its head
    /// dim as panels of 16 columns.
    pub dims: [u64; 5],
    /// Byte strides of the sequence, panel, head and batch dims (a panel's 16 columns are
    /// contiguous, and the next panel 32 bytes on).
    pub strides: [u64; 4],
    /// One tile: 16 columns x the Q tile's rows x the envelope's panels.
    pub boxed: [u32; 5],
}

/// The map of `t` (a padded Q or dO with `head_dim` columns, a multiple of 16, `seq` rows,
/// `heads`, `batch`) for tiles of `block_q` rows of the kernel's `envelope` columns: one box a
/// tile, the envelope's panels past the head dim landing as zeros.
///
/// # Errors
/// [`EngineError::LimitExceeded`] for a head dim that is not a multiple of 16 within the
/// envelope (the plan builds tensor copies only for those, `tensor_copies_serve`), and for a
/// stride a tensor map cannot hold (not a multiple of 16 bytes, or 2^40 bytes or more; the
/// analyzer's stride rules and the buffers' sizes keep every approved plan's within both).
pub(crate) fn tile_map(
    name: &'static str,
    t: &TensorRef,
    [head_dim, seq, heads, batch]: [i32; 4],
    block_q: u32,
    envelope: u32,
) -> Result<TileMap, EngineError> {
    let extent = |what: &'static str, n: i32| {
        u64::try_from(n)
            .ok()
            .filter(|&n| n > 0)
            .ok_or(EngineError::LimitExceeded {
                engine: "sm120",
                what,
                value: 0,
                limit: u64::from(u32::MAX),
            })
    };
    let columns = extent("a tensor map's head dim", head_dim)?;
    if columns % u64::from(PANEL_COLUMNS) != 0 || columns > u64::from(envelope) {
        return Err(EngineError::LimitExceeded {
            engine: "sm120",
            what: "a tensor-copied head dim (a multiple of 16 within the envelope)",
            value: columns,
            limit: u64::from(envelope),
        });
    }
    let dims = [
        u64::from(PANEL_COLUMNS),
        extent("a tensor map's sequence", seq)?,
        columns / u64::from(PANEL_COLUMNS),
        extent("a tensor map's heads", heads)?,
        extent("a tensor map's batch", batch)?,
    ];
    // A dim of extent 1 is only ever at coordinate 0: its stride is never used, and any valid
    // one stands in for whatever the graph gave it (0, say).
    let stride = |elements: i64, extent: u64| -> Result<u64, EngineError> {
        if extent == 1 {
            return Ok(16);
        }
        let bytes = u64::try_from(elements)
            .ok()
            .and_then(|e| e.checked_mul(IO_BYTES))
            .filter(|b| b % 16 == 0 && (16..STRIDE_LIMIT).contains(b));
        bytes.ok_or(EngineError::LimitExceeded {
            engine: "sm120",
            what: name,
            value: elements.unsigned_abs(),
            limit: STRIDE_LIMIT / IO_BYTES - 1,
        })
    };
    Ok(TileMap {
        dims,
        strides: [
            stride(t.ss, dims[1])?,
            u64::from(PANEL_COLUMNS) * IO_BYTES,
            stride(t.sh, dims[3])?,
            stride(t.sb, dims[4])?,
        ],
        boxed: [PANEL_COLUMNS, block_q, envelope / PANEL_COLUMNS, 1, 1],
    })
}

/// The tensor maps of Q and dO for one execution of a main kernel with tiles of `block_q` rows
/// and head-dim envelope `(dqk, dv)`.
///
/// # Errors
/// As [`tile_map`]; a driver error naming the tensor when the driver refuses a map.
pub(crate) fn tile_maps(
    params: &AttnParams,
    io: DataType,
    block_q: u32,
    (dqk, dv): (u32, u32),
) -> Result<TmaMaps, EngineError> {
    let p = params;
    let q = tile_map(
        "Q's strides",
        &p.q,
        [p.hd_qk, p.sq, p.hq, p.batch],
        block_q,
        dqk,
    )?;
    let d_o = tile_map(
        "dO's strides",
        &p.d_o,
        [p.hd_v, p.sq, p.hq, p.batch],
        block_q,
        dv,
    )?;
    Ok(TmaMaps {
        q: encode(&q, p.q.ptr, io, "encoding the tensor map of Q")?,
        d_o: encode(&d_o, p.d_o.ptr, io, "encoding the tensor map of dO")?,
    })
}

/// A device address as the driver's pointer argument (device addresses fit a host pointer on
/// every platform CUDA runs on).
fn address(ptr: u64) -> usize {
    usize::try_from(ptr).unwrap_or(usize::MAX)
}

/// Encodes `map` over the tensor at device address `ptr`.
fn encode(
    map: &TileMap,
    ptr: u64,
    io: DataType,
    during: &'static str,
) -> Result<TensorMap, CudaError> {
    use sys::CUtensorMapDataType_enum as Ty;
    let ty = if io == DataType::Bf16 {
        Ty::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
    } else {
        Ty::CU_TENSOR_MAP_DATA_TYPE_FLOAT16
    };
    // SAFETY: a plain-old-data struct; all zero is a valid (empty) map for the driver to fill.
    let mut out: sys::CUtensorMap = unsafe { std::mem::zeroed() };
    let element_strides = [1u32; 5];
    // SAFETY: every pointer is to a live local array of the rank's length (5 dims, 4 strides, 5
    // box sizes, 5 element strides) or to the map being written; the driver only reads the
    // address, it does not dereference it.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut out,
            ty,
            5,
            std::ptr::without_provenance_mut(address(ptr)),
            map.dims.as_ptr(),
            map.strides.as_ptr(),
            map.boxed.as_ptr(),
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave_enum::CU_TENSOR_MAP_INTERLEAVE_NONE,
            sys::CUtensorMapSwizzle_enum::CU_TENSOR_MAP_SWIZZLE_32B,
            sys::CUtensorMapL2promotion_enum::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill_enum::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    }
    .result()
    .map_err(CudaError::driver(during))?;
    Ok(TensorMap { opaque: out.opaque })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tref(sb: i64, sh: i64, ss: i64) -> TensorRef {
        TensorRef {
            ptr: 0x1000,
            sb,
            sh,
            ss,
            ragged: 0,
        }
    }

    #[test]
    fn maps_take_the_tensors_strides_in_bytes_innermost_first() {
        // BHSD (2, 8, 300, 192): rows 384 bytes apart, heads 300 rows, batches 8 heads.
        let t = tref(8 * 300 * 192, 300 * 192, 192);
        let m = tile_map("Q", &t, [192, 300, 8, 2], 32, 192).unwrap();
        assert_eq!(m.dims, [16, 300, 12, 8, 2]);
        assert_eq!(m.strides, [384, 32, 300 * 384, 8 * 300 * 384]);
        assert_eq!(m.boxed, [16, 32, 12, 1, 1]);
        // BSHD: the head stride below the sequence's (a map takes any order); a head dim below
        // the envelope: its panels past 160 are outside the tensor (zeros), the box the whole
        // envelope's.
        let t = tref(300 * 8 * 160, 160, 8 * 160);
        let m = tile_map("dO", &t, [160, 300, 8, 2], 32, 192).unwrap();
        assert_eq!(m.dims, [16, 300, 10, 8, 2]);
        assert_eq!(m.strides, [8 * 320, 32, 320, 300 * 8 * 320]);
        assert_eq!(m.boxed, [16, 32, 12, 1, 1]);
    }

    #[test]
    fn an_unused_stride_is_replaced_and_a_bad_stride_or_head_dim_refused() {
        let m = tile_map("Q", &tref(0, 0, 64), [64, 10, 1, 1], 64, 64).unwrap();
        assert_eq!(m.strides, [128, 32, 16, 16]);
        // 4 elements: 8 bytes, not a multiple of 16.
        let e = tile_map("Q's strides", &tref(0, 0, 4), [64, 10, 1, 1], 64, 64).unwrap_err();
        assert!(e.to_string().contains("Q's strides"), "{e}");
        // 2^39 elements: 2^40 bytes.
        assert!(tile_map("dO", &tref(1 << 39, 640, 64), [64, 10, 1, 2], 64, 64).is_err());
        assert!(tile_map("Q", &tref(0, 0, 64), [64, 0, 1, 1], 64, 64).is_err());
        // A head dim that ends inside a panel, or past the envelope.
        assert!(tile_map("Q", &tref(0, 0, 200), [200, 10, 1, 1], 32, 256).is_err());
        assert!(tile_map("Q", &tref(0, 0, 256), [256, 10, 1, 1], 32, 192).is_err());
    }
}
