//! The rmcp `ServerHandler` of `tgms serve`: lists the catalog and forwards every call to
//! the [`Backend`] on tokio's blocking pool, so calls run in parallel on snapshots and the
//! protocol tasks never wait on an operator.
//!
//! Results: `structuredContent` is the envelope (or the error payload with `isError:
//! true`) and `content` is one text item holding its canonical JSON — not the SDK's
//! `CallToolResult::structured`, whose text is serde_json's rendering.

use super::backend::Backend;
use super::catalog;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use std::sync::Arc;
use tgms_engine::canon;

/// The handler; cheap to clone (one per HTTP session, all sharing the backend).
#[derive(Clone)]
pub struct Handler {
    backend: Arc<Backend>,
    tools: Arc<Vec<Tool>>,
    resources: Arc<Vec<Resource>>,
    templates: Arc<Vec<ResourceTemplate>>,
}

fn typed<T: serde::de::DeserializeOwned>(v: Vec<Value>) -> Vec<T> {
    // The catalog is generated from the registry; a definition the SDK's types reject is a
    // bug caught by the tests, so such an entry is left out rather than served malformed.
    v.into_iter()
        .filter_map(|x| match serde_json::from_value(x) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("tgms serve: catalog entry rejected by the MCP types: {e}");
                None
            }
        })
        .collect()
}

impl Handler {
    /// A handler over `backend`, with the tool, resource and template catalogs built once
    /// (the `ask` tool only when the backend offers it).
    pub fn new(backend: Arc<Backend>) -> Handler {
        Handler {
            backend: backend.clone(),
            tools: Arc::new(typed(catalog::tools_json(backend.offers_ask()))),
            resources: Arc::new(typed(catalog::resources_json())),
            templates: Arc::new(typed(catalog::resource_templates_json())),
        }
    }
}

/// The instructions sent to clients at initialization / discovery.
const INSTRUCTIONS: &str = "tgms: a bi-temporal temporal-graph store. Read the tgms://dataset-card \
resource (or call dataset_card) first: it states the extent and explains the two clocks (valid time \
and transaction time, both integer microseconds UTC). Each operator tool takes the operator's real \
arguments and returns an envelope whose result_digest, truncation flags and certificates say how \
complete it is. For multi-step questions write a plan (tgms://manual), check it with validate_plan, \
run it with run_plan, and check your answer's claims with verify_answer: only claims the trace \
supports survive. The server never writes to the store.";

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("tgms", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !self.backend.has_tool(&name) {
            return Err(McpError::invalid_params(
                format!("unknown tool '{name}': tools/list names every tool of this server"),
                None,
            ));
        }
        let args = request.arguments.map(Value::Object);
        let backend = self.backend.clone();
        let done = tokio::task::spawn_blocking(move || backend.call(&name, args)).await;
        let outcome = match done {
            Ok(Some(o)) => o,
            Ok(None) => return Err(McpError::invalid_params("unknown tool", None)),
            // A panic in an operator is a bug; the caller gets a tool error, the server lives.
            Err(e) => super::backend::Outcome {
                value: serde_json::json!({"error": "E_INTERNAL",
                    "message": format!("the tool call failed inside the server: {e}"), "details": {}}),
                is_error: true,
            },
        };
        let text = canon::to_string(&outcome.value);
        let mut r = if outcome.is_error {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        r.structured_content = Some(outcome.value);
        Ok(r.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(self.resources.to_vec()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(
            self.templates.to_vec(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.clone();
        let backend = self.backend.clone();
        let read = tokio::task::spawn_blocking(move || backend.read_resource(&uri))
            .await
            .map_err(|e| McpError::internal_error(format!("resource read failed: {e}"), None))?;
        match read {
            Ok(r) => {
                let contents = ResourceContents::TextResourceContents {
                    uri: request.uri,
                    mime_type: Some(r.mime_type.into()),
                    text: r.text,
                    meta: None,
                };
                Ok(ReadResourceResult::new(vec![contents]).into())
            }
            Err(m) => Err(McpError::resource_not_found(
                m,
                Some(serde_json::json!({"uri": request.uri})),
            )),
        }
    }
}
