//! Graph-wide data types and the inference of unset tensor types.

use crate::DataType;

/// Graph context: the data types that tensors and nodes fall back to when they set none.
///
/// As in the cuDNN frontend, a tensor without a data type takes the `intermediate` type when it
/// is virtual and the `io` type otherwise. Inference never writes into the graph: it is a query
/// ([`Context::infer`]), so the user's graph stays exactly as built or loaded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Context {
    /// Graph name, free text.
    pub name: String,
    /// Type of non-virtual tensors that set none (Q, K, V, O, dO, gradients).
    pub io_data_type: Option<DataType>,
    /// Type of virtual tensors that set none.
    pub intermediate_data_type: Option<DataType>,
    /// Accumulation type of the nodes' arithmetic.
    pub compute_data_type: Option<DataType>,
}

impl Context {
    /// A context with all three types set, the usual choice (`io`, f32, f32).
    pub fn with_io(io: DataType) -> Self {
        Context {
            name: String::new(),
            io_data_type: Some(io),
            intermediate_data_type: Some(DataType::F32),
            compute_data_type: Some(DataType::F32),
        }
    }

    /// The effective type of a tensor that declares `declared` and is virtual or not.
    pub fn infer(&self, declared: Option<DataType>, is_virtual: bool) -> Option<DataType> {
        declared.or(if is_virtual {
            self.intermediate_data_type
        } else {
            self.io_data_type
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_takes_intermediate_and_io_takes_io() {
        let ctx = Context::with_io(DataType::Bf16);
        assert_eq!(ctx.infer(None, true), Some(DataType::F32));
        assert_eq!(ctx.infer(None, false), Some(DataType::Bf16));
        assert_eq!(ctx.infer(Some(DataType::F16), false), Some(DataType::F16));
        assert_eq!(Context::default().infer(None, false), None);
    }
}
