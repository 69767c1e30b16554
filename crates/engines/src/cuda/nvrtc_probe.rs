//! Which NVRTC this process would compile with, and whether it is the CUDA 13 one rime needs.
//!
//! cudarc opens the first NVRTC of its candidate list (`libnvrtc.so`, then `libnvrtc.so.13`,
//! `.12`, `.11`, ...), whatever its version. A CUDA 12 NVRTC would then be used silently (and
//! fail later, or panic on a symbol it lacks), so the probe opens every candidate itself, asks
//! each for `nvrtcVersion`, and [`decide`]s from what it found: the gathering touches the
//! libraries, the decision is a pure function unit-tested without them.

use std::ffi::c_int;
use std::sync::OnceLock;

use super::probe::Unavailable;

/// The NVRTC major version the kernels and cudarc's bindings are built for.
pub const NVRTC_MAJOR_NEEDED: i32 = 13;

/// One NVRTC library that could be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvrtcLibrary {
    /// The name it was opened by (e.g. `libnvrtc.so.12`).
    pub name: String,
    /// What its `nvrtcVersion` reports; `None` when the symbol is missing or the call fails.
    pub version: Option<(i32, i32)>,
}

/// Every NVRTC library that opened, in cudarc's search order: the first is the one cudarc loads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NvrtcFindings {
    /// Libraries that opened, first = the one compilation would use.
    pub opened: Vec<NvrtcLibrary>,
}

/// Decides from `found` whether NVRTC is usable: the version of the library cudarc loads, or why
/// not (none found; or one found whose version is not CUDA 13's, named with what else was seen).
///
/// # Errors
/// [`Unavailable::NoNvrtcLibrary`] or [`Unavailable::WrongNvrtcVersion`].
pub fn decide(found: &NvrtcFindings) -> Result<(i32, i32), Unavailable> {
    let Some(first) = found.opened.first() else {
        return Err(Unavailable::NoNvrtcLibrary);
    };
    match first.version {
        Some((major, minor)) if major >= NVRTC_MAJOR_NEEDED => Ok((major, minor)),
        version => Err(Unavailable::WrongNvrtcVersion {
            library: first.name.clone(),
            version,
            also_found: found.opened[1..]
                .iter()
                .map(|l| match l.version {
                    Some((a, b)) => format!("{} ({a}.{b})", l.name),
                    None => format!("{} (version unknown)", l.name),
                })
                .collect(),
        }),
    }
}

/// Opens every NVRTC candidate cudarc would try, asking each for its version.
pub fn find() -> NvrtcFindings {
    let mut names = cudarc::get_lib_name_candidates("nvrtc");
    names.dedup();
    let opened = names
        .into_iter()
        .filter_map(|name| {
            // SAFETY: loading NVRTC runs no initialisers with preconditions of ours.
            let lib = unsafe { libloading::Library::new(&name) }.ok()?;
            Some(NvrtcLibrary {
                version: version_of(&lib),
                name,
            })
        })
        .collect();
    NvrtcFindings { opened }
}

fn version_of(lib: &libloading::Library) -> Option<(i32, i32)> {
    type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;
    // SAFETY: `nvrtcVersion` has had this signature in every NVRTC release.
    let f = unsafe { lib.get::<VersionFn>(b"nvrtcVersion\0") }.ok()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the out-pointers are valid locals; 0 is NVRTC_SUCCESS.
    let rc = unsafe { f(&mut major, &mut minor) };
    (rc == 0).then_some((major, minor))
}

/// [`decide`] over [`find`], computed once per process (the loader path does not change).
///
/// # Errors
/// As [`decide`].
pub fn nvrtc_status() -> Result<(i32, i32), Unavailable> {
    static STATUS: OnceLock<Result<(i32, i32), Unavailable>> = OnceLock::new();
    STATUS
        .get_or_init(|| {
            std::panic::catch_unwind(|| decide(&find()))
                .unwrap_or(Err(Unavailable::ProbePanicked("NVRTC probe".to_string())))
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lib(name: &str, version: Option<(i32, i32)>) -> NvrtcLibrary {
        NvrtcLibrary {
            name: name.to_string(),
            version,
        }
    }

    #[test]
    fn nothing_found_is_missing() {
        let err = decide(&NvrtcFindings::default()).unwrap_err();
        assert_eq!(err, Unavailable::NoNvrtcLibrary);
        let msg = err.to_string();
        assert!(msg.contains("was not found"), "{msg}");
        assert!(msg.contains("nvidia-cuda-nvrtc==13.0.88"), "{msg}");
        assert!(msg.contains("LD_LIBRARY_PATH"), "{msg}");
    }

    #[test]
    fn cuda_13_is_used() {
        let found = NvrtcFindings {
            opened: vec![lib("libnvrtc.so.13", Some((13, 0)))],
        };
        assert_eq!(decide(&found), Ok((13, 0)));
    }

    #[test]
    fn only_cuda_12_names_what_was_found_and_what_is_needed() {
        let found = NvrtcFindings {
            opened: vec![lib("libnvrtc.so.12", Some((12, 4)))],
        };
        let err = decide(&found).unwrap_err();
        let msg = err.to_string();
        for want in [
            "NVRTC 12.4",
            "libnvrtc.so.12",
            "CUDA 13",
            "libnvrtc.so.13",
            "nvidia-cuda-nvrtc==13.0.88",
            "LD_LIBRARY_PATH",
        ] {
            assert!(msg.contains(want), "missing {want:?} in: {msg}");
        }
        assert!(!msg.contains("was not found"), "{msg}");
    }

    #[test]
    fn an_older_unversioned_library_first_shadows_cuda_13() {
        // cudarc opens `libnvrtc.so` before `libnvrtc.so.13`: the one it loads decides.
        let found = NvrtcFindings {
            opened: vec![
                lib("libnvrtc.so", Some((11, 8))),
                lib("libnvrtc.so.13", Some((13, 0))),
            ],
        };
        let msg = decide(&found).unwrap_err().to_string();
        assert!(msg.contains("NVRTC 11.8 (libnvrtc.so)"), "{msg}");
        assert!(msg.contains("libnvrtc.so.13 (13.0)"), "{msg}");
    }

    #[test]
    fn a_library_without_a_version_is_not_trusted() {
        let found = NvrtcFindings {
            opened: vec![lib("libnvrtc.so", None)],
        };
        let msg = decide(&found).unwrap_err().to_string();
        assert!(msg.contains("libnvrtc.so"), "{msg}");
        assert!(msg.contains("unknown version"), "{msg}");
    }
}
