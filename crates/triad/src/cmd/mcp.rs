//! `triad mcp`: Triad's MCP server on stdio, acting as the local key, for desktop agents
//! (a client that starts the server as a command).
//!
//! The tools live once, on the server (`/mcp`): this command logs in with the key and
//! bridges rmcp's stdio transport (the desktop client's side) to rmcp's streamable HTTP
//! client transport pointed at the server's `/mcp` with the login token. Messages pass
//! through unchanged (what the client sends on stdin is what the HTTP transport sends; what
//! it receives is written to stdout), so every protocol version rmcp speaks on either side
//! works, and subscriptions' notifications arrive as they do over HTTP.
//!
//! When the token expires (or the server forgets it), the next request is answered 401:
//! [`LoggedIn`] logs in again with the key and sends the request once more, so a long
//! session outlives its token. stdout carries only the protocol; logs go to stderr.

use std::{
    collections::HashMap,
    sync::{Arc, RwLock},
    time::Duration,
};

use anyhow::Context as _;
use clap::Args;
use futures_util::stream::BoxStream;
use rmcp::{
    RoleClient, RoleServer,
    model::ClientJsonRpcMessage,
    transport::{
        StreamableHttpClientTransport, Transport,
        async_rw::AsyncRwTransport,
        streamable_http_client::{
            StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
            StreamableHttpPostResponse, StreamableHttpResponseLimits,
        },
    },
};
use triad_identity::KeyFile;

use super::{client::Connection, keys::log_in};

/// Serve Triad's MCP tools on stdio for a desktop agent (Claude Desktop, an IDE), acting
/// as your key: logs in and bridges to the server's /mcp.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(flatten)]
    connection: Connection,
}

/// A reqwest client that sends the current login token with every request, and logs in
/// again (once per request) when the server answers 401.
#[derive(Clone)]
struct LoggedIn {
    http: reqwest::Client,
    server: Arc<str>,
    key: Arc<KeyFile>,
    token: Arc<RwLock<String>>,
}

impl LoggedIn {
    fn token(&self) -> String {
        self.token
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Logs in again after a 401. Failing that, the 401 stands.
    async fn renew<E: std::error::Error + Send + Sync + 'static>(
        &self,
        refused: StreamableHttpError<E>,
    ) -> Result<String, StreamableHttpError<E>> {
        eprintln!("triad mcp: the server refused the login token; logging in again");
        match log_in(&self.http, &self.server, &self.key, true).await {
            Ok(token) => {
                *self
                    .token
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = token.clone();
                Ok(token)
            }
            Err(e) => {
                eprintln!("triad mcp: cannot log in again: {e:#}");
                Err(refused)
            }
        }
    }
}

/// Whether an HTTP transport error is the server's 401.
fn is_unauthorized<E: std::error::Error + Send + Sync + 'static>(
    error: &StreamableHttpError<E>,
) -> bool {
    matches!(error, StreamableHttpError::AuthRequired(_))
}

impl StreamableHttpClient for LoggedIn {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<http::HeaderName, http::HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            None,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<http::HeaderName, http::HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let first = self
            .http
            .post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                Some(self.token()),
                custom_headers.clone(),
                limits,
            )
            .await;
        match first {
            Err(e) if is_unauthorized(&e) => {
                let token = self.renew(e).await?;
                self.http
                    .post_message_with_response_limits(
                        uri,
                        message,
                        session_id,
                        Some(token),
                        custom_headers,
                        limits,
                    )
                    .await
            }
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<http::HeaderName, http::HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.http
            .delete_session(uri, session_id, Some(self.token()), custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<http::HeaderName, http::HeaderValue>,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        StreamableHttpError<Self::Error>,
    > {
        let first = self
            .http
            .get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                Some(self.token()),
                custom_headers.clone(),
            )
            .await;
        match first {
            Err(e) if is_unauthorized(&e) => {
                let token = self.renew(e).await?;
                self.http
                    .get_stream(uri, session_id, last_event_id, Some(token), custom_headers)
                    .await
            }
            other => other,
        }
    }
}

/// Runs the bridge until the client closes stdin or the server goes away.
pub(crate) fn run(args: McpArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(bridge(args))
}

async fn bridge(args: McpArgs) -> anyhow::Result<()> {
    let key_path = match &args.connection.key_file {
        Some(path) => path.clone(),
        None => KeyFile::default_path().context("cannot find where the key is kept")?,
    };
    let key = KeyFile::load(&key_path).with_context(|| {
        format!(
            "cannot read {} (make one with triad keygen)",
            key_path.display()
        )
    })?;
    let server = args.connection.server.trim_end_matches('/').to_owned();
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(5))
        .build()?;
    let token = log_in(&http, &server, &key, true).await?;
    let client = LoggedIn {
        http,
        server: Arc::from(server.as_str()),
        key: Arc::new(key),
        token: Arc::new(RwLock::new(token)),
    };
    let mut remote: StreamableHttpClientTransport<LoggedIn> =
        StreamableHttpClientTransport::with_client(
            client,
            StreamableHttpClientTransportConfig::with_uri(format!("{server}/mcp")),
        );
    let mut local: AsyncRwTransport<RoleServer, _, _> =
        AsyncRwTransport::new_server(tokio::io::stdin(), tokio::io::stdout());
    loop {
        tokio::select! {
            from_client = Transport::<RoleServer>::receive(&mut local) => {
                let Some(message) = from_client else { break };
                if let Err(e) = Transport::<RoleClient>::send(&mut remote, message).await {
                    eprintln!("triad mcp: cannot reach {server}/mcp: {e}");
                    break;
                }
            }
            from_server = Transport::<RoleClient>::receive(&mut remote) => {
                let Some(message) = from_server else {
                    eprintln!("triad mcp: the server closed the connection");
                    break;
                };
                if let Err(e) = Transport::<RoleServer>::send(&mut local, message).await {
                    eprintln!("triad mcp: cannot write to stdout: {e}");
                    break;
                }
            }
        }
    }
    let _ = Transport::<RoleClient>::close(&mut remote).await;
    let _ = Transport::<RoleServer>::close(&mut local).await;
    Ok(())
}
