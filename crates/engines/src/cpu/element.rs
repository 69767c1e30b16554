//! Element types of host tensors (f16, bf16, f32, f64) and the real type the math runs in.
//!
//! Inputs are loaded into a [`Real`] (f32 for the engine, f64 for gradient checks) when a tile is
//! packed; results are rounded back to the tensor's element type only when written out.

use std::fmt::Debug;
use std::iter::Sum;
use std::ops::AddAssign;

use half::{bf16, f16};

/// The arithmetic type of the reference math: f32 (the engine's accumulation type) or f64.
pub trait Real:
    num_traits::Float + AddAssign + Sum + Default + Debug + Send + Sync + 'static
{
    /// Converts from f64 (rounding for f32).
    fn of_f64(x: f64) -> Self;
    /// Converts from f32 (exact).
    fn of_f32(x: f32) -> Self;
    /// Widens to f64 (exact).
    fn as_f64(self) -> f64;
    /// Rounds to f32.
    fn as_f32(self) -> f32;
    /// Replaces every x of `xs` by exp(x - shift); f32 uses a vectorizable polynomial.
    fn exp_shifted(xs: &mut [Self], shift: Self) {
        xs.iter_mut().for_each(|x| *x = (*x - shift).exp());
    }
}

impl Real for f32 {
    fn of_f64(x: f64) -> Self {
        x as f32
    }
    fn of_f32(x: f32) -> Self {
        x
    }
    fn as_f64(self) -> f64 {
        f64::from(self)
    }
    fn as_f32(self) -> f32 {
        self
    }
    fn exp_shifted(xs: &mut [Self], shift: Self) {
        xs.iter_mut()
            .for_each(|x| *x = super::exp::exp_f32(*x - shift));
    }
}

impl Real for f64 {
    fn of_f64(x: f64) -> Self {
        x
    }
    fn of_f32(x: f32) -> Self {
        f64::from(x)
    }
    fn as_f64(self) -> f64 {
        self
    }
    fn as_f32(self) -> f32 {
        self as f32
    }
}

/// A floating-point element type a host tensor can hold.
pub trait Element: Copy + Send + Sync + 'static {
    /// Converts the element to the math type.
    fn load<A: Real>(self) -> A;
    /// Rounds a math value to the element type (round to nearest even).
    fn store<A: Real>(value: A) -> Self;
}

impl Element for f16 {
    fn load<A: Real>(self) -> A {
        A::of_f32(self.to_f32())
    }
    fn store<A: Real>(value: A) -> Self {
        f16::from_f64(value.as_f64())
    }
}

impl Element for bf16 {
    fn load<A: Real>(self) -> A {
        A::of_f32(self.to_f32())
    }
    fn store<A: Real>(value: A) -> Self {
        bf16::from_f64(value.as_f64())
    }
}

impl Element for f32 {
    fn load<A: Real>(self) -> A {
        A::of_f32(self)
    }
    fn store<A: Real>(value: A) -> Self {
        value.as_f32()
    }
}

impl Element for f64 {
    fn load<A: Real>(self) -> A {
        A::of_f64(self)
    }
    fn store<A: Real>(value: A) -> Self {
        value.as_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_math_type() {
        let x = bf16::from_f32(1.5);
        assert_eq!(x.load::<f32>(), 1.5);
        assert_eq!(<bf16 as Element>::store(1.5f64), x);
        assert_eq!(
            <f16 as Element>::store(0.1f32).load::<f64>(),
            f16::from_f32(0.1).to_f64()
        );
        assert_eq!(<f32 as Element>::store(2.0f64), 2.0f32);
    }
}
