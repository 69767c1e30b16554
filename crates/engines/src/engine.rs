//! The engine interface: build a plan from an analyzer-approved configuration.

use rime_analyzer::{ApprovedPlan, EngineKind};

use crate::{Buffer, EngineError, HostBuffer, Plan, Workspace};

/// An engine turns an [`ApprovedPlan`] (only the analyzer can make one) into an executable
/// [`Plan`].
pub trait Engine: Send + Sync {
    /// Which engine this is.
    fn kind(&self) -> EngineKind;

    /// Builds the plan of an approved configuration.
    ///
    /// # Errors
    /// [`EngineError::WrongEngine`] when the configuration names another engine;
    /// [`EngineError::MalformedPlan`] when it does not say what the engine must run; compile
    /// or driver errors of a device engine.
    fn build_plan(&self, approved: &ApprovedPlan) -> Result<Box<dyn Plan>, EngineError>;

    /// A copy of `host` where this engine's plans read their buffers.
    ///
    /// # Errors
    /// Allocation or copy errors; a data type the engine's memory cannot hold.
    fn upload(&self, host: &HostBuffer) -> Result<Box<dyn Buffer>, EngineError>;

    /// A host copy of a buffer of this engine's memory.
    ///
    /// # Errors
    /// [`EngineError::WrongMemory`] or a CUDA error for a buffer elsewhere; copy errors.
    fn download(&self, buffer: &dyn Buffer) -> Result<HostBuffer, EngineError>;

    /// Like [`Engine::upload`], taking `host`: an engine whose plans read host memory keeps
    /// the buffer itself (no copy, `None` back); any other copies it and hands `host` back.
    /// A run that holds every tensor of a large graph once needs this to stay at one copy.
    ///
    /// # Errors
    /// As [`Engine::upload`].
    fn upload_owned(
        &self,
        host: HostBuffer,
    ) -> Result<(Box<dyn Buffer>, Option<HostBuffer>), EngineError> {
        Ok((self.upload(&host)?, Some(host)))
    }

    /// Like [`Engine::download`], taking the buffer: a host buffer moves out without a copy.
    ///
    /// # Errors
    /// As [`Engine::download`].
    fn download_owned(&self, buffer: Box<dyn Buffer>) -> Result<HostBuffer, EngineError> {
        self.download(buffer.as_ref())
    }

    /// A workspace of `bytes` bytes in this engine's memory.
    ///
    /// # Errors
    /// Allocation errors.
    fn workspace(&self, bytes: usize) -> Result<Workspace, EngineError>;
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
