//! `rime.Graph` and `rime.Tensor`: the graph API of the cuDNN frontend's Python bindings
//! (`cudnn.pygraph`) over rime's graphs — tensors, `sdpa` / `sdpa_backward`, `validate`,
//! `check` (the support report, reasons as objects), `heuristics`, `build_plans`,
//! `get_workspace_size`, `execute` with a dict of tensors — and the graph's JSON files.

use std::collections::BTreeMap;
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyString};
use rime_analyzer::{
    analyze, heuristics, HeuristicsMode, HeuristicsOptions, Selector, SupportReport, Target,
};
use rime_engines::cuda::{probe, CudaStatus};
use rime_graph::{
    json, Context, DataType, DiagonalAlignment, Graph, SdpaBackwardAttrs, SdpaForwardAttrs, Tensor,
    TensorId,
};

use crate::array::{Place, TensorArg, WorkspaceArg};
use crate::attrs::{alignment, common, Common};
use crate::device::{engine_of, target_of};
use crate::dtype::data_type_arg;
use crate::errors::{graph_error, tensor_error, unsupported};
use crate::hooks;
use crate::reason::Reason;
use crate::report::{Candidate, Report};
use crate::runnable::Runnable;
use crate::select::{pinned, reasons};

/// Plans built for one place, in the order the nodes run.
#[derive(Debug)]
struct Built {
    place: Place,
    graph: Arc<Graph>,
    plans: Vec<Runnable>,
}

/// A graph of SDPA nodes, built as with the cuDNN frontend's `pygraph`.
#[pyclass(module = "rime", name = "Graph")]
#[derive(Debug)]
pub struct PyGraph {
    graph: Graph,
    built: Option<Built>,
}

/// A tensor of a [`PyGraph`]: its name, dims, strides and type, read and set through the
/// graph. Usable as a key of `Graph.execute`'s variant pack.
#[pyclass(frozen, module = "rime", name = "Tensor")]
#[derive(Debug)]
pub struct PyTensor {
    graph: Py<PyGraph>,
    id: TensorId,
}

/// Where a target name points: a named profile (check and heuristics only) or a place plans
/// can run on.
fn resolve_target(
    py: Python<'_>,
    name: &str,
    free_memory: Option<u64>,
) -> PyResult<(Target, Option<Place>)> {
    let place = match name {
        "auto" => {
            hooks::prepare_cuda(py)?;
            match py.detach(probe) {
                CudaStatus::Available { .. } => Some(Place::Cuda(0)),
                CudaStatus::Unavailable(_) => Some(Place::Host),
            }
        }
        "cpu" => Some(Place::Host),
        "cuda" => Some(Place::Cuda(0)),
        other => match other.strip_prefix("cuda:").map(str::parse::<usize>) {
            Some(Ok(n)) => Some(Place::Cuda(n)),
            Some(Err(_)) => {
                return Err(PyValueError::new_err(format!(
                    "target: {other:?} is not cuda:N"
                )))
            }
            None => None,
        },
    };
    let target = match place {
        Some(p) => target_of(py, p)?,
        None => Target::by_name(name).ok_or_else(|| {
            let known: Vec<String> = Target::all().into_iter().map(|t| t.name).collect();
            PyValueError::new_err(format!(
                "target: unknown {name:?}; use 'auto', 'cpu', 'cuda', 'cuda:N' or one of {}",
                known.join(", ")
            ))
        })?,
    };
    Ok((
        match free_memory {
            Some(bytes) => target.with_free_memory(bytes),
            None => target,
        },
        place,
    ))
}

fn mode_of(name: &str) -> PyResult<HeuristicsMode> {
    HeuristicsMode::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!("mode: {name:?} is not 'a', 'b' or 'fallback'"))
    })
}

impl PyGraph {
    fn new_graph(graph: Graph) -> Self {
        PyGraph { graph, built: None }
    }

    /// The id of a tensor handle, which must belong to this graph.
    fn id_of(slf: &Bound<'_, Self>, t: &Bound<'_, PyTensor>, argument: &str) -> PyResult<TensorId> {
        let t = t.get();
        if t.graph.as_ptr() != slf.as_ptr() {
            return Err(PyValueError::new_err(format!(
                "{argument}: a tensor of another graph"
            )));
        }
        Ok(t.id)
    }

    fn opt_id(
        slf: &Bound<'_, Self>,
        t: Option<&Bound<'_, PyTensor>>,
        argument: &str,
    ) -> PyResult<Option<TensorId>> {
        t.map(|t| Self::id_of(slf, t, argument)).transpose()
    }

    fn handle(slf: &Bound<'_, Self>, id: TensorId) -> PyResult<Py<PyTensor>> {
        Py::new(
            slf.py(),
            PyTensor {
                graph: slf.clone().unbind(),
                id,
            },
        )
    }

    fn mutate(&mut self) -> &mut Graph {
        self.built = None;
        &mut self.graph
    }
}

