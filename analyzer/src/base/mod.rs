//! The ground floor: what every layer names and nothing here depends on —
//! where text is (`TextRange`, `FileId`, `FileKind`), how much a finding
//! matters (`Severity`), the file system the analysis reads through, the
//! limits on input, hashing and the bounded memos.

mod files;
pub mod fs;
pub mod hash;
pub mod limits;
pub mod memo;
#[cfg(test)]
pub(crate) mod quiet_panic;
#[cfg(test)]
pub(crate) mod seeded;
mod severity;
mod text;

pub use files::{FileId, FileKind, FILE_KINDS};
pub use severity::Severity;
pub use text::TextRange;
