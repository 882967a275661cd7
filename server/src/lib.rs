//! mzk's outer layer: the only code that knows terminal formats (and, later,
//! LSP types). Everything it shows is computed by `mzk-analyzer`.

pub mod cli;
pub mod lsp;
