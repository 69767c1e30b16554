//! Which engine runs an approved plan: [`engine_for`] maps an [`EngineKind`] to an [`Engine`],
//! the CPU reference engine always, the sm120 engine on an opened CUDA device.

use std::sync::Arc;

use rime_analyzer::EngineKind;

use crate::cuda::{CudaDevice, Sm120Engine};
use crate::{CpuEngine, Engine, EngineError};

/// The engine of `kind`: the CPU reference engine, or the sm120 engine on `device`.
///
/// # Errors
/// [`EngineError::EngineUnavailable`] for sm120 without a device.
pub fn engine_for(
    kind: EngineKind,
    device: Option<&Arc<CudaDevice>>,
) -> Result<Box<dyn Engine>, EngineError> {
    match (kind, device) {
        (EngineKind::CpuReference, _) => Ok(Box::new(CpuEngine)),
        (EngineKind::Sm120, Some(d)) => Ok(Box::new(Sm120Engine::new(Arc::clone(d)))),
        (EngineKind::Sm120, None) => Err(EngineError::EngineUnavailable {
            engine: kind.name(),
            reason: "it needs a CUDA device, and none was opened".to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_maps_to_its_engine_or_says_why_not() {
        let cpu = engine_for(EngineKind::CpuReference, None).expect("cpu");
        assert_eq!(cpu.kind(), EngineKind::CpuReference);
        let err = engine_for(EngineKind::Sm120, None)
            .err()
            .expect("no device");
        assert!(err.to_string().contains("sm120"), "{err}");
    }
}
