//! The language server driven in-process over an in-memory duplex, speaking
//! the protocol byte for byte as an editor would. One test binary, a module
//! per area.

mod diagnostics;
mod edits;
mod navigation;
mod positions;
mod runs;
mod session;
mod tokens;
