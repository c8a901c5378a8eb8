//! The MCP server's tools called in process: descriptions and schemas, page walks, failures and hostile stores.
//!
//! One test binary for the whole directory: each file is a module here, so the crate's
//! integration tests are compiled and linked once instead of once per file.

mod failures;
mod hostile;
mod paging;
mod tools;
