//! Per-client shares of the server's scarce resources, so that one client cannot use up
//! what every client needs (ARCHITECTURE.md, "Bounds per client").
//!
//! - [`Shares`]: slots held while something is open (connections, WebSockets, long-polls),
//!   at most `per_client` for one IP address and `total` in all. A slot is a [`Share`],
//!   given back when it is dropped.
//! - [`open_files_limit`]: the process's open-files limit, raised to its hard limit first;
//!   [`Settings::fit`] derives the connection limit from it, with room for the database,
//!   the logs and the files, and lowers every cap that would not fit.
//! - [`LogBudget`]: request log lines per minute per IP address; the lines past it are
//!   counted and summed up in one line a minute.
//!
//! A client is an IP address: the one a request names (behind a trusted proxy, the
//! forwarded one); before a request is read (a connection) it is the peer's address.
//!
//! A refusal is a [`Refusal`]; the API answers it in its error shape.

use std::{
    collections::HashMap,
    net::IpAddr,
    num::NonZeroU32,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter, clock::DefaultClock};

use crate::config::Settings;

/// What the server needs besides its connections: the database (pool, WAL, the writer's
/// and reader's connections), the log and the files it serves.
pub const RESERVED_FILES: u64 = 64;

/// Connections over a client's share or the server's limit are still accepted, up to this
/// many at once (and [`OVERFLOW_PER_CLIENT`] from one address), to answer `/healthz` or
/// say why they are refused; past it they are closed at once.
pub const OVERFLOW: usize = 32;
/// A client's share of the [`OVERFLOW`] connections.
pub const OVERFLOW_PER_CLIENT: usize = 2;

/// Raises the open-files soft limit to the hard limit and returns the soft limit now in
/// force (`None` where there is no such limit to read).
#[must_use]
pub fn open_files_limit() -> Option<u64> {
    if let Err(e) = rlimit::increase_nofile_limit(u64::MAX) {
        tracing::warn!(error = %e, "could not raise the open-files limit");
    }
    rlimit::getrlimit(rlimit::Resource::NOFILE)
        .ok()
        .map(|(soft, _hard)| soft)
}

/// The connections the process can hold with `open_files` descriptors: the limit less a
/// tenth and [`RESERVED_FILES`] for everything else, and less the [`OVERFLOW`]; at least 8.
#[must_use]
pub fn connection_budget(open_files: u64) -> usize {
    let spare = open_files
        .saturating_sub(open_files / 10)
        .saturating_sub(RESERVED_FILES)
        .saturating_sub(OVERFLOW as u64);
    usize::try_from(spare).unwrap_or(usize::MAX).max(8)
}

/// A client's share of `total`: at most a quarter of it, so that no client can take all,
/// and at least one.
fn quarter(cap: usize, total: usize) -> usize {
    cap.min((total / 4).max(1))
}

impl Settings {
    /// Fits the connection limits to what the process may open (`open_files`, when known)
    /// and each per-client cap to a quarter of its whole: `max_connections` (0: derived)
    /// to the [`connection_budget`], `max_websockets` to `max_connections`, the per-IP
    /// connection and WebSocket caps to a quarter of those. Returns a line for each value
    /// it lowered from what was asked. Idempotent.
    pub fn fit(&mut self, open_files: Option<u64>) -> Vec<String> {
        let mut lowered = Vec::new();
        if let Some(files) = open_files {
            let budget = connection_budget(files);
            if self.max_connections > budget {
                lowered.push(format!(
                    "max_connections {} is more than {files} open files allow: {budget}",
                    self.max_connections
                ));
            }
            if self.max_connections == 0 || self.max_connections > budget {
                self.max_connections = budget;
            }
        }
        if self.max_connections > 0 && self.max_websockets > self.max_connections {
            if self.max_websockets != crate::config::DEFAULT_MAX_WEBSOCKETS {
                lowered.push(format!(
                    "max_websockets {} is more than max_connections: {}",
                    self.max_websockets, self.max_connections
                ));
            }
            self.max_websockets = self.max_connections;
        }
        if self.max_connections > 0 {
            self.max_connections_per_ip =
                quarter(self.max_connections_per_ip, self.max_connections);
        }
        self.max_websockets_per_ip = quarter(self.max_websockets_per_ip, self.max_websockets);
        lowered
    }
}

/// Why a [`Share`] was refused.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// This client holds its whole share.
    Client,
    /// Every slot is taken.
    Server,
}

/// Slots of one resource, shared out per IP address.
#[derive(Debug)]
pub struct Shares {
    /// What the slots are, for messages: "connections", "WebSockets", "long-polls".
    what: &'static str,
    per_client: usize,
    total: usize,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    total: usize,
    by_client: HashMap<IpAddr, usize>,
}

/// One slot of [`Shares`], given back when dropped.
#[derive(Debug)]
pub struct Share {
    shares: Arc<Shares>,
    client: IpAddr,
}

