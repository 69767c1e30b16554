//! `rime.Report` (what `Graph.check` returns: the analyzer's support report) and
//! `rime.Candidate` (one ranked configuration of `Graph.heuristics`).

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rime_analyzer::{
    render_report, report_json, Candidate as RankedCandidate, SupportReport, Verdict,
};

use crate::reason::Reason;
use crate::select::reasons;

/// The analyzer's answer for a graph on a target: per node and engine configuration, supported
/// (with its exact workspace) or rejected with reasons.
#[pyclass(frozen, module = "rime", name = "Report")]
#[derive(Debug)]
pub struct Report {
    pub(crate) report: SupportReport,
}

#[pymethods]
impl Report {
    /// The target's name.
    #[getter]
    fn target(&self) -> String {
        self.report.target().name.clone()
    }

    /// Engines that support every node ("cpu_reference", "sm120").
    #[getter]
    fn supported_engines(&self) -> Vec<&'static str> {
        self.report
            .supported_engines()
            .into_iter()
            .map(|e| e.name())
            .collect()
    }

    /// True when some engine supports every node.
    #[getter]
    fn supported(&self) -> bool {
        !self.report.supported_engines().is_empty()
    }

    /// Every rejection: the graph's and nodes', then each configuration's (labelled).
    #[getter]
    fn reasons(&self) -> Vec<Reason> {
        reasons(&self.report, None)
    }

    /// One dict per (node, configuration): node, config, engine, route, verdict,
    /// workspace_bytes (None unless supported), reasons.
    #[getter]
    fn configs<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let mut out = Vec::new();
        for node in &self.report.nodes {
            for c in &node.configs {
                let d = PyDict::new(py);
                d.set_item("node", &node.name)?;
                d.set_item("config", c.label())?;
                d.set_item("engine", c.engine.name())?;
                d.set_item("route", c.route.map(|r| r.name()))?;
                d.set_item("verdict", c.verdict.name())?;
                d.set_item(
                    "workspace_bytes",
                    c.workspace
                        .as_ref()
                        .filter(|_| c.verdict == Verdict::Supported)
                        .map(|w| w.total_bytes()),
                )?;
                let rs: Vec<Reason> = c
                    .rejections
                    .iter()
                    .map(|r| Reason::of(r, Some(c.label())))
                    .collect();
                d.set_item("reasons", rs)?;
                out.push(d);
            }
        }
        Ok(out)
    }

    /// True when `engine` ("sm120", "cpu_reference") supports every node.
    fn supports(&self, engine: &str) -> bool {
        rime_analyzer::EngineKind::from_name(engine).is_some_and(|e| self.report.supports(e))
    }

    /// The report as JSON text (schemas/report.v1.schema.json, what `rime check --json`
    /// prints).
    fn to_json(&self) -> String {
        serde_json::to_string_pretty(&report_json::report_doc(&self.report)).unwrap_or_default()
    }

    fn __str__(&self) -> String {
        render_report(&self.report)
    }

    fn __repr__(&self) -> String {
        format!(
            "<rime.Report target={} supported_engines={:?}>",
            self.report.target().name,
            self.supported_engines()
        )
    }
}

/// One ranked, supported configuration of a node.
#[pyclass(frozen, module = "rime", name = "Candidate")]
#[derive(Debug, Clone)]
pub struct Candidate {
    pub(crate) candidate: RankedCandidate,
}

#[pymethods]
impl Candidate {
    /// 1-based rank within its node.
    #[getter]
    fn rank(&self) -> usize {
        self.candidate.rank
    }

    /// The node's name.
    #[getter]
    fn node(&self) -> String {
        self.candidate.node_name.clone()
    }

    /// "sm120/relay", "cpu_reference", ...
    #[getter]
    fn config(&self) -> String {
        self.candidate.config.label()
    }

    /// The engine.
    #[getter]
    fn engine(&self) -> &'static str {
        self.candidate.config.engine.name()
    }

    /// The dQ route of an sm120 backward, else None.
    #[getter]
    fn route(&self) -> Option<&'static str> {
        self.candidate.config.route.map(|r| r.name())
    }

    /// Exact workspace bytes.
    #[getter]
    fn workspace_bytes(&self) -> u64 {
        self.candidate.config.workspace.total_bytes()
    }

    /// The cost model's estimate, seconds.
    #[getter]
    fn estimate_seconds(&self) -> f64 {
        self.candidate.estimate.seconds
    }

    /// Why it ranks where it does.
    #[getter]
    fn explanation(&self) -> String {
        self.candidate.explanation.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "<rime.Candidate {}. {} ({}): {}>",
            self.candidate.rank,
            self.candidate.config.label(),
            self.candidate.node_name,
            self.candidate.explanation
        )
    }
}