/// The options shared by `sdpa` and `sdpa_backward`, under the cuDNN frontend's names.
#[allow(clippy::too_many_arguments)]
fn common_of(
    slf: &Bound<'_, PyGraph>,
    name: Option<String>,
    attn_scale: Option<&Bound<'_, PyAny>>,
    use_causal_mask: bool,
    use_causal_mask_bottom_right: bool,
    diagonal_alignment: Option<&str>,
    left_bound: Option<i64>,
    right_bound: Option<i64>,
    bias: Option<&Bound<'_, PyTensor>>,
    use_padding_mask: bool,
    seq_len_q: Option<&Bound<'_, PyTensor>>,
    seq_len_kv: Option<&Bound<'_, PyTensor>>,
    use_alibi_mask: bool,
    sink: Option<&Bound<'_, PyTensor>>,
) -> PyResult<Common> {
    let mut c = Common {
        name,
        left_bound,
        right_bound,
        alibi: use_alibi_mask,
        bias: PyGraph::opt_id(slf, bias, "bias")?,
        sink: PyGraph::opt_id(slf, sink, "sink")?,
        ..Common::default()
    };
    if let Some(a) = diagonal_alignment {
        c.alignment = alignment(a).ok_or_else(|| {
            PyValueError::new_err(format!(
                "diagonal_alignment: {a:?} is not 'top_left' or 'bottom_right'"
            ))
        })?;
    }
    if use_causal_mask || use_causal_mask_bottom_right {
        if use_causal_mask && use_causal_mask_bottom_right {
            return Err(PyValueError::new_err(
                "use_causal_mask and use_causal_mask_bottom_right: choose one",
            ));
        }
        if right_bound.is_some_and(|r| r != 0) {
            return Err(PyValueError::new_err(
                "right_bound: a causal mask sets it to 0",
            ));
        }
        c.right_bound = Some(0);
        if use_causal_mask_bottom_right {
            c.alignment = DiagonalAlignment::BottomRight;
        }
    }
    match (use_padding_mask, seq_len_q, seq_len_kv) {
        (true, Some(q), Some(kv)) => {
            c.padding = Some((
                PyGraph::id_of(slf, q, "seq_len_q")?,
                PyGraph::id_of(slf, kv, "seq_len_kv")?,
            ));
        }
        (false, None, None) => {}
        _ => {
            return Err(PyValueError::new_err(
                "use_padding_mask: give it with both seq_len_q and seq_len_kv",
            ))
        }
    }
    if let Some(s) = attn_scale {
        if let Ok(t) = s.cast::<PyTensor>() {
            c.scale_tensor = Some(PyGraph::id_of(slf, t, "attn_scale")?);
        } else {
            let v: f64 = s.extract().map_err(|_| {
                PyTypeError::new_err("attn_scale: a float or a rime.Tensor of the graph")
            })?;
            c.scale = crate::functional::scale_f32(Some(v))?;
        }
    }
    Ok(c)
}

