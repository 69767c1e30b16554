//! The frontend's `DataType_t` names for the element types rime models. The others (FP8, INT8,
//! FP4, ...) are not variants, so reading one fails with the list of the names that are.

use serde::{Deserialize, Serialize};

use crate::DataType;

/// A `DataType_t` name rime models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum CudnnType {
    /// `HALF`: IEEE binary16.
    #[serde(rename = "HALF")]
    Half,
    /// `BFLOAT16`.
    #[serde(rename = "BFLOAT16")]
    Bfloat16,
    /// `FLOAT`: IEEE binary32.
    #[serde(rename = "FLOAT")]
    Float,
    /// `DOUBLE`: IEEE binary64.
    #[serde(rename = "DOUBLE")]
    Double,
    /// `INT32`.
    #[serde(rename = "INT32")]
    Int32,
    /// `INT64`.
    #[serde(rename = "INT64")]
    Int64,
    /// `BOOLEAN`.
    #[serde(rename = "BOOLEAN")]
    Boolean,
}

impl From<CudnnType> for DataType {
    fn from(t: CudnnType) -> DataType {
        match t {
            CudnnType::Half => DataType::F16,
            CudnnType::Bfloat16 => DataType::Bf16,
            CudnnType::Float => DataType::F32,
            CudnnType::Double => DataType::F64,
            CudnnType::Int32 => DataType::I32,
            CudnnType::Int64 => DataType::I64,
            CudnnType::Boolean => DataType::Bool,
        }
    }
}

impl From<DataType> for CudnnType {
    fn from(t: DataType) -> CudnnType {
        match t {
            DataType::F16 => CudnnType::Half,
            DataType::Bf16 => CudnnType::Bfloat16,
            DataType::F32 => CudnnType::Float,
            DataType::F64 => CudnnType::Double,
            DataType::I32 => CudnnType::Int32,
            DataType::I64 => CudnnType::Int64,
            DataType::Bool => CudnnType::Boolean,
        }
    }
}
