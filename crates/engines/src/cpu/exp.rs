//! exp(x - shift) over a slice, the one transcendental of the softmax. f64 uses the standard
//! library; f32 uses a branch-free Cody-Waite reduction and a degree-6 polynomial that the
//! compiler vectorizes (about 2 ulp), with exp(-inf) = 0 exactly so masked scores vanish.

use super::element::Real;

/// Replaces every x of `xs` by exp(x - shift).
pub(crate) fn exp_shifted<A: Real>(xs: &mut [A], shift: A) {
    A::exp_shifted(xs, shift);
}

/// exp of one f32, without branches (vectorizable). Inputs below -87.3 give 0, above 88.7 inf.
#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let clamped = x.clamp(-87.3, 88.7);
    // Round to nearest with the 1.5 * 2^23 trick (plain SSE2, unlike f32::round).
    const ROUND: f32 = 12_582_912.0;
    let n = (clamped * LOG2E + ROUND) - ROUND;
    let r = clamped - n * LN2_HI - n * LN2_LO;
    // exp(r) on |r| <= ln2 / 2: Taylor to degree 6 (error < 2e-8 relative).
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    let scale = f32::from_bits(((n as i32 + 127) as u32) << 23);
    let y = p * scale;
    if x < -87.3 {
        0.0
    } else if x > 88.7 {
        f32::INFINITY
    } else {
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_exp_is_accurate_and_exact_at_the_ends() {
        let mut worst = 0.0f64;
        let mut x = -87.0f32;
        while x < 88.0 {
            let want = f64::from(x).exp();
            let got = f64::from(exp_f32(x));
            worst = worst.max((got - want).abs() / want);
            x += 0.0137;
        }
        assert!(worst < 5e-7, "relative error {worst}");
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        let mut xs = [0.0f32, 1.0, f32::NEG_INFINITY];
        exp_shifted(&mut xs, 1.0);
        assert_eq!(xs[2], 0.0);
        assert!((xs[1] - 1.0).abs() < 1e-7 && (xs[0] - (-1.0f32).exp()).abs() < 1e-7);
    }
}
