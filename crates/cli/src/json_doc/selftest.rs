//! `rime selftest --json`: the conformance sweep, one entry per case with its status and the
//! error of every output against the CPU engine's f64 reference.

use rime_conformance::compare::CaseReport;
use schemars::JsonSchema;
use serde::Serialize;

/// Format tag of the document.
pub const FORMAT: &str = "rime.selftest";
/// Version of the document's format.
pub const VERSION: u32 = 1;

/// Whether the sweep ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SelftestStatus {
    /// It ran on `device`; `cases` says how each case went.
    Ran,
    /// No usable GPU: nothing ran, `reason` says why (exit 0 unless a GPU is required).
    Skipped,
}

/// How one case went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CaseStatus {
    /// It ran; every output is finite and within `tolerance`.
    Pass,
    /// It ran and some output is off, non-finite or missing, or it failed to run (`error`).
    Fail,
    /// The analyzer does not approve the case's route on this device (`codes` say why): not run.
    NotApproved,
}

/// One `rime selftest` sweep.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SelftestDoc {
    /// Always `rime.selftest`.
    pub format: String,
    /// Always 1.
    pub version: u32,
    /// Whether it ran.
    pub status: SelftestStatus,
    /// The device, with its compute capability, SMs and free memory; null when skipped.
    pub device: Option<String>,
    /// Why it was skipped; null when it ran.
    pub reason: Option<String>,
    /// Per case, in sweep order.
    pub cases: Vec<CaseDoc>,
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed (the exit code is 1 when any did, or when none ran).
    pub failed: usize,
    /// Cases not approved by the analyzer (not run).
    pub not_approved: usize,
}

/// One case.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CaseDoc {
    /// Case name (shape, options, type, layout, route).
    pub name: String,
    /// How it went.
    pub status: CaseStatus,
    /// The relative-error tolerance applied; null when not run.
    pub tolerance: Option<f64>,
    /// The kernels that ran.
    pub kernels: Vec<String>,
    /// The error of every output.
    pub outputs: Vec<OutputErrorDoc>,
    /// Reason codes of the analyzer's refusal (`not_approved`).
    pub codes: Vec<String>,
    /// Why it could not run; null when it ran.
    pub error: Option<String>,
}

/// The error of one output against the reference.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OutputErrorDoc {
    /// Port name (`dQ`, `dK`, `O`, ...).
    pub name: String,
    /// ||out - ref|| / ||ref|| over the reference's finite elements; null when not finite.
    pub relative_error: Option<f64>,
    /// Elements that are NaN, or infinite where the reference is finite (or the other way).
    pub bad: usize,
}

impl CaseDoc {
    /// A case that ran.
    pub fn ran(r: &CaseReport) -> Self {
        CaseDoc {
            name: r.name.clone(),
            status: if r.passed() {
                CaseStatus::Pass
            } else {
                CaseStatus::Fail
            },
            tolerance: Some(r.tolerance),
            kernels: r.kernels.iter().map(|&k| k.to_owned()).collect(),
            outputs: r
                .outputs
                .iter()
                .map(|o| OutputErrorDoc {
                    name: o.name.to_owned(),
                    relative_error: Some(o.rel_err).filter(|e| e.is_finite()),
                    bad: o.bad,
                })
                .collect(),
            codes: Vec::new(),
            error: r.error.clone(),
        }
    }

    /// A case the analyzer does not approve, with its reason codes.
    pub fn not_approved(name: &str, codes: &[String]) -> Self {
        CaseDoc {
            name: name.to_owned(),
            status: CaseStatus::NotApproved,
            tolerance: None,
            kernels: Vec::new(),
            outputs: Vec::new(),
            codes: codes.to_vec(),
            error: None,
        }
    }
}

impl SelftestDoc {
    /// The document of a sweep that ran on `device`.
    pub fn ran(device: String, cases: Vec<CaseDoc>) -> Self {
        let count = |s: CaseStatus| cases.iter().filter(|c| c.status == s).count();
        SelftestDoc {
            format: FORMAT.to_owned(),
            version: VERSION,
            status: SelftestStatus::Ran,
            device: Some(device),
            reason: None,
            passed: count(CaseStatus::Pass),
            failed: count(CaseStatus::Fail),
            not_approved: count(CaseStatus::NotApproved),
            cases,
        }
    }

    /// The document of a sweep skipped for `reason`.
    pub fn skipped(reason: String) -> Self {
        SelftestDoc {
            format: FORMAT.to_owned(),
            version: VERSION,
            status: SelftestStatus::Skipped,
            device: None,
            reason: Some(reason),
            cases: Vec::new(),
            passed: 0,
            failed: 0,
            not_approved: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use rime_conformance::compare::{CaseReport, OutputCheck};

    use super::*;

    fn report(name: &str, rel_err: f64, bad: usize, error: Option<&str>) -> CaseReport {
        CaseReport {
            name: name.to_owned(),
            tolerance: 1e-2,
            kernels: vec!["bwd_d64_64x128"],
            tensor_copies: false,
            outputs: vec![OutputCheck {
                name: "dQ",
                rel_err,
                bad,
            }],
            error: error.map(str::to_owned),
        }
    }

    /// A sweep that ran, with every case status (and a non-finite error), follows the
    /// committed schema: what `rime selftest --json` prints on a GPU machine.
    #[test]
    fn a_sweep_that_ran_follows_the_schema() {
        let doc = SelftestDoc::ran(
            "device X (sm_120)".to_owned(),
            vec![
                CaseDoc::ran(&report("pass", 1e-3, 0, None)),
                CaseDoc::ran(&report("off", 0.5, 0, None)),
                CaseDoc::ran(&report("nan", f64::NAN, 3, None)),
                CaseDoc::ran(&report("broke", 0.0, 0, Some("launch failed"))),
                CaseDoc::not_approved("refused", &["SMX002".to_owned()]),
            ],
        );
        assert_eq!((doc.passed, doc.failed, doc.not_approved), (1, 3, 1));
        let value = serde_json::to_value(&doc).expect("serializes");
        assert!(value["cases"][2]["outputs"][0]["relative_error"].is_null());
        assert_eq!(value["cases"][4]["status"], "not_approved");
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../schemas/selftest.v1.schema.json"
        );
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).expect("json");
        let validator = jsonschema::validator_for(&schema).expect("compiles");
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
    }
}