#[pymethods]
impl PyGraph {
    /// A new graph. `io_data_type` is the type of tensors that set none (f16 or bf16: a rime
    /// name, torch dtype or numpy dtype); intermediate and compute types default to f32.
    #[new]
    #[pyo3(signature = (io_data_type=None, intermediate_data_type=None, compute_data_type=None, name=""))]
    fn py_new(
        py: Python<'_>,
        io_data_type: Option<&Bound<'_, PyAny>>,
        intermediate_data_type: Option<&Bound<'_, PyAny>>,
        compute_data_type: Option<&Bound<'_, PyAny>>,
        name: &str,
    ) -> PyResult<Self> {
        let ty = |arg: &str, v: Option<&Bound<'_, PyAny>>| {
            v.map(|v| data_type_arg(py, arg, v)).transpose()
        };
        let context = Context {
            name: name.to_owned(),
            io_data_type: ty("io_data_type", io_data_type)?,
            intermediate_data_type: ty("intermediate_data_type", intermediate_data_type)?
                .or(Some(DataType::F32)),
            compute_data_type: ty("compute_data_type", compute_data_type)?.or(Some(DataType::F32)),
        };
        Ok(Self::new_graph(Graph::new(context)))
    }

    /// Adds a tensor: `dim` (logical dims), `stride` (elements; default row-major),
    /// `data_type` (default: the graph's io type), `uid` (a variant-pack key), `is_virtual`.
    #[pyo3(signature = (name, dim, stride=None, data_type=None, uid=None, is_virtual=false))]
    fn tensor(
        slf: &Bound<'_, Self>,
        name: &str,
        dim: Vec<i64>,
        stride: Option<Vec<i64>>,
        data_type: Option<&Bound<'_, PyAny>>,
        uid: Option<i64>,
        is_virtual: bool,
    ) -> PyResult<Py<PyTensor>> {
        let py = slf.py();
        let strides = stride.unwrap_or_else(|| rime_graph::packed_strides(&dim));
        let mut t = Tensor::new(name, &dim, &strides).with_virtual(is_virtual);
        if let Some(d) = data_type {
            t = t.with_data_type(data_type_arg(py, "data_type", d)?);
        }
        if let Some(u) = uid {
            t = t.with_uid(u);
        }
        let id = slf.borrow_mut().mutate().tensor(t);
        Self::handle(slf, id)
    }

    /// Adds a tensor with the dims, strides and type of a torch tensor or numpy array.
    #[pyo3(signature = (array, name, uid=None))]
    fn tensor_like(
        slf: &Bound<'_, Self>,
        array: &Bound<'_, PyAny>,
        name: &str,
        uid: Option<i64>,
    ) -> PyResult<Py<PyTensor>> {
        let arg = TensorArg::extract(slf.py(), name, array)?;
        let mut t = Tensor::new(name, &arg.dims, &arg.strides).with_data_type(arg.data_type);
        if let Some(u) = uid {
            t = t.with_uid(u);
        }
        let id = slf.borrow_mut().mutate().tensor(t);
        Self::handle(slf, id)
    }

    /// A (1,1,1,1) f32 scalar passed by value (e.g. an attention scale).
    fn scalar(slf: &Bound<'_, Self>, name: &str, value: f64) -> PyResult<Py<PyTensor>> {
        let v = crate::functional::scale_f32(Some(value))?.unwrap_or(1.0);
        let id = slf
            .borrow_mut()
            .mutate()
            .tensor(Tensor::scalar_f32(name, v));
        Self::handle(slf, id)
    }

    /// Every tensor, in id order.
    #[getter]
    fn tensors(slf: &Bound<'_, Self>) -> PyResult<Vec<Py<PyTensor>>> {
        let ids: Vec<TensorId> = slf.borrow().graph.tensor_ids().collect();
        ids.into_iter().map(|id| Self::handle(slf, id)).collect()
    }

    /// An SDPA forward node; returns (O, Stats) (Stats None when `generate_stats` is false,
    /// or `is_inference` true). `max_total_seq_len_q/kv`: the tokens that packed (ragged)
    /// query and key/value tensors hold.
    #[pyo3(signature = (q, k, v, *, name=None, attn_scale=None, generate_stats=None,
                        is_inference=None, use_causal_mask=false,
                        use_causal_mask_bottom_right=false, diagonal_alignment=None,
                        left_bound=None, right_bound=None, bias=None, use_padding_mask=false,
                        seq_len_q=None, seq_len_kv=None, use_alibi_mask=false, sink=None,
                        max_total_seq_len_q=None, max_total_seq_len_kv=None))]
    #[allow(clippy::too_many_arguments)]
    fn sdpa(
        slf: &Bound<'_, Self>,
        q: &Bound<'_, PyTensor>,
        k: &Bound<'_, PyTensor>,
        v: &Bound<'_, PyTensor>,
        name: Option<String>,
        attn_scale: Option<&Bound<'_, PyAny>>,
        generate_stats: Option<bool>,
        is_inference: Option<bool>,
        use_causal_mask: bool,
        use_causal_mask_bottom_right: bool,
        diagonal_alignment: Option<&str>,
        left_bound: Option<i64>,
        right_bound: Option<i64>,
        bias: Option<&Bound<'_, PyTensor>>,
        use_padding_mask: bool,
        seq_len_q: Option<&Bound<'_, PyTensor>>,
        seq_len_kv: Option<&Bound<'_, PyTensor>>,
        use_alibi_mask: bool,
        sink: Option<&Bound<'_, PyTensor>>,
        max_total_seq_len_q: Option<i64>,
        max_total_seq_len_kv: Option<i64>,
    ) -> PyResult<(Py<PyTensor>, Option<Py<PyTensor>>)> {
        let stats = match (generate_stats, is_inference) {
            (Some(g), Some(i)) if g == i => {
                return Err(PyValueError::new_err(
                    "generate_stats and is_inference disagree",
                ))
            }
            (Some(g), _) => g,
            (None, Some(i)) => !i,
            (None, None) => true,
        };
        let mut c = common_of(
            slf,
            name,
            attn_scale,
            use_causal_mask,
            use_causal_mask_bottom_right,
            diagonal_alignment,
            left_bound,
            right_bound,
            bias,
            use_padding_mask,
            seq_len_q,
            seq_len_kv,
            use_alibi_mask,
            sink,
        )?;
        c.max_total = (max_total_seq_len_q, max_total_seq_len_kv);
        let mut attrs = common!(SdpaForwardAttrs::new(), &c);
        if stats {
            attrs = attrs.generate_stats();
        }
        let (q, k, v) = (
            Self::id_of(slf, q, "q")?,
            Self::id_of(slf, k, "k")?,
            Self::id_of(slf, v, "v")?,
        );
        let out = slf
            .borrow_mut()
            .mutate()
            .sdpa_forward(q, k, v, attrs)
            .map_err(|e| graph_error(slf.py(), e.to_string(), vec![e.to_string()]))?;
        Ok((
            Self::handle(slf, out.o)?,
            out.stats.map(|s| Self::handle(slf, s)).transpose()?,
        ))
    }

    /// An SDPA backward node; returns (dQ, dK, dV, dBias, dSink), the last two None unless
    /// `dBias` / `dSink` are true. `max_total_seq_len_q/kv` as for `sdpa`.
    #[pyo3(signature = (q, k, v, o, dO, stats, *, name=None, attn_scale=None,
                        use_causal_mask=false, use_causal_mask_bottom_right=false,
                        diagonal_alignment=None, left_bound=None, right_bound=None, bias=None,
                        dBias=false, use_padding_mask=false, seq_len_q=None, seq_len_kv=None,
                        use_alibi_mask=false, sink=None, dSink=false,
                        use_deterministic_algorithm=false, max_total_seq_len_q=None,
                        max_total_seq_len_kv=None))]
    #[allow(clippy::too_many_arguments, non_snake_case)]
    fn sdpa_backward(
        slf: &Bound<'_, Self>,
        q: &Bound<'_, PyTensor>,
        k: &Bound<'_, PyTensor>,
        v: &Bound<'_, PyTensor>,
        o: &Bound<'_, PyTensor>,
        dO: &Bound<'_, PyTensor>,
        stats: &Bound<'_, PyTensor>,
        name: Option<String>,
        attn_scale: Option<&Bound<'_, PyAny>>,
        use_causal_mask: bool,
        use_causal_mask_bottom_right: bool,
        diagonal_alignment: Option<&str>,
        left_bound: Option<i64>,
        right_bound: Option<i64>,
        bias: Option<&Bound<'_, PyTensor>>,
        dBias: bool,
        use_padding_mask: bool,
        seq_len_q: Option<&Bound<'_, PyTensor>>,
        seq_len_kv: Option<&Bound<'_, PyTensor>>,
        use_alibi_mask: bool,
        sink: Option<&Bound<'_, PyTensor>>,
        dSink: bool,
        use_deterministic_algorithm: bool,
        max_total_seq_len_q: Option<i64>,
        max_total_seq_len_kv: Option<i64>,
    ) -> PyResult<Vec<Option<Py<PyTensor>>>> {
        let mut c = common_of(
            slf,
            name,
            attn_scale,
            use_causal_mask,
            use_causal_mask_bottom_right,
            diagonal_alignment,
            left_bound,
            right_bound,
            bias,
            use_padding_mask,
            seq_len_q,
            seq_len_kv,
            use_alibi_mask,
            sink,
        )?;
        c.max_total = (max_total_seq_len_q, max_total_seq_len_kv);
        let mut attrs = common!(SdpaBackwardAttrs::new(), &c);
        if dBias {
            attrs = attrs.dbias();
        }
        if dSink {
            attrs = attrs.dsink();
        }
        if use_deterministic_algorithm {
            attrs = attrs.deterministic();
        }
        let ids = [
            Self::id_of(slf, q, "q")?,
            Self::id_of(slf, k, "k")?,
            Self::id_of(slf, v, "v")?,
            Self::id_of(slf, o, "o")?,
            Self::id_of(slf, dO, "dO")?,
            Self::id_of(slf, stats, "stats")?,
        ];
        let g = slf
            .borrow_mut()
            .mutate()
            .sdpa_backward(ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], attrs)
            .map_err(|e| graph_error(slf.py(), e.to_string(), vec![e.to_string()]))?;
        [Some(g.dq), Some(g.dk), Some(g.dv), g.dbias, g.dsink]
            .into_iter()
            .map(|id| id.map(|id| Self::handle(slf, id)).transpose())
            .collect()
    }

    /// Checks the structure; raises `GraphError` with every problem found.
    fn validate(&self, py: Python<'_>) -> PyResult<()> {
        self.graph.validate().map_err(|errors| {
            let lines: Vec<String> = errors.0.iter().map(ToString::to_string).collect();
            graph_error(
                py,
                format!("the graph is malformed:\n  {}", lines.join("\n  ")),
                lines,
            )
        })
    }

    /// The cuDNN frontend's name for [`Self::validate`].
    fn build_operation_graph(&self, py: Python<'_>) -> PyResult<()> {
        self.validate(py)
    }

    /// The support report on `target` ("auto": the GPU if there is one, else the CPU; "cpu";
    /// "cuda[:N]"; or a profile such as "rtx-5090", "h200"), with `free_memory` bytes free if
    /// given.
    #[pyo3(signature = (target="auto", free_memory=None))]
    fn check(&self, py: Python<'_>, target: &str, free_memory: Option<u64>) -> PyResult<Report> {
        let (target, _) = resolve_target(py, target, free_memory)?;
        Ok(Report {
            report: analyze(&self.graph, &target),
        })
    }

    /// Raises `UnsupportedGraph` (with the reasons) unless an engine supports every node on
    /// `target` — the engine of the place for "auto", "cpu" and "cuda[:N]".
    #[pyo3(signature = (target="auto", free_memory=None))]
    fn check_support(
        &self,
        py: Python<'_>,
        target: &str,
        free_memory: Option<u64>,
    ) -> PyResult<()> {
        let (t, place) = resolve_target(py, target, free_memory)?;
        let report = analyze(&self.graph, &t);
        let engine = place.map(engine_of);
        let ok = match engine {
            Some(e) => report.supports(e),
            None => !report.supported_engines().is_empty(),
        };
        if ok {
            return Ok(());
        }
        let rs = reasons(&report, engine);
        let lines: Vec<String> = rs.iter().map(Reason::line).collect();
        Err(unsupported(
            py,
            format!("not supported on {}:\n  {}", t.name, lines.join("\n  ")),
            rs,
        ))
    }

    /// The supported configurations on `target`, ranked per node (`mode` "a": fastest first,
    /// "b": smallest workspace, "fallback": fixed order), without `deselect`ed ones ("sm120/
    /// atomic"), only `pin`ned ones when given.
    #[pyo3(signature = (target="auto", mode="a", deselect=Vec::new(), pin=None, free_memory=None))]
    fn heuristics(
        &self,
        py: Python<'_>,
        target: &str,
        mode: &str,
        deselect: Vec<String>,
        pin: Option<String>,
        free_memory: Option<u64>,
    ) -> PyResult<Vec<Candidate>> {
        let (t, _) = resolve_target(py, target, free_memory)?;
        let report = analyze(&self.graph, &t);
        let (pin, deselect) = selectors(pin.as_deref(), &deselect)?;
        let options = HeuristicsOptions {
            mode: mode_of(mode)?,
            deselect,
            pin,
        };
        Ok(heuristics(&report, &options)
            .into_iter()
            .map(|candidate| Candidate { candidate })
            .collect())
    }

    /// The cuDNN frontend's `create_execution_plans([modes])`: the ranking of the first mode.
    #[pyo3(signature = (modes=vec!["a".to_owned()], target="auto"))]
    fn create_execution_plans(
        &self,
        py: Python<'_>,
        modes: Vec<String>,
        target: &str,
    ) -> PyResult<Vec<Candidate>> {
        let mode = modes.first().map_or("a", String::as_str);
        self.heuristics(py, target, mode, Vec::new(), None, None)
    }

    /// Builds the best plan of every node for `target` ("auto", "cpu" or "cuda[:N]": a place
    /// plans run on), ranking with `mode` and `pin` ("sm120/relay") as `heuristics` does.
    /// Raises `UnsupportedGraph` when a node has no supported configuration there.
    #[pyo3(signature = (target="auto", mode="a", pin=None, deselect=Vec::new()))]
    fn build_plans(
        &mut self,
        py: Python<'_>,
        target: &str,
        mode: &str,
        pin: Option<String>,
        deselect: Vec<String>,
    ) -> PyResult<()> {
        let (t, place) = resolve_target(py, target, None)?;
        let place = place.ok_or_else(|| {
            PyValueError::new_err(format!(
                "target: {target:?} is a profile for check and heuristics; build plans for \
                 'auto', 'cpu' or 'cuda[:N]'"
            ))
        })?;
        let engine = engine_of(place);
        let (pin, deselect) = selectors(pin.as_deref(), &deselect)?;
        let mut options = pinned(engine);
        options.mode = mode_of(mode)?;
        options.deselect = deselect;
        if let Some(p) = pin {
            if p.engine_kind() != engine {
                return Err(PyValueError::new_err(format!(
                    "pin: `{p}` is not a configuration of {engine}, the engine of {place}"
                )));
            }
            options.pin = Some(p);
        }
        let report: SupportReport = analyze(&self.graph, &t);
        let approved = report.approve_best(&options).map_err(|e| {
            let rs = reasons(&report, Some(engine));
            let lines: Vec<String> = rs.iter().map(Reason::line).collect();
            unsupported(py, format!("{e} on {place}:\n  {}", lines.join("\n  ")), rs)
        })?;
        let order = self
            .graph
            .topological_order()
            .map_err(|e| graph_error(py, e.to_string(), vec![e.to_string()]))?;
        let mut plans = Vec::new();
        for node in order {
            if let Some(a) = approved.iter().find(|a| a.node_id() == node) {
                plans.push(Runnable::build(py, a, place)?);
            }
        }
        let graph = approved.first().map_or_else(
            || Arc::new(self.graph.clone()),
            |a| Arc::clone(a.graph_arc()),
        );
        self.built = Some(Built {
            place,
            graph,
            plans,
        });
        Ok(())
    }

    /// Workspace bytes `execute` needs (the largest of the built plans').
    fn get_workspace_size(&self) -> PyResult<usize> {
        let built = self
            .built
            .as_ref()
            .ok_or_else(|| PyValueError::new_err("no plans: call build_plans() first"))?;
        Ok(built
            .plans
            .iter()
            .map(|p| p.plan().workspace_size())
            .max()
            .unwrap_or(0))
    }

    /// Runs the built plans (built first if there are none, for the place of the variant
    /// pack's tensors: "cpu" for host memory, "cuda:N") on `variant_pack`, a
    /// dict from tensors (rime.Tensor, name or uid) to torch tensors or numpy arrays with the
    /// declared type, dims and strides. Virtual tensors between nodes get temporaries.
    /// `workspace`: a contiguous torch tensor of at least `get_workspace_size()` bytes on the
    /// plans' device (allocated when not given). CUDA work goes to PyTorch's current stream.
    #[pyo3(signature = (variant_pack, workspace=None))]
    fn execute(
        slf: &Bound<'_, Self>,
        variant_pack: &Bound<'_, PyDict>,
        workspace: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let py = slf.py();
        if slf.borrow().built.is_none() {
            // Plans built here run where the caller's memory is: numpy arrays on the CPU engine
            // even on a machine with a GPU ("auto" would pick the GPU and refuse them).
            let target = match variant_pack.values().iter().next() {
                Some(v) => TensorArg::extract(py, "variant_pack", &v)?
                    .place
                    .to_string(),
                None => "auto".to_owned(),
            };
            slf.borrow_mut()
                .build_plans(py, &target, "a", None, Vec::new())?;
        }
        let this = slf.borrow();
        let built = this
            .built
            .as_ref()
            .ok_or_else(|| PyValueError::new_err("no plans"))?;
        let graph = &built.graph;
        let mut given: BTreeMap<TensorId, TensorArg> = BTreeMap::new();
        for (key, value) in variant_pack.iter() {
            let id = key_id(slf, graph, &key)?;
            let tensor = graph
                .get(id)
                .ok_or_else(|| PyValueError::new_err("dangling tensor"))?;
            let arg = TensorArg::extract(py, &tensor.name, &value)?;
            check_declared(py, graph, id, &arg)?;
            if given.insert(id, arg).is_some() {
                return Err(tensor_error(
                    py,
                    &tensor.name,
                    "is in the variant pack twice",
                ));
            }
        }
        let needed: Vec<TensorId> = built
            .plans
            .iter()
            .flat_map(|p| p.plan().tensors().all())
            .collect();
        if let Some((id, _)) = given.iter().find(|(id, _)| !needed.contains(id)) {
            let name = graph.get(*id).map_or_else(String::new, |t| t.name.clone());
            return Err(tensor_error(
                py,
                &name,
                "is not read or written by any node (passed by value, or not an operand)",
            ));
        }
        let mut temporaries: BTreeMap<TensorId, TensorArg> = BTreeMap::new();
        for &id in &needed {
            if given.contains_key(&id) || temporaries.contains_key(&id) {
                continue;
            }
            let t = graph
                .get(id)
                .ok_or_else(|| PyValueError::new_err("dangling tensor"))?;
            let like = given
                .values()
                .next()
                .ok_or_else(|| PyValueError::new_err("variant_pack: empty"))?;
            if !t.is_virtual {
                return Err(tensor_error(
                    py,
                    &t.name,
                    "has no tensor in the variant pack",
                ));
            }
            let data_type = graph
                .data_type(id)
                .ok_or_else(|| tensor_error(py, &t.name, "has no data type"))?;
            let temp = hooks::empty_strided(py, like, &t.name, &t.dims, &t.strides, data_type)?;
            temporaries.insert(id, temp);
        }
        let workspace = workspace
            .map(|w| WorkspaceArg::extract(py, w))
            .transpose()?;
        for plan in &built.plans {
            let bound: Vec<(TensorId, &TensorArg)> = plan
                .plan()
                .tensors()
                .all()
                .into_iter()
                .filter_map(|id| {
                    given
                        .get(&id)
                        .or_else(|| temporaries.get(&id))
                        .map(|a| (id, a))
                })
                .collect();
            plan.run(py, graph, &bound, workspace.as_ref())?;
        }
        Ok(())
    }

    /// The place the built plans run on ("cpu", "cuda:0"), or None before `build_plans`.
    #[getter]
    fn device(&self) -> Option<String> {
        self.built.as_ref().map(|b| b.place.to_string())
    }

    /// The graph as canonical JSON text (docs/json-format.md).
    fn to_json(&self) -> String {
        json::to_string(&self.graph)
    }

    /// Writes the graph's JSON to `path`.
    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        std::fs::write(&path, json::to_string(&self.graph))
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))
    }

    /// A graph from rime JSON text (`source` names it in errors).
    #[staticmethod]
    #[pyo3(signature = (text, source="<string>"))]
    fn from_json(py: Python<'_>, text: &str, source: &str) -> PyResult<Self> {
        json::from_str(text, source)
            .map(Self::new_graph)
            .map_err(|e| graph_error(py, e.to_string(), vec![e.to_string()]))
    }

    /// A graph from a JSON file: rime's format or a cuDNN frontend dump, told apart by the
    /// top-level keys (`format` is rime's, `json_version` the frontend's), as `rime` does;
    /// files above 256 MiB are refused, as `rime --max-graph-bytes` does by default.
    #[staticmethod]
    fn load(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        json::load_file_any(&path, json::DEFAULT_MAX_FILE_BYTES, None)
            .map(|loaded| Self::new_graph(loaded.graph))
            .map_err(|e| graph_error(py, e.to_string(), vec![e.to_string()]))
    }

    /// A graph from the JSON the cuDNN frontend writes (`graph.serialize()` / its dumps).
    #[staticmethod]
    #[pyo3(signature = (text, source="<string>"))]
    fn from_cudnn_json(py: Python<'_>, text: &str, source: &str) -> PyResult<Self> {
        json::cudnn::from_str(text, source)
            .map(Self::new_graph)
            .map_err(|e| graph_error(py, e.to_string(), vec![e.to_string()]))
    }

    fn __repr__(&self) -> String {
        format!(
            "<rime.Graph {} tensors, {} nodes{}>",
            self.graph.tensors().len(),
            self.graph.nodes().len(),
            self.built
                .as_ref()
                .map_or_else(String::new, |b| format!(", plans on {}", b.place))
        )
    }
}

