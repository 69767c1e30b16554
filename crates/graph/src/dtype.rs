//! Element data types and their sizes.

use std::fmt;

/// Element type of a tensor, as the cuDNN frontend's `DataType_t` subset rime uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DataType {
    /// IEEE binary16.
    F16,
    /// bfloat16 (8-bit exponent, 7-bit mantissa).
    Bf16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
    /// 32-bit signed integer.
    I32,
    /// 64-bit signed integer.
    I64,
    /// One byte per element, 0 or 1.
    Bool,
}

impl DataType {
    /// Every data type, in declaration order.
    pub const ALL: [DataType; 7] = [
        DataType::F16,
        DataType::Bf16,
        DataType::F32,
        DataType::F64,
        DataType::I32,
        DataType::I64,
        DataType::Bool,
    ];

    /// Bytes per element.
    pub const fn size_bytes(self) -> usize {
        match self {
            DataType::F16 | DataType::Bf16 => 2,
            DataType::F32 | DataType::I32 => 4,
            DataType::F64 | DataType::I64 => 8,
            DataType::Bool => 1,
        }
    }

    /// The stable lower-case name used in JSON files and reports.
    pub const fn name(self) -> &'static str {
        match self {
            DataType::F16 => "f16",
            DataType::Bf16 => "bf16",
            DataType::F32 => "f32",
            DataType::F64 => "f64",
            DataType::I32 => "i32",
            DataType::I64 => "i64",
            DataType::Bool => "bool",
        }
    }

    /// Parses a name produced by [`DataType::name`].
    pub fn from_name(name: &str) -> Option<DataType> {
        DataType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// True for the half-precision io types the attention kernels take (f16, bf16).
    pub const fn is_half(self) -> bool {
        matches!(self, DataType::F16 | DataType::Bf16)
    }

    /// True for floating-point types.
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            DataType::F16 | DataType::Bf16 | DataType::F32 | DataType::F64
        )
    }

    /// True for integer types.
    pub const fn is_integer(self) -> bool {
        matches!(self, DataType::I32 | DataType::I64)
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sizes_are_right() {
        for d in DataType::ALL {
            assert_eq!(DataType::from_name(d.name()), Some(d));
        }
        assert_eq!(DataType::Bf16.size_bytes(), 2);
        assert_eq!(DataType::I64.size_bytes(), 8);
        assert_eq!(DataType::from_name("half"), None);
    }
}
