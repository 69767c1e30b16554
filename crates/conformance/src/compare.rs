//! How outputs are judged: relative error ||out - ref|| / ||ref|| per output (optionally with an
//! absolute floor), non-finite elements counted, per-dtype tolerances, and the report of a case.
//! A ragged (THD) output is compared at its real tokens only, and every other element of its
//! buffer (the gaps between sequences and past the last offset) must still hold the poison it
//! was given before the run.

use rime_engines::{Buffer, HostBuffer};
use rime_graph::DataType;

use crate::exec::{Outputs, POISON_BYTE};
use crate::spec::{CaseGraph, RaggedTensor};

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

/// `out` against `reference` (two buffers of ragged tensor `r`'s layout) at its real tokens
/// only: what lies between sequences is not an output, and is checked by [`outside_tokens`].
pub fn relative_ragged(
    name: &'static str,
    r: &RaggedTensor,
    out: &[f64],
    reference: &[f64],
    floor: f64,
) -> OutputCheck {
    let real = |v: &[f64]| -> Vec<f64> {
        r.real_elements()
            .map(|e| v.get(e).copied().unwrap_or(f64::NAN))
            .collect()
    };
    let mut c = relative(name, &real(out), &real(reference), floor);
    // A buffer of another length than the layout's is wrong however its tokens compare.
    c.bad += out.len().abs_diff(r.buffer_len()) + reference.len().abs_diff(r.buffer_len());
    c
}

/// Elements of ragged output `r`'s buffer `out` outside its real tokens that no longer hold
/// [`POISON_BYTE`] in every byte, and the first of them in words (the tensor, the batch whose
/// room it lies in, the element, its value).
pub fn outside_tokens(name: &str, r: &RaggedTensor, out: &HostBuffer) -> (usize, Option<String>) {
    let size = out.data_type().size_bytes().max(1);
    let bytes = out.to_le_bytes();
    let real = r.real_mask();
    let mut changed = bytes.len().abs_diff(real.len() * size) / size;
    let mut first = (changed > 0).then(|| {
        format!(
            "{name}: buffer of {} elements, its layout needs {}",
            bytes.len() / size,
            real.len()
        )
    });
    for (e, element) in bytes.chunks(size).enumerate() {
        if real.get(e).copied().unwrap_or(false) || element.iter().all(|&b| b == POISON_BYTE) {
            continue;
        }
        changed += 1;
        first.get_or_insert_with(|| {
            let value = out.to_f64().get(e).copied().unwrap_or(f64::NAN);
            format!(
                "{name}: element {e}, outside the real tokens in {}, was written ({value:e}, \
                 bytes {element:02x?})",
                r.locate(e)
            )
        });
    }
    (changed, first)
}

/// The name of the outside-the-tokens check of a ragged output.
fn gaps_name(name: &str) -> &'static str {
    match name {
        "O" => "O-gaps",
        "Stats" => "Stats-gaps",
        "dQ" => "dQ-gaps",
        "dK" => "dK-gaps",
        "dV" => "dV-gaps",
        _ => "gaps",
    }
}

/// Every output of `out` against the same tensor of `reference` (both runs of `g`): the
/// relative error of each (a ragged one's at its real tokens), and for each ragged output a
/// `<name>-gaps` check counting the elements outside its tokens that `out` changed, with the
/// first of them described (the strings: a case with any fails).
pub fn outputs(
    g: &CaseGraph,
    out: &Outputs,
    reference: &Outputs,
) -> (Vec<OutputCheck>, Vec<String>) {
    let (mut checks, mut written) = (Vec::new(), Vec::new());
    for (id, h) in out {
        let Some((_, r)) = reference.iter().find(|(t, _)| t == id) else {
            continue;
        };
        let name = g.name_of(*id);
        match g.ragged_of(*id) {
            Some(layout) => {
                checks.push(relative_ragged(name, layout, &h.to_f64(), &r.to_f64(), 0.0));
                let (bad, first) = outside_tokens(name, layout, h);
                checks.push(OutputCheck {
                    name: gaps_name(name),
                    rel_err: 0.0,
                    bad,
                });
                written.extend(first);
            }
            None => checks.push(relative(name, &h.to_f64(), &r.to_f64(), 0.0)),
        }
    }
    (checks, written)
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
    /// The backward main kernel took its Q and dO tiles by tensor copies.
    pub tensor_copies: bool,
    /// Per output.
    pub outputs: Vec<OutputCheck>,
    /// Why the case could not run, instead of results; or, with results, where a ragged
    /// output was written outside its real tokens.
    pub error: Option<String>,
}

impl CaseReport {
    /// A case that could not run.
    pub fn failed(name: impl Into<String>, error: impl std::fmt::Display) -> Self {
        Self {
            name: name.into(),
            tolerance: 0.0,
            kernels: Vec::new(),
            tensor_copies: false,
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
            if self.tensor_copies {
                s.push_str(" (tensor copies)");
            }
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
            tensor_copies: false,
            outputs: Vec::new(),
            error: None,
        };
        assert!(!empty.passed(), "a case that checked nothing does not pass");
    }
}
