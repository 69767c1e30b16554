//! The engine interface: build a plan from an analyzer-approved configuration.

use rime_analyzer::{ApprovedPlan, EngineKind};

use crate::{EngineError, Plan};

/// An engine turns an [`ApprovedPlan`] (only the analyzer can make one) into an executable
/// [`Plan`].
pub trait Engine: Send + Sync {
    /// Which engine this is.
    fn kind(&self) -> EngineKind;

    /// Builds the plan of an approved configuration.
    ///
    /// # Errors
    /// [`EngineError::WrongEngine`] when the configuration names another engine;
    /// [`EngineError::Unsupported`] when the node needs something the engine lacks (the
    /// analyzer should have rejected it).
    fn build_plan(&self, approved: &ApprovedPlan) -> Result<Box<dyn Plan>, EngineError>;
}

/// Checks that `approved` names engine `kind`.
///
/// # Errors
/// [`EngineError::WrongEngine`] otherwise.
pub fn expect_engine(kind: EngineKind, approved: &ApprovedPlan) -> Result<(), EngineError> {
    let wanted = approved.config().engine;
    if wanted == kind {
        Ok(())
    } else {
        Err(EngineError::WrongEngine {
            engine: kind.name(),
            wanted: wanted.name(),
        })
    }
}
