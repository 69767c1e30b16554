use pyo3::prelude::*;
/// Registers the Graph API classes.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> { Ok(()) }
