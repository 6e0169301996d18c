//! reins-mcp against MCP programs nobody here wrote: `mcp-server-time` (PyPI) and
//! `@modelcontextprotocol/server-everything` (npm, over stdio and streamable HTTP) as servers,
//! `@modelcontextprotocol/server-filesystem` (npm) behind an approval hook, and the MCP
//! Inspector's CLI mode (npm) as a client of reins-served tools. `scripts/install/mcp.sh`
//! installs them; a test whose program is missing fails saying how to install it. Servers that
//! must misbehave on purpose are small fixtures on the MCP TypeScript SDK (`fixtures/`).

mod agent;
mod answer_ids;
mod answers_naming_secrets;
mod cancellation;
mod everything;
mod faults;
mod filesystem;
mod hostile;
mod hostile_batches;
mod hostile_bounds;
mod hostile_handshake;
mod hostile_http;
mod hostile_http_failures;
mod hostile_sessions;
mod hostile_unreadable;
mod http;
mod http_redirects;
mod listing;
mod notifications;
mod null_ids;
mod output_schema;
mod serve;
mod serve_calls;
mod serve_hosts;
mod serve_limits;
mod serve_peers;
mod serve_stdio;
mod servers;
mod sources;
mod time;
mod tools_quoting_secrets;
mod traced_secrets;
