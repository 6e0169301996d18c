//! reins-mcp against MCP servers nobody here wrote: `mcp-server-time` (PyPI) and
//! `@modelcontextprotocol/server-everything` (npm), both started over stdio.
//! `scripts/test.sh` installs them; a test whose server is missing fails saying how to
//! install it.

mod agent;
mod everything;
mod faults;
mod http;
mod servers;
mod time;
