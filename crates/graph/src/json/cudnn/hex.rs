//! Floats the way the cuDNN frontend writes them: 8 upper-case hex digits of the IEEE-754
//! bits (`"3E000000"` is 0.125). Plain JSON numbers are read too (hand-written files).

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::json::Finite32;

/// A finite f32 written as the hex digits of its bits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct HexF32(pub(super) f32);

/// The f32 of 8 hex digits of its bits; infinities and NaN are refused.
pub(super) fn parse_hex_f32(s: &str) -> Result<f32, String> {
    let bits = (s.len() == 8)
        .then(|| u32::from_str_radix(s, 16).ok())
        .flatten()
        .ok_or_else(|| format!("`{s}` is not an 8-digit hex float (e.g. \"3E000000\")"))?;
    let v = f32::from_bits(bits);
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("`{s}` is not a finite float"))
    }
}

/// The 8 upper-case hex digits of `v`'s bits, as the frontend writes floats.
pub(super) fn hex_f32(v: f32) -> String {
    format!("{:08X}", v.to_bits())
}

impl Serialize for HexF32 {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&hex_f32(self.0))
    }
}

impl<'de> Deserialize<'de> for HexF32 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = HexF32;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a float as 8 hex digits of its bits (\"3E000000\") or a number")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<HexF32, E> {
                parse_hex_f32(s).map(HexF32).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<HexF32, E> {
                Finite32::deserialize(de::value::F64Deserializer::<E>::new(v)).map(|f| HexF32(f.0))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<HexF32, E> {
                Finite32::deserialize(de::value::I64Deserializer::<E>::new(v)).map(|f| HexF32(f.0))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<HexF32, E> {
                Finite32::deserialize(de::value::U64Deserializer::<E>::new(v)).map(|f| HexF32(f.0))
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_floats_read_and_write() {
        assert_eq!(parse_hex_f32("3E000000"), Ok(0.125));
        assert_eq!(parse_hex_f32("3F800000"), Ok(1.0));
        assert_eq!(parse_hex_f32("3DCCCCCD"), Ok(0.1));
        assert_eq!(parse_hex_f32("3dcccccd"), Ok(0.1));
        assert!(parse_hex_f32("7F800000").is_err());
        assert!(parse_hex_f32("7FC00000").is_err());
        assert!(parse_hex_f32("3E00").is_err());
        assert!(parse_hex_f32("zz000000").is_err());
        for v in [0.125, 0.1, -0.0, f32::MIN_POSITIVE, f32::MAX, 1e-45] {
            assert_eq!(
                parse_hex_f32(&hex_f32(v)).map(f32::to_bits),
                Ok(v.to_bits())
            );
        }
        assert_eq!(hex_f32(0.125), "3E000000");
    }
}
