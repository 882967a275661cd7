//! What the server does for each message (the dispatch in `dispatch.rs`
//! calls these, guarded against panics).

pub(crate) mod command;
pub(crate) mod document;
pub(crate) mod notification;
pub(crate) mod request;
