//! Machine-readable reports: `rime check --json` ([`ReportDoc`], schema
//! `schemas/report.v1.schema.json`) and `rime heuristics --json` ([`RankingDoc`], schema
//! `schemas/ranking.v1.schema.json`).

use schemars::JsonSchema;
use serde::Serialize;

use crate::heuristics::Candidate;
use crate::{HeuristicsMode, Rejection, Subject, SupportReport, Target};

/// Format tag of the JSON report.
pub const FORMAT: &str = "rime.report";
/// Format tag of the JSON ranking (`rime heuristics --json`).
pub const RANKING_FORMAT: &str = "rime.ranking";
/// Version of the JSON report format.
pub const VERSION: u32 = 1;

/// A support report as JSON.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReportDoc {
    /// Always `rime.report`.
    pub format: String,
    /// Always 1.
    pub version: u32,
    /// The target.
    pub target: TargetDoc,
    /// Engines that support every node.
    pub supported_engines: Vec<String>,
    /// Structural rejections blocking every node.
    pub graph_rejections: Vec<RejectionDoc>,
    /// Per node.
    pub nodes: Vec<NodeDoc>,
}

/// A target as JSON.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TargetDoc {
    /// Profile name.
    pub name: String,
    /// Compute capability (e.g. 120), absent for the CPU.
    pub sm: Option<u32>,
    /// Shared memory per block, bytes.
    pub smem_per_block: u64,
    /// Total memory, bytes.
    pub memory_bytes: u64,
    /// Free memory, bytes.
    pub free_memory_bytes: u64,
    /// Whether free memory was measured (else assumed).
    pub free_memory_measured: bool,
}

/// A node as JSON.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct NodeDoc {
    /// Node name.
    pub name: String,
    /// `SDPA_FWD` or `SDPA_BWD`.
    pub op: String,
    /// The shape, when Q, K and V are rank 4.
    pub shape: Option<rime_graph::SdpaShape>,
    /// Rejections for every engine.
    pub rejections: Vec<RejectionDoc>,
    /// Per configuration.
    pub configs: Vec<ConfigDoc>,
}

/// A configuration as JSON.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ConfigDoc {
    /// `cpu_reference` or `sm120`.
    pub engine: String,
    /// `atomic`, `relay`, `two_kernel`, or absent.
    pub route: Option<String>,
    /// Main kernel name.
    pub kernel: Option<String>,
    /// dQ GEMM kernel name.
    pub dq_kernel: Option<String>,
    /// `supported`, `rejected` or `blocked`.
    pub verdict: String,
    /// Exact workspace, when sized.
    pub workspace: Option<WorkspaceDoc>,
    /// The configuration's own rejections.
    pub rejections: Vec<RejectionDoc>,
}

/// A workspace layout as JSON.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WorkspaceDoc {
    /// Total bytes.
    pub total_bytes: u64,
    /// Regions in offset order.
    pub regions: Vec<RegionDoc>,
}

/// A workspace region as JSON.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RegionDoc {
    /// Region name.
    pub name: String,
    /// Offset, bytes (256-aligned).
    pub offset: u64,
    /// Size, bytes.
    pub bytes: u64,
    /// Must be zeroed before the main kernel.
    pub needs_zero: bool,
}

/// A rejection as JSON.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RejectionDoc {
    /// Stable reason code.
    pub code: String,
    /// The subject, as text.
    pub subject: String,
    /// Node name, when the subject is a node or port.
    pub node: Option<String>,
    /// Port name, when the subject is a port.
    pub port: Option<String>,
    /// Tensor name, when known.
    pub tensor: Option<String>,
    /// Specifics.
    pub message: String,
    /// The limit's name, when a limit is involved.
    pub limit: Option<String>,
    /// The value requested.
    pub requested: Option<String>,
    /// The values allowed.
    pub allowed: Option<String>,
    /// What to do.
    pub hint: String,
}

/// A heuristics ranking as JSON.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RankingDoc {
    /// Always `rime.ranking`.
    pub format: String,
    /// Always 1.
    pub version: u32,
    /// The target.
    pub target: TargetDoc,
    /// `a`, `b` or `fallback`.
    pub mode: String,
    /// Candidates, per node in node order, best first.
    pub candidates: Vec<CandidateDoc>,
}

/// A ranked candidate as JSON.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CandidateDoc {
    /// Node name.
    pub node: String,
    /// 1-based rank within the node.
    pub rank: usize,
    /// `engine` or `engine/route`.
    pub config: String,
    /// Main kernel name.
    pub kernel: Option<String>,
    /// Workspace bytes.
    pub workspace_bytes: u64,
    /// Estimated seconds.
    pub estimated_seconds: f64,
    /// One-line explanation.
    pub explanation: String,
}

