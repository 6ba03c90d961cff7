//! An MCP server written for the tests with `rmcp` (a real server, not a double: it speaks
//! MCP over stdio or streamable HTTP exactly as any server would). Its tools:
//!
//! - `lookup` (annotated read-only): answers `found: <query>`; the query `fail` makes it
//!   answer a JSON-RPC error, `tool-error` a tool result marked as an error.
//! - `delete_item` (annotated destructive): answers `deleted <id>`.
//! - `whoami`: answers the token it was given (the `MCP_TEST_TOKEN` variable over stdio, the
//!   `Authorization` header over HTTP): a server that leaks its token, for redaction tests.
//! - `add_tool`: adds the tool `extra` and sends `notifications/tools/list_changed`.
//! - `crash` (stdio): the process exits at once, mid-call.
//!
//! Over stdio it is the `mcp-test-server` binary (see [`crate::binaries::mcp_test_server`]);
//! over HTTP, [`HttpMcpServer`] serves it in the test process and records the headers each
//! request carried.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

/// Headers the HTTP server saw, one entry per request: `(name, value)` pairs.
pub type SeenHeaders = Arc<Mutex<Vec<Vec<(String, String)>>>>;

/// The test server's tools and what it saw.
#[derive(Clone, Default)]
pub struct TestMcpServer {
    extra: Arc<Mutex<bool>>,
    /// The token the server was given (stdio: from its environment).
    token: Option<String>,
}

fn schema(properties: &Value, required: &[&str]) -> Arc<serde_json::Map<String, Value>> {
    let value = json!({"type": "object", "properties": properties, "required": required});
    Arc::new(value.as_object().cloned().unwrap_or_default())
}

impl TestMcpServer {
    /// The stdio server: its token (if any) from `MCP_TEST_TOKEN`.
    pub fn from_env() -> Self {
        Self {
            extra: Arc::default(),
            token: std::env::var("MCP_TEST_TOKEN").ok(),
        }
    }

    fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![
            Tool::new(
                "lookup",
                "Looks an entry up (reads only).",
                schema(&json!({"query": {"type": "string"}}), &["query"]),
            )
            .with_annotations(ToolAnnotations::new().read_only(true)),
            Tool::new(
                "delete_item",
                "Deletes an entry for good.",
                schema(&json!({"id": {"type": "string"}}), &["id"]),
            )
            .with_annotations(ToolAnnotations::new().read_only(false).destructive(true)),
            Tool::new(
                "whoami",
                "Says which token it was given.",
                schema(&json!({}), &[]),
            ),
            Tool::new(
                "add_tool",
                "Adds the tool `extra` and announces the change.",
                schema(&json!({}), &[]),
            ),
            Tool::new(
                "crash",
                "Exits the server process.",
                schema(&json!({}), &[]),
            ),
        ];
        if *self.extra.lock().unwrap_or_else(PoisonError::into_inner) {
            tools.push(Tool::new(
                "extra",
                "Appeared later.",
                schema(&json!({}), &[]),
            ));
        }
        tools
    }
}

fn text(value: impl Into<String>) -> CallToolResponse {
    CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(value)]))
}

impl ServerHandler for TestMcpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("paddock-mcp-test-server", "1"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.clone().unwrap_or_default();
        let arg = |name: &str| {
            args.get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        match request.name.as_ref() {
            "lookup" => match arg("query").as_str() {
                "fail" => Err(ErrorData::internal_error("the index is unavailable", None)),
                "tool-error" => Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                    ContentBlock::text("no entry matches"),
                ]))),
                query => Ok(text(format!("found: {query}"))),
            },
            "delete_item" => Ok(text(format!("deleted {}", arg("id")))),
            "whoami" => {
                let header = context
                    .extensions
                    .get::<http::request::Parts>()
                    .and_then(|p| p.headers.get(http::header::AUTHORIZATION))
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                Ok(text(format!(
                    "token: {}",
                    header.or_else(|| self.token.clone()).unwrap_or_default()
                )))
            }
            "add_tool" => {
                *self.extra.lock().unwrap_or_else(PoisonError::into_inner) = true;
                let _ = context.peer.notify_tool_list_changed().await;
                Ok(text("added"))
            }
            "extra" => Ok(text("extra ran")),
            "crash" => std::process::exit(3),
            other => Err(ErrorData::invalid_params(
                format!("no tool `{other}`"),
                None,
            )),
        }
    }
}

/// Serves [`TestMcpServer`] over stdin and stdout until the client goes.
pub async fn serve_stdio() -> std::io::Result<()> {
    use rmcp::ServiceExt;
    let service = TestMcpServer::from_env()
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    service.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// [`TestMcpServer`] over streamable HTTP on 127.0.0.1 (one server state for every session).
pub struct HttpMcpServer {
    addr: SocketAddr,
    headers: SeenHeaders,
    stop: tokio_util::sync::CancellationToken,
}

impl HttpMcpServer {
    pub async fn start() -> std::io::Result<Self> {
        use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService,
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let stop = tokio_util::sync::CancellationToken::new();
        let state = TestMcpServer::default();
        let service = StreamableHttpService::new(
            move || Ok(state.clone()),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token()),
        );
        let headers: SeenHeaders = Arc::default();
        let seen = Arc::clone(&headers);
        let stopping = stop.clone();
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    () = stopping.cancelled() => return,
                    accepted = listener.accept() => accepted,
                };
                let Ok((stream, _)) = accepted else { continue };
                let service = service.clone();
                let seen = Arc::clone(&seen);
                let recording = hyper::service::service_fn(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        let pairs = request
                            .headers()
                            .iter()
                            .map(|(n, v)| {
                                (n.to_string(), String::from_utf8_lossy(v.as_bytes()).into())
                            })
                            .collect();
                        seen.lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(pairs);
                        let mut service = service.clone();
                        async move { tower_service::Service::call(&mut service, request).await }
                    },
                );
                tokio::spawn(async move {
                    let _ = hyper_util::server::conn::auto::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), recording)
                    .await;
                });
            }
        });
        Ok(Self {
            addr,
            headers,
            stop,
        })
    }

    /// The MCP endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The headers of every request so far.
    pub fn headers(&self) -> Vec<Vec<(String, String)>> {
        self.headers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for HttpMcpServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