/// The graph tensor a variant-pack key names: a `rime.Tensor` of this graph, a name, or a uid.
fn key_id(slf: &Bound<'_, PyGraph>, graph: &Graph, key: &Bound<'_, PyAny>) -> PyResult<TensorId> {
    if let Ok(t) = key.cast::<PyTensor>() {
        return PyGraph::id_of(slf, t, "variant_pack key");
    }
    if let Ok(name) = key.cast::<PyString>() {
        let name = name.to_cow()?;
        return graph.find(&name).ok_or_else(|| {
            PyValueError::new_err(format!("variant_pack: no tensor named {name:?}"))
        });
    }
    if let Ok(uid) = key.cast::<PyInt>() {
        let uid: i64 = uid.extract()?;
        return graph.find_uid(uid).ok_or_else(|| {
            PyValueError::new_err(format!("variant_pack: no tensor with uid {uid}"))
        });
    }
    Err(PyTypeError::new_err(
        "variant_pack: keys are rime.Tensor objects, names or uids",
    ))
}

/// Refuses a tensor whose type, dims or strides (of dims larger than 1) differ from the graph
/// tensor's. A ragged tensor's buffer holds its packed tokens, so only its type is compared:
/// any tensor of that type may hold them (a (T, H, D) one, say), and the engine checks the
/// offsets against the buffer's extent before it runs.
fn check_declared(py: Python<'_>, graph: &Graph, id: TensorId, arg: &TensorArg) -> PyResult<()> {
    let Some(t) = graph.get(id) else {
        return Err(PyValueError::new_err("dangling tensor"));
    };
    if let Some(declared) = graph.data_type(id) {
        if declared != arg.data_type {
            return Err(tensor_error(
                py,
                &t.name,
                format!("is {}, the graph declares {declared}", arg.data_type),
            ));
        }
    }
    if t.ragged_offset.is_some() {
        return Ok(());
    }
    let strides_agree = t.dims.len() == arg.strides.len()
        && t.dims
            .iter()
            .zip(t.strides.iter().zip(&arg.strides))
            .all(|(&d, (a, b))| d <= 1 || a == b);
    if t.dims != arg.dims || !strides_agree {
        return Err(tensor_error(
            py,
            &t.name,
            format!(
                "has dims {:?} strides {:?}; the graph declares dims {:?} strides {:?}",
                arg.dims, arg.strides, t.dims, t.strides
            ),
        ));
    }
    Ok(())
}

