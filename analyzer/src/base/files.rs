//! Which file something is in: a bundle's files by index, and the kinds of
//! file a bundle has.

/// Index of a file in the analysed bundle's file list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(pub u32);

/// The bundle files mzk reads, in the reference's load order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileKind {
    Orchestrator,
    Agents,
    TransitionGraph,
    ContextVariables,
    StructuredOutputs,
    Middleware,
    A2a,
    Tools,
    UiConfig,
    TaskBatches,
}

pub const FILE_KINDS: &[FileKind] = &[
    FileKind::Orchestrator,
    FileKind::Agents,
    FileKind::TransitionGraph,
    FileKind::ContextVariables,
    FileKind::StructuredOutputs,
    FileKind::Middleware,
    FileKind::A2a,
    FileKind::Tools,
    FileKind::UiConfig,
    FileKind::TaskBatches,
];

impl FileKind {
    /// Path relative to the bundle folder.
    pub fn path(self) -> &'static str {
        match self {
            FileKind::Orchestrator => "orchestrator.yaml",
            FileKind::Agents => "agents.yaml",
            FileKind::TransitionGraph => "transition_graph.yaml",
            FileKind::ContextVariables => "context_variables.yaml",
            FileKind::StructuredOutputs => "structured_outputs.yaml",
            FileKind::Middleware => "middleware.yaml",
            FileKind::A2a => "a2a.yaml",
            FileKind::Tools => "tools.yaml",
            FileKind::UiConfig => "ui_config.yaml",
            FileKind::TaskBatches => "extended_orchestration/task_batches.yaml",
        }
    }

    pub fn from_path(relative: &str) -> Option<FileKind> {
        let normalized = relative.replace('\\', "/");
        FILE_KINDS.iter().copied().find(|k| k.path() == normalized)
    }
}
