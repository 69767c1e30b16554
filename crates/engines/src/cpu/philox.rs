//! Philox4x32-10, the counter-based generator of Salmon et al., "Parallel random numbers: as
//! easy as 1, 2, 3" (SC 2011), as Random123, cuRAND and PyTorch's CUDA dropout use it: a
//! 128-bit counter and a 64-bit key give four 32-bit outputs, so any element of a stream can
//! be computed on its own, in any order (which the dropout mask needs: the backward
//! regenerates the forward's mask tile by tile).

/// Multipliers of the two Philox S-boxes.
const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
/// Weyl key increments (the golden ratio and sqrt(3) - 1, as 32-bit fractions).
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;
/// Rounds of the -10 variant.
const ROUNDS: usize = 10;

/// The high and low 32 bits of the 64-bit product `a * b`.
fn mul_hi_lo(a: u32, b: u32) -> (u32, u32) {
    let product = u64::from(a) * u64::from(b);
    let [l0, l1, l2, l3, h0, h1, h2, h3] = product.to_le_bytes();
    (
        u32::from_le_bytes([h0, h1, h2, h3]),
        u32::from_le_bytes([l0, l1, l2, l3]),
    )
}

/// One Philox round on counter `c` with round key `k`.
fn round(c: [u32; 4], k: [u32; 2]) -> [u32; 4] {
    let (hi0, lo0) = mul_hi_lo(M0, c[0]);
    let (hi1, lo1) = mul_hi_lo(M1, c[2]);
    [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0]
}

/// The four 32-bit outputs of Philox4x32-10 for `counter` under `key` (Random123's
/// `philox4x32(ctr, key)` with 10 rounds).
pub(crate) fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (counter, key);
    for r in 0..ROUNDS {
        if r > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        c = round(c, k);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's `kat_vectors`, the three `philox4x32 10` lines: counter, key, output.
    const KAT: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
        (
            [0, 0, 0, 0],
            [0, 0],
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8],
        ),
        (
            [u32::MAX; 4],
            [u32::MAX; 2],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];

    #[test]
    fn matches_random123_known_answers() {
        for (counter, key, want) in KAT {
            assert_eq!(philox4x32_10(counter, key), want, "counter {counter:x?}");
        }
    }

    #[test]
    fn high_and_low_halves_of_the_product() {
        assert_eq!(mul_hi_lo(u32::MAX, u32::MAX), (0xFFFF_FFFE, 1));
        assert_eq!(mul_hi_lo(1 << 31, 4), (2, 0));
    }
}
