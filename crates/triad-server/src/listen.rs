//! The accept loop: what `axum::serve` does, plus a bound on slow clients.
//!
//! `axum::serve` gives hyper no timer, so hyper's header read timeout never fires: a client
//! that opens a connection and sends its request headers a byte at a time (slowloris) holds
//! the connection for ever, and enough of them use up the process's file descriptors. Here
//! every HTTP/1 connection gets a timer and must deliver a request's headers within the
//! request timeout (`--request-timeout-ms`), else hyper closes it. A body that trickles in
//! is bounded by the same timeout in the middleware, which answers `408 timeout` (code 214).
//!
//! Every connection takes a file descriptor, so connections are a scarce resource shared
//! out per client ([`Shares`]): at most `--max-connections-per-ip` from one IP address and
//! `--max-connections` in all (derived from the open-files limit). A connection over
//! either is still accepted, while there is room in a small overflow ([`OVERFLOW`], at most
//! [`OVERFLOW_PER_CLIENT`] from one address), and read for one request: `/healthz` is
//! answered as usual (so it answers while the server is full), anything else with
//! `too_many_open` (429, code 219) or `too_many_connections` (503, code 213), with
//! `Retry-After`, and the connection closes. Past the overflow it is closed at once. An
//! accept that fails (out of file descriptors, say) is logged at most once a second and
//! retried after a pause; the loop never stops accepting.
//!
//! A connection's slot travels in each request's extensions ([`ConnectionSlot`]), so a
//! WebSocket upgraded from it keeps the slot until the socket closes.
//!
//! Shutdown is as in `axum::serve`: when `shutdown` resolves the listener closes, every
//! connection finishes the request it is serving and closes, and [`run`] returns once the
//! last one has.

use std::{
    future::Future,
    net::SocketAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use axum::{
    Router,
    body::Body,
    extract::ConnectInfo,
    http::{HeaderValue, header},
    response::IntoResponse as _,
};
use hyper::{body::Incoming, server::conn::http1};
use hyper_util::{
    rt::{TokioIo, TokioTimer},
    service::TowerToHyperService,
};
use tokio::{net::TcpListener, sync::watch, task::JoinSet};
use tower::ServiceExt as _;

use crate::bounds::{OVERFLOW, OVERFLOW_PER_CLIENT, Refused, Share, Shares};
use crate::config::TrustedProxies;

/// The slot of the connection a request came on: a WebSocket upgraded from the connection
/// holds it (a clone) until it closes.
#[derive(Clone, Debug)]
pub struct ConnectionSlot(pub Arc<Share>);

/// How long an overflow connection may take to send its request's headers.
const OVERFLOW_HEADER_TIMEOUT: Duration = Duration::from_secs(2);

/// Serves `app` on `listener` until `shutdown` resolves, then drains the connections.
/// `connections` shares the connections out per client; a peer among `proxies` (the
/// trusted reverse proxies) is bounded by the total only.
///
/// # Errors
/// Never for a failed connection (it is logged and dropped); accept errors (out of file
/// descriptors, say) are logged and retried after a pause.
pub async fn run(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    connections: Arc<Shares>,
    proxies: TrustedProxies,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let (stop_tx, _) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let overflow = Shares::new("connections", OVERFLOW_PER_CLIENT, OVERFLOW);
    let mut last_accept_warning: Option<Instant> = None;
    tokio::pin!(shutdown);
    loop {
        let (stream, remote) = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, typically: wait for some to be freed
                    // rather than spin, and say so once a second at most.
                    if last_accept_warning.is_none_or(|at| at.elapsed() >= Duration::from_secs(1)) {
                        tracing::warn!(error = %e, "accept failed");
                        last_accept_warning = Some(Instant::now());
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let client = remote.ip();
        // A trusted proxy's connections carry many clients: they are told apart per
        // request (api::ClientIp), and only the total bounds the proxy's connections.
        let taken = if proxies.contains(client) {
            connections.take_for_proxy(client)
        } else {
            connections.take(client)
        };
        let (slot, refused) = match taken {
            Ok(slot) => (Some(Arc::new(slot)), None),
            Err(why) => match overflow.take(client) {
                Ok(spare) => (Some(Arc::new(spare)), Some(why)),
                // Not even room to say why: close at once.
                Err(_) => continue,
            },
        };
        let shares = connections.clone();
        let app = app.clone();
        let service = tower::service_fn(move |request: axum::http::Request<Incoming>| {
            let mut request = request.map(Body::new);
            request
                .extensions_mut()
                .insert(ConnectInfo::<SocketAddr>(remote));
            if let Some(slot) = &slot {
                request
                    .extensions_mut()
                    .insert(ConnectionSlot(slot.clone()));
            }
            let refusal = refused
                .filter(|_| request.uri().path() != "/healthz")
                .map(|why| {
                    let mut response = shares.refusal(why).into_response();
                    response
                        .headers_mut()
                        .insert(header::CONNECTION, HeaderValue::from_static("close"));
                    response
                });
            let app = app.clone();
            async move {
                match refusal {
                    Some(r) => Ok(r),
                    None => app.oneshot(request).await,
                }
            }
        });
        let service = TowerToHyperService::new(service);
        let mut stop = stop_tx.subscribe();
        let overflowing = refused.is_some();
        tasks.spawn(async move {
            let mut builder = http1::Builder::new();
            builder.timer(TokioTimer::new());
            if overflowing {
                // One request, read quickly, then the connection closes.
                builder
                    .keep_alive(false)
                    .header_read_timeout(OVERFLOW_HEADER_TIMEOUT.min(header_timeout));
            } else {
                builder.header_read_timeout(header_timeout);
            }
            let connection = builder
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            tokio::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                _ = stop.changed() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = result {
                tracing::debug!(error = %e, %remote, "connection ended with an error");
            }
        });
        if refused == Some(Refused::Server) {
            tracing::debug!(%remote, "connection over the server's limit");
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
    Ok(())
}
