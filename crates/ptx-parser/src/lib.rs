//! PTX front end: see `ast` for the tree. The parser itself is being written (issue 2).
pub mod ast;
