//! The MCP test server over stdio (see `test_support::mcp_server`).

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    test_support::mcp_server::serve_stdio().await
}
