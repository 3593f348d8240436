//! The client's IP address: the one key of everything counted per IP (the per-IP rate
//! limit and every per-IP share).
//!
//! A request's peer is the client, unless the peer is one of the trusted reverse proxies
//! (`--trusted-proxies`). Then the client is read from `X-Forwarded-For`, which each proxy
//! extends with the address it got the request from: walking the chain from the right, every
//! hop that is a trusted proxy is skipped, and the first one that is not is the client. The
//! addresses to its left were written by the client itself and are never believed. A peer
//! that is not a trusted proxy has its header ignored, whatever it says.

use std::net::{IpAddr, SocketAddr};

use axum::{
    extract::{ConnectInfo, FromRequestParts},
    http::{Extensions, HeaderMap, request::Parts},
};

use super::ApiState;
use crate::config::TrustedProxies;

/// The header the proxies extend.
const FORWARDED_FOR: &str = "x-forwarded-for";

/// The client's IP address, as [`client_ip`] finds it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClientIp(pub IpAddr);

impl ClientIp {
    /// The client of a request with these extensions (the one already named there, else its
    /// peer, [`ConnectInfo`]) and headers. A request with no peer (a test's `oneshot`) counts as from 127.0.0.1.
    #[must_use]
    pub fn of(extensions: &Extensions, headers: &HeaderMap, trusted: &TrustedProxies) -> ClientIp {
        // Named once, by the per-IP limit, which runs first.
        if let Some(known) = extensions.get::<ClientIp>() {
            return *known;
        }
        let peer = extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(IpAddr::from([127, 0, 0, 1]), |c| c.0.ip());
        ClientIp(client_ip(peer, headers, trusted))
    }
}

impl FromRequestParts<ApiState> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &ApiState,
    ) -> Result<Self, Self::Rejection> {
        Ok(ClientIp::of(
            &parts.extensions,
            &parts.headers,
            &state.settings.trusted_proxies,
        ))
    }
}

/// The client behind `peer`: `peer` itself unless it is a trusted proxy, else the
/// right-most address of `X-Forwarded-For` (all its headers, in order) that is not a
/// trusted proxy. An entry that does not parse ends the walk: the hop to its right, which
/// is trusted and forwarded it, is taken as the client, so a garbled header can make a
/// proxy stand for its clients but never names anyone else.
#[must_use]
pub fn client_ip(peer: IpAddr, headers: &HeaderMap, trusted: &TrustedProxies) -> IpAddr {
    let peer = peer.to_canonical();
    if trusted.is_empty() || !trusted.contains(peer) {
        return peer;
    }
    let chain: Vec<&str> = headers
        .get_all(FORWARDED_FOR)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    let mut client = peer;
    for entry in chain.iter().rev() {
        let Some(hop) = parse_hop(entry) else {
            return client;
        };
        client = hop;
        if !trusted.contains(hop) {
            return hop;
        }
    }
    // Every hop is a trusted proxy: the left-most is the nearest thing to a client.
    client
}

/// One `X-Forwarded-For` entry: an address, perhaps with a port (`1.2.3.4:5678`,
/// `[2001:db8::1]:443`).
fn parse_hop(entry: &str) -> Option<IpAddr> {
    entry
        .parse::<IpAddr>()
        .or_else(|_| entry.parse::<SocketAddr>().map(|s| s.ip()))
        .ok()
        .map(|ip| ip.to_canonical())
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(FORWARDED_FOR, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_forwards() {
        let none = TrustedProxies::default();
        let h = headers(&["203.0.113.9"]);
        assert_eq!(client_ip(ip("198.51.100.1"), &h, &none), ip("198.51.100.1"));
        let other: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        assert_eq!(
            client_ip(ip("198.51.100.1"), &h, &other),
            ip("198.51.100.1")
        );
    }

    #[test]
    fn a_trusted_peer_names_the_right_most_untrusted_hop() {
        let trusted: TrustedProxies = "127.0.0.1, 10.0.0.0/8".parse().unwrap();
        // The client forged the first entry; the proxies appended the rest.
        let h = headers(&["1.1.1.1, 203.0.113.9", "10.1.2.3"]);
        assert_eq!(client_ip(ip("127.0.0.1"), &h, &trusted), ip("203.0.113.9"));
        // A dual-stack socket's mapped address is the IPv4 proxy.
        assert_eq!(
            client_ip(ip("::ffff:127.0.0.1"), &h, &trusted),
            ip("203.0.113.9")
        );
        // Ports and brackets are read; no header leaves the proxy as the client.
        let h = headers(&["[2001:db8::7]:443"]);
        assert_eq!(client_ip(ip("10.0.0.1"), &h, &trusted), ip("2001:db8::7"));
        assert_eq!(
            client_ip(ip("10.0.0.1"), &HeaderMap::new(), &trusted),
            ip("10.0.0.1")
        );
    }

    #[test]
    fn garbage_stops_at_the_last_trusted_hop() {
        let trusted: TrustedProxies = "127.0.0.1,10.0.0.0/8".parse().unwrap();
        let h = headers(&["9.9.9.9, not-an-ip, 10.0.0.5"]);
        assert_eq!(client_ip(ip("127.0.0.1"), &h, &trusted), ip("10.0.0.5"));
        let all_trusted = headers(&["10.0.0.9, 10.0.0.5"]);
        assert_eq!(
            client_ip(ip("127.0.0.1"), &all_trusted, &trusted),
            ip("10.0.0.9")
        );
    }

    #[test]
    fn the_setting_parses_addresses_and_blocks_and_refuses_the_rest() {
        let t: TrustedProxies = "192.168.1.7/16, ::1".parse().unwrap();
        assert!(t.contains(ip("192.168.200.1")));
        assert!(t.contains(ip("::1")));
        assert!(!t.contains(ip("192.169.0.1")));
        assert!("10.0.0.0/33".parse::<TrustedProxies>().is_err());
        assert!("proxy.local".parse::<TrustedProxies>().is_err());
        assert!("".parse::<TrustedProxies>().unwrap().is_empty());
    }
}
