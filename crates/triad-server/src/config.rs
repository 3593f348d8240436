//! Settings of `triad serve`: each one can come from a flag, a `TRIAD_…` environment
//! variable or a TOML file (`--config`), in that order of precedence, else its default.

use std::{
    net::{IpAddr, SocketAddr},
    path::PathBuf,
    str::FromStr,
};

use ipnet::IpNet;

use serde::Deserialize;
use triad_engine::{Address, PayoutRules, RematchStart};

/// How logs are written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    Human,
    /// One JSON object per line.
    Json,
}

macro_rules! settings {
    ($( $(#[doc = $doc:literal])* $name:ident : $ty:ty = $default:expr, env $env:literal; )*) => {
        /// `triad serve`'s settings as given: every field optional.
        #[derive(Clone, Debug, Default, Deserialize, clap::Args)]
        #[serde(deny_unknown_fields)]
        pub struct ServeArgs {
            /// A TOML file with any of these settings (keys as the flags, with underscores).
            #[arg(long, env = "TRIAD_CONFIG")]
            #[serde(skip)]
            pub config: Option<PathBuf>,
            $(
                $(#[doc = $doc])*
                #[arg(long, env = $env)]
                pub $name: Option<$ty>,
            )*
        }

        /// The settings in force, every one resolved.
        #[derive(Clone, Debug)]
        pub struct Settings {
            $( $(#[doc = $doc])* pub $name: $ty, )*
        }

        impl ServeArgs {
            /// Resolves flags and environment over the TOML file over the defaults.
            ///
            /// # Errors
            /// When the file cannot be read or parsed.
            pub fn resolve(self) -> Result<Settings, String> {
                let file = match &self.config {
                    Some(path) => {
                        let text = std::fs::read_to_string(path)
                            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                        toml::from_str::<ServeArgs>(&text)
                            .map_err(|e| format!("{}: {e}", path.display()))?
                    }
                    None => ServeArgs::default(),
                };
                Ok(Settings {
                    $( $name: self.$name.or(file.$name).unwrap_or_else(|| $default), )*
                })
            }
        }
    };
}

settings! {
    /// Address to listen on [default: 127.0.0.1:8080].
    addr: SocketAddr = SocketAddr::from(([127, 0, 0, 1], 8080)), env "TRIAD_ADDR";
    /// Database: a path or sqlite://PATH for SQLite, postgres://… for PostgreSQL
    /// [default: triad.db].
    database: String = "triad.db".to_owned(), env "TRIAD_DATABASE";
    /// The owner (operator): the only address that may deposit and collect the reserve
    /// [default: the address of the local key file, if any; else nobody].
    owner: Address = Address::ZERO, env "TRIAD_OWNER";
    /// The domain named in login messages [default: the listen address].
    domain: String = String::new(), env "TRIAD_DOMAIN";
    /// Seed of the engine's random choices [default: drawn once and kept in the database].
    seed: u64 = 0, env "TRIAD_SEED";
    /// How long a staked wait must last before it can be cancelled, in ms [default: 120000].
    wait_cancel_ms: u64 = 120_000, env "TRIAD_WAIT_CANCEL_MS";
    /// How long the player to move has, in ms [default: 60000].
    move_timeout_ms: u64 = 60_000, env "TRIAD_MOVE_TIMEOUT_MS";
    /// How long a challenge stays open, in ms [default: 600000].
    challenge_ttl_ms: u64 = 600_000, env "TRIAD_CHALLENGE_TTL_MS";
    /// End a slow player's match automatically at the deadline instead of waiting for a
    /// claim. Whatever this says, a match whose first move never comes is called off (the
    /// stakes refunded) by itself once the move timeout has passed [default: false].
    automatic_timeouts: bool = false, env "TRIAD_AUTOMATIC_TIMEOUTS";
    /// Let any player create free tournaments (the owner always may, and only the owner
    /// creates staked ones) [default: false].
    players_may_create_tournaments: bool = false, env "TRIAD_PLAYERS_MAY_CREATE_TOURNAMENTS";
    /// The pause between a Swiss round's last game and the next round, in ms
    /// [default: 10000].
    tournament_round_gap_ms: u64 = 10_000, env "TRIAD_TOURNAMENT_ROUND_GAP_MS";
    /// Winner's share of the pot, in basis points [default: 9000: 1.8 of a pot of 2].
    win_bps_of_pot: u32 = PayoutRules::STANDARD.win_bps_of_pot, env "TRIAD_WIN_BPS_OF_POT";
    /// Each player's refund on a draw, in basis points of the stake [default: 9000].
    draw_bps_of_stake: u32 = PayoutRules::STANDARD.draw_bps_of_stake, env "TRIAD_DRAW_BPS_OF_STAKE";
    /// Claimer's share of the pot after a timeout, in basis points [default: 9500].
    timeout_bps_of_pot: u32 = PayoutRules::STANDARD.timeout_bps_of_pot, env "TRIAD_TIMEOUT_BPS_OF_POT";
    /// Refund on a cancelled wait, in basis points of the stake [default: 10000].
    cancel_bps_of_stake: u32 = PayoutRules::STANDARD.cancel_bps_of_stake, env "TRIAD_CANCEL_BPS_OF_STAKE";
    /// Who starts a rematch: random or alternate [default: random].
    rematch_start: RematchStartArg = RematchStartArg(RematchStart::Random), env "TRIAD_REMATCH_START";
    /// The largest stake, in minor units, as decimal digits up to 2^128-1
    /// [default: 1000000000000000000, 10^18: one ether in wei].
    max_stake: AmountArg = AmountArg(DEFAULT_MAX_STAKE), env "TRIAD_MAX_STAKE";
    /// How long a finished match, or a tournament that ended, stays in memory, in ms, and
    /// up to a minute more until the clock's next sweep (it stays in the database forever)
    /// [default: 900000].
    finished_retention_ms: u64 = 900_000, env "TRIAD_FINISHED_RETENTION_MS";
    /// How long an idempotency key is remembered, in ms [default: 86400000].
    idempotency_window_ms: u64 = 86_400_000, env "TRIAD_IDEMPOTENCY_WINDOW_MS";
    /// How long a login token lasts, in ms [default: 86400000].
    session_ttl_ms: u64 = 86_400_000, env "TRIAD_SESSION_TTL_MS";
    /// Largest request body, in bytes [default: 16384].
    max_body_bytes: usize = 16 * 1024, env "TRIAD_MAX_BODY_BYTES";
    /// Largest WebSocket message, in bytes [default: 16384].
    max_ws_message_bytes: usize = 16 * 1024, env "TRIAD_MAX_WS_MESSAGE_BYTES";
    /// Frames queued for one WebSocket before it counts as too slow and is closed
    /// [default: 1024].
    ws_send_queue: usize = 1024, env "TRIAD_WS_SEND_QUEUE";
    /// Longest time a request may take, in ms [default: 10000].
    request_timeout_ms: u64 = 10_000, env "TRIAD_REQUEST_TIMEOUT_MS";
    /// Most requests handled at once [default: 4096].
    max_in_flight_requests: usize = 4096, env "TRIAD_MAX_IN_FLIGHT_REQUESTS";
    /// Most WebSockets open at once [default: 50000, lowered to the connection limit].
    max_websockets: usize = DEFAULT_MAX_WEBSOCKETS, env "TRIAD_MAX_WEBSOCKETS";
    /// Most connections open at once (each takes a file descriptor); 0 derives it from the
    /// open-files limit, which the server raises to its hard limit at start: that limit
    /// less a tenth and 64 for the database, the logs and the files [default: 0]. A larger
    /// value is lowered to the derived one.
    max_connections: usize = 0, env "TRIAD_MAX_CONNECTIONS";
    /// Most connections open at once from one IP address; those over it are answered
    /// `too_many_open` (429, code 219) and closed. At most a quarter of the connection
    /// limit [default: 256].
    max_connections_per_ip: usize = 256, env "TRIAD_MAX_CONNECTIONS_PER_IP";
    /// Most WebSockets open at once from one IP address. At most a quarter of
    /// --max-websockets [default: 64].
    max_websockets_per_ip: usize = 64, env "TRIAD_MAX_WEBSOCKETS_PER_IP";
    /// Most long-polls (`GET /api/apps/inbox` with `wait_ms`) waiting at once from one IP
    /// address [default: 16].
    max_long_polls_per_ip: usize = 16, env "TRIAD_MAX_LONG_POLLS_PER_IP";
    /// Most MCP sessions (`/mcp`, opened with `initialize`) and MCP streams (a 2026-07-28
    /// request's answer, such as `subscriptions/listen`) open at once from one IP address;
    /// the next is refused with `too_many_open` (429, code 219) [default: 16].
    max_mcp_sessions_per_ip: usize = 16, env "TRIAD_MAX_MCP_SESSIONS_PER_IP";
    /// An MCP session with no message for this long, in ms, is closed; its client opens a
    /// new one [default: 300000].
    mcp_session_idle_ms: u64 = 300_000, env "TRIAD_MCP_SESSION_IDLE_MS";
    /// Most A2A streams (`SendStreamingMessage`, `SubscribeToTask` on `/a2a`) open at once
    /// from one IP address; the next is refused with `too_many_open` [default: 16].
    max_a2a_streams_per_ip: usize = 16, env "TRIAD_MAX_A2A_STREAMS_PER_IP";
    /// Events per second one IP address may have replayed from the log by WebSocket
    /// catch-ups (`subscribe` with `since`), with twice as many in a burst; a catch-up
    /// over it is refused with `rate_limited` and `retry_after_s` [default: 5000].
    replay_events_per_ip: u32 = 5_000, env "TRIAD_REPLAY_EVENTS_PER_IP";
    /// Request log lines (client and server errors, slow requests) per minute from one IP
    /// address; past it they are counted and summed up once a minute [default: 60].
    log_lines_per_ip: u32 = 60, env "TRIAD_LOG_LINES_PER_IP";
    /// Requests per second allowed from one IP address, sustained [default: 200].
    rate_per_ip: u32 = 200, env "TRIAD_RATE_PER_IP";
    /// Requests per second allowed from one logged-in address, sustained [default: 50].
    rate_per_address: u32 = 50, env "TRIAD_RATE_PER_ADDRESS";
    /// Burst allowed above the sustained rates [default: 100].
    rate_burst: u32 = 100, env "TRIAD_RATE_BURST";
    /// Messages per second one WebSocket may send, sustained, with twice as many in a
    /// burst; a socket over it is closed as a flood [default: 20].
    ws_rate: u32 = 20, env "TRIAD_WS_RATE";
    /// Log format: human or json [default: human].
    log_format: LogFormat = LogFormat::Human, env "TRIAD_LOG_FORMAT";
    /// Tests only: let the owner move the server's clock with `POST /api/dev/clock`, at
    /// most 30 days a call; refused without an owner [default: false].
    dev_clock: bool = false, env "TRIAD_DEV_CLOCK";
    /// Tests only, with the dev clock: the time it starts at, in ms since the epoch, never
    /// behind the log (a test's outage: the server gives back the time since its last
    /// heartbeat); 0 starts it where the last run left it (its last heartbeat or event),
    /// or at the system's time on a new database [default: 0].
    dev_clock_start_ms: u64 = 0, env "TRIAD_DEV_CLOCK_START_MS";
    /// The reverse proxies in front of this server, as addresses or CIDR blocks separated by
    /// commas (`127.0.0.1,10.0.0.0/8`; in the file a list or that string). Only a request
    /// from one of them has its `X-Forwarded-For` read: the client is the right-most address
    /// of that chain that is not a trusted proxy. Anyone else's header is ignored
    /// [default: none, every client is its own peer address].
    trusted_proxies: TrustedProxies = TrustedProxies::default(), env "TRIAD_TRUSTED_PROXIES";
    /// The server's public base URL, as clients reach it (`https://triad.example`): the A2A
    /// agent card names it, never the request's `Host` [default: http:// and the listen
    /// address].
    public_url: String = String::new(), env "TRIAD_PUBLIC_URL";
}

/// The trusted reverse proxies (`--trusted-proxies`): addresses and CIDR blocks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies(pub Vec<IpNet>);

impl TrustedProxies {
    /// Whether `ip` is one of the trusted proxies (an IPv4 address mapped into IPv6, as a
    /// dual-stack socket reports it, counts as the IPv4 address).
    #[must_use]
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// Whether no proxy is trusted.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromStr for TrustedProxies {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(|part| {
                part.parse::<IpNet>()
                    .or_else(|_| part.parse::<IpAddr>().map(IpNet::from))
                    .map(|net| net.trunc())
                    .map_err(|_| {
                        format!("{part:?} is not an IP address or a CIDR block (10.0.0.0/8)")
                    })
            })
            .collect::<Result<_, _>>()
            .map(TrustedProxies)
    }
}

impl<'de> Deserialize<'de> for TrustedProxies {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// A list of entries, or one string of them separated by commas.
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Given {
            One(String),
            Many(Vec<String>),
        }
        let text = match Given::deserialize(d)? {
            Given::One(text) => text,
            Given::Many(list) => list.join(","),
        };
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The default `--max-websockets`: lowered to the connection limit without a word when the
/// open-files limit cannot hold it (an operator's own value is reported when lowered).
pub const DEFAULT_MAX_WEBSOCKETS: usize = 50_000;

/// The default stake limit: 10^18 minor units, one ether in wei, and the engine's own
/// default. An operator whose unit is smaller raises it; the ledger holds any `u128`.
pub const DEFAULT_MAX_STAKE: u128 = 1_000_000_000_000_000_000;

/// An amount of minor units for a setting: canonical decimal digits on the command line
/// and in the environment ([`triad_engine::parse_amount`]); in the TOML file, the same as a
/// string or a whole number (TOML's integers stop at 2^63).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AmountArg(pub u128);

impl FromStr for AmountArg {
    type Err = triad_engine::AmountError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        triad_engine::parse_amount(s).map(AmountArg)
    }
}

impl<'de> Deserialize<'de> for AmountArg {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        triad_engine::amount::text::deserialize(d).map(AmountArg)
    }
}

/// `random` or `alternate`, for the flag and the file.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RematchStartArg(pub RematchStart);

impl FromStr for RematchStartArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "random" => Ok(RematchStartArg(RematchStart::Random)),
            "alternate" => Ok(RematchStartArg(RematchStart::Alternate)),
            _ => Err("use random or alternate".to_owned()),
        }
    }
}