impl From<&Rejection> for RejectionDoc {
    fn from(r: &Rejection) -> Self {
        let (node, port, tensor) = match &r.subject {
            Subject::Port { node, port, tensor } => (
                Some(node.clone()),
                Some(port.name().to_owned()),
                tensor.clone(),
            ),
            Subject::Node { node } => (Some(node.clone()), None, None),
            Subject::Tensor { tensor } => (None, None, Some(tensor.clone())),
            Subject::Graph | Subject::Target { .. } => (None, None, None),
        };
        RejectionDoc {
            code: r.code.code().to_owned(),
            subject: r.subject.to_string(),
            node,
            port,
            tensor,
            message: r.message.clone(),
            limit: r.limit.as_ref().map(|l| l.name.clone()),
            requested: r.limit.as_ref().map(|l| l.requested.clone()),
            allowed: r.limit.as_ref().map(|l| l.allowed.clone()),
            hint: r.hint.clone(),
        }
    }
}

/// The report as a JSON document.
pub fn report_doc(report: &SupportReport) -> ReportDoc {
    let docs = |list: &[Rejection]| list.iter().map(RejectionDoc::from).collect::<Vec<_>>();
    ReportDoc {
        format: FORMAT.to_owned(),
        version: VERSION,
        target: target_doc(report.target()),
        supported_engines: report
            .supported_engines()
            .iter()
            .map(|e| e.name().to_owned())
            .collect(),
        graph_rejections: docs(&report.graph_rejections),
        nodes: report
            .nodes
            .iter()
            .map(|n| NodeDoc {
                name: n.name.clone(),
                op: n.op.tag().to_owned(),
                shape: n.shape,
                rejections: docs(&n.rejections),
                configs: n
                    .configs
                    .iter()
                    .map(|c| ConfigDoc {
                        engine: c.engine.name().to_owned(),
                        route: c.route.map(|r| r.name().to_owned()),
                        kernel: c.kernel.map(|k| k.name.to_owned()),
                        dq_kernel: c.dq_kernel.map(|k| k.name.to_owned()),
                        verdict: c.verdict.name().to_owned(),
                        workspace: c.workspace.as_ref().map(|w| WorkspaceDoc {
                            total_bytes: w.total_bytes(),
                            regions: w
                                .regions()
                                .iter()
                                .map(|r| RegionDoc {
                                    name: r.kind.name().to_owned(),
                                    offset: r.offset,
                                    bytes: r.bytes,
                                    needs_zero: r.kind.needs_zero(),
                                })
                                .collect(),
                        }),
                        rejections: docs(&c.rejections),
                    })
                    .collect(),
            })
            .collect(),
    }
}

fn target_doc(t: &Target) -> TargetDoc {
    TargetDoc {
        name: t.name.clone(),
        sm: t.sm(),
        smem_per_block: t.smem_per_block,
        memory_bytes: t.memory_bytes,
        free_memory_bytes: t.free_memory_bytes,
        free_memory_measured: t.free_memory_measured,
    }
}

/// A ranking as a JSON document.
pub fn ranking_doc(
    report: &SupportReport,
    mode: HeuristicsMode,
    candidates: &[Candidate],
) -> RankingDoc {
    RankingDoc {
        format: RANKING_FORMAT.to_owned(),
        version: VERSION,
        target: target_doc(report.target()),
        mode: mode.name().to_owned(),
        candidates: candidates
            .iter()
            .map(|c| CandidateDoc {
                node: c.node_name.clone(),
                rank: c.rank,
                config: c.config.label(),
                kernel: c.config.kernel.map(|k| k.name.to_owned()),
                workspace_bytes: c.config.workspace.total_bytes(),
                estimated_seconds: c.estimate.seconds,
                explanation: c.explanation.clone(),
            })
            .collect(),
    }
}

/// The JSON schema of [`ReportDoc`], pretty-printed (committed as
/// `schemas/report.v1.schema.json`).
pub fn report_schema() -> String {
    let schema = schemars::schema_for!(ReportDoc);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}

/// The JSON schema of [`RankingDoc`], pretty-printed (committed as
/// `schemas/ranking.v1.schema.json`).
pub fn ranking_schema() -> String {
    let schema = schemars::schema_for!(RankingDoc);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    #[test]
    fn report_schema_is_fresh() {
        crate::generated::assert_fresh("schemas/report.v1.schema.json", &super::report_schema());
        crate::generated::assert_fresh("schemas/ranking.v1.schema.json", &super::ranking_schema());
    }
}
