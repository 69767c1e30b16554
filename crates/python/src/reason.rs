//! `rime.Reason`: one rejection of the analyzer as a Python object, and `rime.explain`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rime_analyzer::{ReasonCode, Rejection, Subject};

/// Why a graph, a node or one engine configuration cannot run: a stable reason code, what it
/// is about, the limit involved and what to do.
#[pyclass(frozen, module = "rime", name = "Reason")]
#[derive(Debug, Clone)]
pub struct Reason {
    /// The stable code, e.g. "SMX002" (`rime.explain(code)` documents it).
    #[pyo3(get)]
    code: String,
    /// What it is about: "graph", "node `sdpa`", "node `sdpa` port Q (`q`)", ...
    #[pyo3(get)]
    subject: String,
    /// The tensor it is about, when it is about one (the argument name in the functional API).
    #[pyo3(get)]
    tensor: Option<String>,
    /// The specifics, one sentence.
    #[pyo3(get)]
    message: String,
    /// (what is limited, the value requested, what is allowed), when a limit is involved.
    #[pyo3(get)]
    limit: Option<(String, String, String)>,
    /// What to do about it.
    #[pyo3(get)]
    hint: String,
    /// The engine configuration that rejects ("sm120/relay", "cpu_reference"), or None when
    /// the graph or the node is rejected for every engine.
    #[pyo3(get)]
    config: Option<String>,
}

impl Reason {
    /// The reason of `rejection`, from configuration `config` (None: graph or node level).
    pub fn of(rejection: &Rejection, config: Option<String>) -> Self {
        let tensor = match &rejection.subject {
            Subject::Tensor { tensor } => Some(tensor.clone()),
            Subject::Port { tensor, .. } => tensor.clone(),
            _ => None,
        };
        Reason {
            code: rejection.code.code().to_owned(),
            subject: rejection.subject.to_string(),
            tensor,
            message: rejection.message.clone(),
            limit: rejection
                .limit
                .as_ref()
                .map(|l| (l.name.clone(), l.requested.clone(), l.allowed.clone())),
            hint: rejection.hint.clone(),
            config,
        }
    }

    /// The one-line form: `[config] CODE subject: message [limit]`.
    pub fn line(&self) -> String {
        let mut s = match &self.config {
            Some(c) => format!("{c}: {} {}: {}", self.code, self.subject, self.message),
            None => format!("{} {}: {}", self.code, self.subject, self.message),
        };
        if let Some((name, requested, allowed)) = &self.limit {
            s.push_str(&format!(
                " [{name}: requested {requested}, allowed {allowed}]"
            ));
        }
        s
    }
}

#[pymethods]
impl Reason {
    fn __str__(&self) -> String {
        self.line()
    }

    fn __repr__(&self) -> String {
        format!("<rime.Reason {}>", self.line())
    }
}

/// What a reason code checks, why, and how to fix it (the text of docs/reasons.md).
///
/// Raises ValueError for an unknown code.
#[pyfunction]
pub fn explain(code: &str) -> PyResult<String> {
    ReasonCode::from_code(code)
        .map(|c| c.doc().to_owned())
        .ok_or_else(|| PyValueError::new_err(format!("unknown reason code {code:?}")))
}
