//! `tgms serve`: the Model Context Protocol server (agent-surface §9), on the official Rust
//! SDK (`rmcp`). Every operator is a tool generated from the registry; six plan-level tools
//! and four resources carry the verifier; there are no write tools.
//!
//! - [`backend`]: the store view, result store and every tool as JSON in, JSON out.
//! - [`catalog`]: the tool, resource and template definitions.
//! - [`handler`]: the rmcp `ServerHandler` over the backend.
//! - [`card`]: the dataset card and the two-clocks text.
//!
//! Transports: stdio (default; stdout carries only the protocol, logs go to stderr) or
//! streamable HTTP (`--http ADDR`, at `/mcp`). The SDK negotiates every revision it knows:
//! the `initialize` handshake (2025-03-26 … 2025-11-25) and the 2026-07-28 revision
//! (`server/discover`, per-request `_meta`).

pub mod backend;
pub mod card;
pub mod catalog;
pub mod handler;

use backend::{Backend, BackendOptions};
use handler::Handler;
use rmcp::ServiceExt;
use std::net::SocketAddr;
use std::sync::Arc;

/// Where the server listens.
pub enum Transport {
    /// JSON-RPC over standard input and output.
    Stdio,
    /// Streamable HTTP on this address.
    Http(SocketAddr),
}

/// The path the streamable-HTTP service is mounted at.
pub const HTTP_PATH: &str = "/mcp";

/// Largest request body the HTTP transport accepts (a plan or an argument object is a few
/// KiB; anything near this is a mistake or an attack, refused with 413).
pub const MAX_HTTP_BODY_BYTES: usize = 4 << 20;

/// Serves until the client closes stdin (stdio) or the process gets SIGINT/SIGTERM (HTTP).
pub fn serve(opts: BackendOptions, transport: Transport) -> anyhow::Result<()> {
    let backend = Arc::new(Backend::open(opts).map_err(|e| {
        anyhow::anyhow!(
            "{}",
            tgms_engine::canon::to_string(&tgms_operators::error::store_payload(&e))
        )
    })?);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let mode = if backend.is_read_only() {
            "read-only"
        } else {
            "read-write store, no write tools"
        };
        match transport {
            Transport::Stdio => {
                eprintln!(
                    "tgms serve: {} ({mode}), MCP over stdio",
                    backend.dir().display()
                );
                let running = Handler::new(backend)
                    .serve(rmcp::transport::stdio())
                    .await
                    .map_err(|e| anyhow::anyhow!("MCP session failed to start: {e}"))?;
                running.waiting().await?;
            }
            Transport::Http(addr) => {
                use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
                use rmcp::transport::streamable_http_server::{
                    StreamableHttpServerConfig, StreamableHttpService,
                };
                let ct = tokio_util::sync::CancellationToken::new();
                let config = StreamableHttpServerConfig::default()
                    .with_max_request_body_bytes(MAX_HTTP_BODY_BYTES)
                    .with_allowed_hosts(allowed_hosts(addr))
                    .with_cancellation_token(ct.clone());
                let handler = Handler::new(backend.clone());
                let service: StreamableHttpService<Handler, LocalSessionManager> =
                    StreamableHttpService::new(
                        move || Ok(handler.clone()),
                        Default::default(),
                        config,
                    );
                let router = axum::Router::new().nest_service(HTTP_PATH, service);
                let listener = tokio::net::TcpListener::bind(addr).await?;
                let bound = listener.local_addr()?;
                // The one line a supervisor (or a test) reads to find the port.
                eprintln!(
                    "tgms serve: {} ({mode}), MCP over streamable HTTP at http://{bound}{HTTP_PATH}",
                    backend.dir().display()
                );
                // Responses are small and often written in several pieces (SSE): without
                // TCP_NODELAY each call would wait out Nagle's delay against delayed ACKs.
                use axum::serve::ListenerExt;
                let listener = listener.tap_io(|tcp| {
                    let _ = tcp.set_nodelay(true);
                });
                axum::serve(listener, router)
                    .with_graceful_shutdown(async move {
                        shutdown_signal().await;
                        ct.cancel();
                    })
                    .await?;
            }
        }
        Ok::<(), anyhow::Error>(())
    })
}

/// `Host` values accepted over HTTP: loopback names, plus the bound address when it is not
/// loopback (the SDK rejects other hosts to stop DNS rebinding).
fn allowed_hosts(addr: SocketAddr) -> Vec<String> {
    let mut hosts = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
        "[::1]".to_string(),
    ];
    if !addr.ip().is_loopback() && !addr.ip().is_unspecified() {
        hosts.push(addr.ip().to_string());
    }
    hosts
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {},
                _ = term.recv() => {},
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
    eprintln!("tgms serve: shutting down");
}