impl Shares {
    /// `total` slots of `what`, at most `per_client` for one IP address.
    #[must_use]
    pub fn new(what: &'static str, per_client: usize, total: usize) -> Arc<Shares> {
        Arc::new(Shares {
            what,
            per_client,
            total,
            held: Mutex::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a slot for `client`.
    ///
    /// # Errors
    /// When `client` holds its share, or every slot is taken.
    pub fn take(self: &Arc<Self>, client: IpAddr) -> Result<Share, Refused> {
        self.take_as(client, self.per_client)
    }

    /// Takes a slot for a trusted proxy, which stands for many clients (told apart per
    /// request, by `X-Forwarded-For`): only the total bounds it.
    ///
    /// # Errors
    /// When every slot is taken.
    pub fn take_for_proxy(self: &Arc<Self>, proxy: IpAddr) -> Result<Share, Refused> {
        self.take_as(proxy, usize::MAX)
    }

    fn take_as(self: &Arc<Self>, client: IpAddr, per_client: usize) -> Result<Share, Refused> {
        let mut held = self.lock();
        let mine = held.by_client.get(&client).copied().unwrap_or(0);
        if mine >= per_client {
            return Err(Refused::Client);
        }
        if held.total >= self.total {
            return Err(Refused::Server);
        }
        held.total += 1;
        held.by_client.insert(client, mine + 1);
        Ok(Share {
            shares: self.clone(),
            client,
        })
    }

    /// Slots held now.
    #[must_use]
    pub fn in_use(&self) -> usize {
        self.lock().total
    }

    /// What a refusal says: which bound was reached, and how many slots it holds.
    #[must_use]
    pub fn refusal(&self, why: Refused) -> Refusal {
        Refusal {
            why,
            what: self.what,
            limit: match why {
                Refused::Client => self.per_client,
                Refused::Server => self.total,
            },
        }
    }
}

/// A slot refused: the API answers `too_many_open` (429, code 219) for a client over its
/// share, `too_many_connections` (503, code 213) when all are taken; both with
/// `Retry-After`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Which bound was reached.
    pub why: Refused,
    /// What the slots are: "connections", "WebSockets", "long-polls".
    pub what: &'static str,
    /// The bound: the client's share, or the server's total.
    pub limit: usize,
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut held = self.shares.lock();
        held.total = held.total.saturating_sub(1);
        if let Some(n) = held.by_client.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                held.by_client.remove(&self.client);
            }
        }
    }
}

/// Request log lines allowed per IP address, and the count of those suppressed.
#[derive(Debug)]
pub struct LogBudget {
    per_client: DefaultKeyedRateLimiter<IpAddr>,
    suppressed: AtomicU64,
}

impl LogBudget {
    /// `per_minute` lines a minute from one address, all of them in a burst.
    #[must_use]
    pub fn new(per_minute: u32, clock: DefaultClock) -> LogBudget {
        let n = NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN);
        LogBudget {
            per_client: RateLimiter::dashmap_with_clock(Quota::per_minute(n), clock),
            suppressed: AtomicU64::new(0),
        }
    }

    /// Whether `client` may have one more line logged; counts it as suppressed if not.
    pub fn allow(&self, client: IpAddr) -> bool {
        if self.per_client.check_key(&client).is_ok() {
            return true;
        }
        self.suppressed.fetch_add(1, Ordering::Relaxed);
        false
    }

    /// Logs how many lines were suppressed since the last call, if any, and forgets idle
    /// addresses. Called once a minute.
    pub fn report(&self) {
        let n = self.suppressed.swap(0, Ordering::Relaxed);
        if n > 0 {
            tracing::info!(
                suppressed = n,
                "suppressed {n} request log lines of clients over their share (--log-lines-per-ip)"
            );
        }
        self.per_client.retain_recent();
    }
}

/// `text` cut to at most `max` bytes (on a character boundary), with `…` when cut: a
/// client-chosen value in a log line (a path, a method) costs at most that.
#[must_use]
pub fn truncated(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end]).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, n])
    }

    #[test]
    fn a_client_gets_its_share_and_no_more_and_gets_it_back() {
        let shares = Shares::new("connections", 2, 3);
        let a1 = shares.take(ip(1)).unwrap();
        let _a2 = shares.take(ip(1)).unwrap();
        assert_eq!(shares.take(ip(1)).unwrap_err(), Refused::Client);
        let b1 = shares.take(ip(2)).unwrap();
        assert_eq!(shares.take(ip(3)).unwrap_err(), Refused::Server);
        drop(a1);
        assert_eq!(shares.in_use(), 2);
        let _c1 = shares.take(ip(3)).unwrap();
        drop(b1);
        // 127.0.0.1 holds 1 of its 2, the server 2 of 3.
        let _a3 = shares.take(ip(1)).unwrap();
        assert_eq!(shares.in_use(), 3);
    }

    #[test]
    fn the_limits_fit_the_open_files() {
        let mut s = crate::config::ServeArgs::default().resolve().unwrap();
        assert_eq!(s.max_connections, 0);
        s.fit(Some(1024));
        assert_eq!(s.max_connections, 1024 - 102 - 64 - 32);
        assert_eq!(s.max_websockets, s.max_connections, "50,000 did not fit");
        assert_eq!(s.max_connections_per_ip, s.max_connections / 4);
        assert!(s.max_websockets_per_ip <= s.max_websockets / 4);
        let before = (
            s.max_connections,
            s.max_websockets,
            s.max_connections_per_ip,
        );
        assert!(s.fit(Some(1024)).is_empty(), "idempotent");
        assert_eq!(
            before,
            (
                s.max_connections,
                s.max_websockets,
                s.max_connections_per_ip
            )
        );
        s.max_connections = 1_000_000;
        assert_eq!(s.fit(Some(1024)).len(), 1, "a lowered value is reported");
        assert_eq!(s.max_connections, before.0);
    }

    #[test]
    fn truncation_keeps_characters_whole() {
        assert_eq!(truncated("abc", 3), "abc");
        assert_eq!(truncated("abcd", 3), "abc…");
        assert_eq!(truncated("aé", 2), "a…");
    }
}
