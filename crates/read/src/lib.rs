//! How a Pi session file is read, in one place: the safe open, the capped line reader, the
//! exact JSON tokenizer, the repairs Pi's own decoding makes (lone surrogates, invalid
//! UTF-8), positional reads, and the rule for which text in an entry is searchable.
//!
//! Every crate that reads session bodies (`transcript`, `search`, `stats`, `failures`) asks
//! this crate, so two commands cannot disagree about what a file says.

#![deny(missing_docs)]

pub mod json;
pub mod searchable;
