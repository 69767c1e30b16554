//! How outputs are judged: relative error ||out - ref|| / ||ref|| per output (optionally with an
//! absolute floor), non-finite elements counted, per-dtype tolerances, and the report of a case.

use rime_graph::DataType;

/// The tolerance of an io type: bf16 1e-2, f16 3e-3 (f32 accumulation either way).
pub fn tolerance(io: DataType) -> f64 {
    if io == DataType::F16 {
        3e-3
    } else {
        1e-2
    }
}

/// Relative error of one output.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputCheck {
    /// Port name.
    pub name: &'static str,
    /// ||out - ref|| / ||ref|| over the finite reference entries.
    pub rel_err: f64,
    /// Elements that are NaN, or infinite where the reference is finite (or finite where it is
    /// infinite: Stats of a fully masked row must be +inf too).
    pub bad: usize,
}

/// `out` against `reference`, with ||ref|| taken as at least `floor` x sqrt(elements): an output
/// that is zero in exact arithmetic comes back from two engines as rounding noise, and noise
/// must not be measured against noise (0: the plain relative error).
pub fn relative(name: &'static str, out: &[f64], reference: &[f64], floor: f64) -> OutputCheck {
    let floor2 = floor * floor * reference.len() as f64;
    let (mut num, mut den, mut bad) = (0.0f64, 0.0f64, 0usize);
    for (&o, &r) in out.iter().zip(reference) {
        if r.is_finite() {
            if !o.is_finite() {
                bad += 1;
                continue;
            }
            num += (o - r).powi(2);
            den += r * r;
        } else if o != r {
            bad += 1;
        }
    }
    if out.len() != reference.len() {
        bad += out.len().abs_diff(reference.len());
    }
    let den = den.max(floor2);
    OutputCheck {
        name,
        rel_err: if den > 0.0 {
            (num / den).sqrt()
        } else {
            num.sqrt()
        },
        bad,
    }
}

/// The result of one case (one configuration of one graph).
#[derive(Debug, Clone)]
pub struct CaseReport {
    /// Case name (with the configuration).
    pub name: String,
    /// Tolerance applied.
    pub tolerance: f64,
    /// The kernels that ran (table entries), when the engine names them.
    pub kernels: Vec<&'static str>,
    /// Per output.
    pub outputs: Vec<OutputCheck>,
    /// Why the case could not run, instead of results.
    pub error: Option<String>,
}

impl CaseReport {
    /// A case that could not run.
    pub fn failed(name: impl Into<String>, error: impl std::fmt::Display) -> Self {
        Self {
            name: name.into(),
            tolerance: 0.0,
            kernels: Vec::new(),
            outputs: Vec::new(),
            error: Some(error.to_string()),
        }
    }

    /// True when it ran, produced outputs, and every one is finite and within tolerance.
    pub fn passed(&self) -> bool {
        self.error.is_none()
            && !self.outputs.is_empty()
            && self
                .outputs
                .iter()
                .all(|o| o.bad == 0 && o.rel_err <= self.tolerance)
    }

    /// One line: PASS / FAIL, the name, the errors per output.
    pub fn line(&self) -> String {
        let status = if self.passed() { "PASS" } else { "FAIL" };
        let mut s = format!("{status} {:<56} tol {:.0e}", self.name, self.tolerance);
        for o in &self.outputs {
            s.push_str(&format!("  {}={:.2e}", o.name, o.rel_err));
            if o.bad > 0 {
                s.push_str(&format!("({} bad)", o.bad));
            }
        }
        if !self.kernels.is_empty() {
            s.push_str(&format!("  [{}]", self.kernels.join("+")));
        }
        if let Some(e) = &self.error {
            s.push_str(&format!("  error: {e}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_count_what_is_wrong() {
        let r = [1.0, 2.0, f64::INFINITY];
        let ok = relative("x", &[1.0, 2.0, f64::INFINITY], &r, 0.0);
        assert_eq!((ok.rel_err, ok.bad), (0.0, 0));
        let off = relative("x", &[1.1, 2.0, 0.0], &r, 0.0);
        assert!((off.rel_err - 0.1 / 5f64.sqrt()).abs() < 1e-12);
        assert_eq!(off.bad, 1);
        assert_eq!(relative("x", &[f64::NAN, 2.0], &[1.0, 2.0], 0.0).bad, 1);
        // Noise against noise: the floor makes it small.
        let noise = relative("x", &[1e-7, -1e-7], &[0.0, 0.0], 1e-3);
        assert!(noise.rel_err < 1e-3);
        let empty = CaseReport {
            name: "c".into(),
            tolerance: 1e-2,
            kernels: Vec::new(),
            outputs: Vec::new(),
            error: None,
        };
        assert!(!empty.passed(), "a case that checked nothing does not pass");
    }
}