impl<'de> Deserialize<'de> for RematchStartArg {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl Settings {
    /// The engine's configuration.
    #[must_use]
    pub fn engine_config(&self, seed: u64) -> triad_engine::Config {
        let mut c = triad_engine::Config::new(self.owner);
        c.seed = seed;
        c.wait_cancel_ms = self.wait_cancel_ms;
        c.move_timeout_ms = self.move_timeout_ms;
        c.challenge_ttl_ms = self.challenge_ttl_ms;
        c.automatic_timeouts = self.automatic_timeouts;
        c.tournaments.players_may_create = self.players_may_create_tournaments;
        c.tournaments.round_gap_ms = self.tournament_round_gap_ms;
        c.payouts = PayoutRules {
            win_bps_of_pot: self.win_bps_of_pot,
            draw_bps_of_stake: self.draw_bps_of_stake,
            timeout_bps_of_pot: self.timeout_bps_of_pot,
            cancel_bps_of_stake: self.cancel_bps_of_stake,
        };
        c.rematch_start = self.rematch_start.0;
        c.max_stake = self.max_stake.0;
        c.finished_retention_ms = self.finished_retention_ms;
        c.idempotency_window_ms = self.idempotency_window_ms;
        c
    }

    /// Checks the settings make sense together.
    ///
    /// # Errors
    /// What is wrong and how to fix it.
    pub fn validate(&self) -> Result<(), String> {
        let payouts = self.engine_config(0).payouts;
        if !payouts.is_valid() {
            return Err("a payout share is above 10000 basis points (100%)".into());
        }
        if self.dev_clock_start_ms != 0 && !self.dev_clock {
            return Err("dev_clock_start_ms needs the dev clock (dev_clock = true)".into());
        }
        if self.move_timeout_ms == 0 || self.challenge_ttl_ms == 0 {
            return Err("move_timeout_ms and challenge_ttl_ms must be more than zero".into());
        }
        if self.rate_per_ip == 0
            || self.rate_per_address == 0
            || self.rate_burst == 0
            || self.ws_rate == 0
            || self.replay_events_per_ip == 0
            || self.log_lines_per_ip == 0
        {
            return Err("rate limits must be more than zero".into());
        }
        if self.max_websockets == 0
            || self.max_connections_per_ip == 0
            || self.max_websockets_per_ip == 0
            || self.max_long_polls_per_ip == 0
            || self.max_mcp_sessions_per_ip == 0
            || self.mcp_session_idle_ms == 0
            || self.max_a2a_streams_per_ip == 0
        {
            return Err(
                "max_websockets, mcp_session_idle_ms and the per-IP connection, WebSocket, long-poll, MCP session and A2A stream caps must be more than zero"
                    .into(),
            );
        }
        let url = &self.public_url;
        if !(url.is_empty() || url.starts_with("http://") || url.starts_with("https://")) {
            return Err("public_url must start with http:// or https://".into());
        }
        if self.ws_send_queue == 0 || self.max_body_bytes < 256 {
            return Err("ws_send_queue must be positive and max_body_bytes at least 256".into());
        }
        Ok(())
    }
}