impl PyTensor {
    fn read<T>(&self, py: Python<'_>, f: impl FnOnce(&Graph, &Tensor) -> T) -> PyResult<T> {
        let g = self.graph.bind(py).borrow();
        let t = g
            .graph
            .get(self.id)
            .ok_or_else(|| PyValueError::new_err("dangling tensor"))?;
        Ok(f(&g.graph, t))
    }

    fn write(slf: &Bound<'_, Self>, f: impl FnOnce(&mut Tensor)) -> PyResult<Py<PyTensor>> {
        let this = slf.get();
        let mut g = this.graph.bind(slf.py()).borrow_mut();
        let t = g
            .mutate()
            .get_mut(this.id)
            .ok_or_else(|| PyValueError::new_err("dangling tensor"))?;
        f(t);
        Ok(slf.clone().unbind())
    }
}

#[pymethods]
impl PyTensor {
    /// Name.
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        self.read(py, |_, t| t.name.clone())
    }

    /// Logical dims.
    #[getter]
    fn dim(&self, py: Python<'_>) -> PyResult<Vec<i64>> {
        self.read(py, |_, t| t.dims.clone())
    }

    /// Strides in elements.
    #[getter]
    fn stride(&self, py: Python<'_>) -> PyResult<Vec<i64>> {
        self.read(py, |_, t| t.strides.clone())
    }

    /// The effective data type's name ("bf16", "f32", ...), None when neither the tensor nor
    /// the graph sets one.
    #[getter]
    fn data_type(&self, py: Python<'_>) -> PyResult<Option<&'static str>> {
        self.read(py, |g, _| g.data_type(self.id).map(DataType::name))
    }

    /// The user id (variant-pack key), if set.
    #[getter]
    fn uid(&self, py: Python<'_>) -> PyResult<Option<i64>> {
        self.read(py, |_, t| t.uid)
    }

    /// True for a virtual (engine-internal) tensor.
    #[getter]
    fn is_virtual(&self, py: Python<'_>) -> PyResult<bool> {
        self.read(py, |_, t| t.is_virtual)
    }

    /// Sets the name; returns the tensor.
    fn set_name(slf: &Bound<'_, Self>, name: String) -> PyResult<Py<PyTensor>> {
        Self::write(slf, |t| t.name = name)
    }

    /// Sets the dims; returns the tensor.
    fn set_dim(slf: &Bound<'_, Self>, dim: Vec<i64>) -> PyResult<Py<PyTensor>> {
        Self::write(slf, |t| t.dims = dim)
    }

    /// Sets the strides (elements); returns the tensor.
    fn set_stride(slf: &Bound<'_, Self>, stride: Vec<i64>) -> PyResult<Py<PyTensor>> {
        Self::write(slf, |t| t.strides = stride)
    }

    /// Sets the data type; returns the tensor.
    fn set_data_type(
        slf: &Bound<'_, Self>,
        data_type: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyTensor>> {
        let d = data_type_arg(slf.py(), "data_type", data_type)?;
        Self::write(slf, |t| t.data_type = Some(d))
    }

    /// Sets the user id; returns the tensor.
    fn set_uid(slf: &Bound<'_, Self>, uid: i64) -> PyResult<Py<PyTensor>> {
        Self::write(slf, |t| t.uid = Some(uid))
    }

    /// `set_output(True)` makes the tensor a graph output (non-virtual, given a buffer);
    /// `False` makes it virtual. Returns the tensor.
    fn set_output(slf: &Bound<'_, Self>, is_output: bool) -> PyResult<Py<PyTensor>> {
        Self::write(slf, |t| t.is_virtual = !is_output)
    }

    /// Sets the ragged offset (the cuDNN frontend's `set_ragged_offset`): a (B + 1, 1, 1, 1)
    /// integer tensor of the same graph whose entry b is the element where batch b's tokens
    /// start (packed THD layouts). Returns the tensor.
    fn set_ragged_offset(
        slf: &Bound<'_, Self>,
        ragged_offset: &Bound<'_, PyTensor>,
    ) -> PyResult<Py<PyTensor>> {
        let graph = slf.get().graph.bind(slf.py()).clone();
        let offsets = PyGraph::id_of(&graph, ragged_offset, "ragged_offset")?;
        Self::write(slf, |t| t.ragged_offset = Some(offsets))
    }

    /// The ragged offset tensor, if set.
    #[getter]
    fn ragged_offset(slf: &Bound<'_, Self>) -> PyResult<Option<Py<PyTensor>>> {
        let py = slf.py();
        let id = slf.get().read(py, |_, t| t.ragged_offset)?;
        let graph = slf.get().graph.bind(py).clone();
        id.map(|id| PyGraph::handle(&graph, id)).transpose()
    }

    /// Marks the tensor virtual or not; returns the tensor.
    fn set_is_virtual(slf: &Bound<'_, Self>, is_virtual: bool) -> PyResult<Py<PyTensor>> {
        Self::write(slf, |t| t.is_virtual = is_virtual)
    }

    fn __hash__(&self, py: Python<'_>) -> u64 {
        let graph = self.graph.bind(py).as_ptr() as usize as u64;
        graph.rotate_left(17) ^ self.id.index() as u64
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyTensor>()
            .is_ok_and(|o| o.get().graph.as_ptr() == self.graph.as_ptr() && o.get().id == self.id)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        self.read(py, |g, t| {
            format!(
                "<rime.Tensor {:?} dim={:?} stride={:?} {}{}>",
                t.name,
                t.dims,
                t.strides,
                g.data_type(self.id).map_or("untyped", DataType::name),
                if t.is_virtual { " virtual" } else { "" }
            )
        })
    }
}

/// Registers the Graph API classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGraph>()?;
    m.add_class::<PyTensor>()?;
    m.add_class::<Report>()?;
    m.add_class::<Candidate>()?;
    Ok(())
}

/// The `pin` and `deselect` arguments as selectors; a ValueError naming the argument for a
/// name that selects nothing (it would keep nothing or drop nothing without a word).
fn selectors(
    pin: Option<&str>,
    deselect: &[String],
) -> PyResult<(Option<Selector>, Vec<Selector>)> {
    let parse = |arg: &str, text: &str| {
        text.parse::<Selector>()
            .map_err(|e| PyValueError::new_err(format!("{arg}: {e}")))
    };
    let pin = pin.map(|p| parse("pin", p)).transpose()?;
    let deselect = deselect.iter().map(|d| parse("deselect", d));
    Ok((pin, deselect.collect::<PyResult<_>>()?))
}
