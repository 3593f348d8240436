//! The accept loop: what `axum::serve` does, plus a bound on slow clients.
//!
//! `axum::serve` gives hyper no timer, so hyper's header read timeout never fires: a client
//! that opens a connection and sends its request headers a byte at a time (slowloris) holds
//! the connection for ever, and enough of them use up the process's file descriptors. Here
//! every HTTP/1 connection gets a timer and must deliver a request's headers within the
//! request timeout (`--request-timeout-ms`), else hyper closes it. A body that trickles in
//! is bounded by the same timeout in the middleware, which answers `408 timeout` (code 214).
//!
//! Shutdown is as in `axum::serve`: when `shutdown` resolves the listener closes, every
//! connection finishes the request it is serving and closes, and [`run`] returns once the
//! last one has.

use std::{future::Future, net::SocketAddr, time::Duration};

use axum::{Router, body::Body, extract::ConnectInfo};
use hyper::{body::Incoming, server::conn::http1};
use hyper_util::{
    rt::{TokioIo, TokioTimer},
    service::TowerToHyperService,
};
use tokio::{net::TcpListener, sync::watch, task::JoinSet};
use tower::ServiceExt as _;

/// Serves `app` on `listener` until `shutdown` resolves, then drains the connections.
///
/// # Errors
/// Never for a failed connection (it is logged and dropped); accept errors (out of file
/// descriptors, say) are logged and retried after a pause.
pub async fn run(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let (stop_tx, _) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, remote) = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, typically: wait for some to be freed
                    // rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let service = app
            .clone()
            .map_request(move |request: axum::http::Request<Incoming>| {
                let mut request = request.map(Body::new);
                request
                    .extensions_mut()
                    .insert(ConnectInfo::<SocketAddr>(remote));
                request
            });
        let service = TowerToHyperService::new(service);
        let mut stop = stop_tx.subscribe();
        connections.spawn(async move {
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout);
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
    }
    drop(listener);
    let _ = stop_tx.send(true);
    while connections.join_next().await.is_some() {}
    Ok(())
}
