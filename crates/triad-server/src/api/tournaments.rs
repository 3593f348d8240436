//! `/api/tournaments`: arenas and Swiss events. Creating, entering, leaving, pausing and
//! cancelling are engine commands; the list, a tournament's standings, its pairings and
//! its countdown are views of the engine's state. Live changes come on the WebSocket's
//! `tournament:<id>` topic (its events, its games' starts and ends, its pool's transfers)
//! and the `tournaments` topic (created, started, finished, cancelled).
//!
//! Whether a player is a bot is the profile's bot mark ([`crate::profiles`]), never what a
//! request says.

use std::collections::HashMap;

use axum::{
    Json,
    extract::{Path, Query, State},
    http::{HeaderMap, StatusCode},
    response::IntoResponse,
};
use serde::{Deserialize, Serialize};
use triad_engine::tournament::pairing::{Outcome, Standing};
use triad_engine::tournament::{EntrantStatus, Prize};
use triad_engine::{
    Address, Command, Entry, Format, Receipt, Tournament, TournamentId, TournamentPhase,
    TournamentSpec,
};
use triad_rules::GameKind;
use utoipa::{IntoParams, ToSchema};

use super::{
    ApiJson, ApiState, Authed,
    error::{Api, ApiError, ErrorBody},
    games::{Amount, idempotency_key, limit},
};
use crate::core::CoreError;
use crate::profiles::Profile;

/// How a tournament is played, as a request states it.
#[derive(Copy, Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FormatKind {
    /// Pair again at once, for a fixed time.
    Arena,
    /// A fixed number of rounds; everyone plays each round.
    Swiss,
}

/// A tournament to create.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTournamentRequest {
    /// Its name: 1-60 characters.
    #[schema(example = "Friday arena")]
    pub name: String,
    /// tic-tac-toe or sos.
    #[schema(value_type = String, example = "tic-tac-toe")]
    pub game: GameKind,
    /// arena or swiss.
    pub format: FormatKind,
    /// An arena's length in minutes (1-1440).
    #[serde(default)]
    pub minutes: Option<u32>,
    /// A Swiss event's rounds (1-30).
    #[serde(default)]
    pub rounds: Option<u8>,
    /// When it starts, in seconds from now (default 60). Or `starts_at_ms`.
    #[serde(default)]
    pub starts_in_seconds: Option<u64>,
    /// When it starts, in milliseconds since the Unix epoch.
    #[serde(default)]
    pub starts_at_ms: Option<u64>,
    /// Who may enter: people, bots or everyone (default).
    #[serde(default = "everyone")]
    #[schema(value_type = String, example = "everyone")]
    pub entry: Entry,
    /// Each entrant's fee in minor units (0, the default, for a free tournament; only the
    /// owner creates staked ones).
    #[serde(default)]
    pub entry_fee: Amount,
    /// The prizes: the share of the pool, in basis points, for rank 1, 2, …; the reserve
    /// keeps the rest.
    #[serde(default)]
    pub prizes_bps: Vec<u32>,
    /// The most entrants (2-10000, default 500).
    #[serde(default)]
    pub max_players: Option<u32>,
}

fn everyone() -> Entry {
    Entry::Everyone
}

impl CreateTournamentRequest {
    fn spec(self, now_ms: u64) -> Result<TournamentSpec, ApiError> {
        let bad = |m: &str| ApiError::with_message(Api::InvalidParameter, m);
        let format = match (self.format, self.minutes, self.rounds) {
            (FormatKind::Arena, Some(minutes), None) => Format::Arena {
                duration_ms: u64::from(minutes) * 60_000,
            },
            (FormatKind::Swiss, None, Some(rounds)) => Format::Swiss { rounds },
            (FormatKind::Arena, _, _) => return Err(bad("an arena takes minutes, not rounds")),
            (FormatKind::Swiss, _, _) => {
                return Err(bad("a Swiss event takes rounds, not minutes"));
            }
        };
        let starts_at_ms = match (self.starts_at_ms, self.starts_in_seconds) {
            (Some(_), Some(_)) => {
                return Err(bad("give starts_at_ms or starts_in_seconds, not both"));
            }
            (Some(at), None) => at,
            (None, seconds) => now_ms.saturating_add(seconds.unwrap_or(60).saturating_mul(1000)),
        };
        Ok(TournamentSpec {
            name: self.name,
            game: self.game,
            format,
            starts_at_ms,
            entry: self.entry,
            entry_fee: self.entry_fee.0,
            prizes_bps: self.prizes_bps,
            max_players: self.max_players.unwrap_or(500),
        })
    }
}

/// A tournament in a list.
#[derive(Debug, Serialize, ToSchema)]
pub struct TournamentSummary {
    /// Its id.
    pub id: u64,
    /// Its name.
    pub name: String,
    /// tic-tac-toe or sos.
    pub game: &'static str,
    /// arena or swiss.
    pub format: &'static str,
    /// An arena's length in milliseconds.
    pub duration_ms: Option<u64>,
    /// A Swiss event's rounds.
    pub rounds: Option<u8>,
    /// upcoming, running, finished or cancelled.
    pub phase: &'static str,
    /// Who may enter: people, bots or everyone.
    pub entry: &'static str,
    /// Each entrant's fee in minor units.
    pub entry_fee: String,
    /// The pool: the fees paid, until the prizes are.
    pub pool: String,
    /// The prize shares, in basis points of the pool, by rank.
    pub prizes_bps: Vec<u32>,
    /// Entrants in (not those refunded before the start).
    pub players: u32,
    /// The most entrants.
    pub max_players: u32,
    /// The fewest it starts with (two, and one per prize place).
    pub min_players: u32,
    /// The Swiss round, or the arena's wave, paired last (0 before the start).
    pub round: u32,
    /// When it starts (ms since the Unix epoch).
    pub starts_at_ms: u64,
    /// When an arena's time is up, once it has started.
    pub ends_at_ms: Option<u64>,
    /// When it finished or was cancelled.
    pub ended_at_ms: Option<u64>,
    /// Who created it.
    pub organizer: String,
    /// Who won, once it has finished.
    pub winner: Option<String>,
}

impl TournamentSummary {
    fn new(t: &Tournament) -> TournamentSummary {
        let (format, duration_ms, rounds) = match t.spec.format {
            Format::Arena { duration_ms } => ("arena", Some(duration_ms), None),
            Format::Swiss { rounds } => ("swiss", None, Some(rounds)),
        };
        TournamentSummary {
            id: t.id.0,
            name: t.spec.name.clone(),
            game: t.spec.game.name(),
            format,
            duration_ms,
            rounds,
            phase: t.phase.name(),
            entry: entry_name(t.spec.entry),
            entry_fee: t.spec.entry_fee.to_string(),
            pool: t.pool().to_string(),
            prizes_bps: t.spec.prizes_bps.clone(),
            players: t.players(),
            max_players: t.spec.max_players,
            min_players: t.spec.min_players(),
            round: t.round,
            starts_at_ms: t.spec.starts_at_ms,
            ends_at_ms: t.ends_at_ms(),
            ended_at_ms: t.ended_ms,
            organizer: t.organizer.to_string(),
            winner: (t.phase == TournamentPhase::Finished)
                .then(|| {
                    t.standings()
                        .first()
                        .map(|s| t.info(s.entrant).address.to_string())
                })
                .flatten(),
        }
    }
}

fn entry_name(entry: Entry) -> &'static str {
    match entry {
        Entry::People => "people",
        Entry::Bots => "bots",
        Entry::Everyone => "everyone",
    }
}

fn status_name(status: EntrantStatus) -> &'static str {
    match status {
        EntrantStatus::Active => "active",
        EntrantStatus::Paused => "paused",
        EntrantStatus::Withdrawn => "withdrawn",
        EntrantStatus::Refunded => "refunded",
    }
}

/// A player as a tournament shows them.
#[derive(Debug, Serialize, ToSchema)]
pub struct EntrantView {
    /// The address: the identity.
    pub address: String,
    /// The display name, if they took one.
    pub name: Option<String>,
    /// Whether the account is a bot.
    pub bot: bool,
}

/// One row of the standings.
#[derive(Debug, Serialize, ToSchema)]
pub struct StandingView {
    /// The rank, from 1 (no ties: the tie-breaks and then the entry order decide).
    pub rank: u32,
    /// Who.
    pub player: EntrantView,
    /// active, paused or withdrawn.
    pub status: &'static str,
    /// Points: 2 a win, 1 a draw (a Swiss bye is worth a win; an arena's streak doubles).
    pub score: u32,
    /// An arena player's double-points streak: two wins in a row, until a game is not won.
    pub on_fire: bool,
    /// Games won, drawn and lost.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
    /// Swiss byes received.
    pub byes: u32,
    /// Buchholz: the sum of the Swiss scores of every opponent met.
    pub buchholz: u32,
    /// Sonneborn–Berger: the scores of the opponents beaten, plus half those drawn.
    pub sonneborn_berger: f64,
    /// Whether they are in a game of the tournament now.
    pub playing: bool,
}

/// A game being played.
#[derive(Debug, Serialize, ToSchema)]
pub struct PairingView {
    /// The match: `/api/matches/{id}`.
    pub match_id: u64,
    /// Who moves first.
    pub first: EntrantView,
    /// Who moves second.
    pub second: EntrantView,
}

/// A prize paid.
#[derive(Debug, Serialize, ToSchema)]
pub struct PrizeView {
    /// The final rank.
    pub rank: u32,
    /// Who.
    pub player: EntrantView,
    /// How much, in minor units.
    pub amount: String,
}

/// A tournament with its standings, the games being played and its prizes.
#[derive(Debug, Serialize, ToSchema)]
pub struct TournamentView {
    /// What it is and where it stands.
    #[serde(flatten)]
    pub summary: TournamentSummary,
    /// When the clock next moves it on: its start, an arena's end, a Swiss event's next
    /// round (once no game is being played). Null when it waits on games.
    pub next_at_ms: Option<u64>,
    /// The server's time now, for a countdown (ms since the Unix epoch).
    pub now_ms: u64,
    /// The standings, best first (the first `limit`).
    pub standings: Vec<StandingView>,
    /// The games being played.
    pub pairings: Vec<PairingView>,
    /// The prizes paid, once it has finished.
    pub prizes: Vec<PrizeView>,
    /// The asking player's own row and game, when the request names a player.
    pub me: Option<MyPlace>,
}

/// The asking player's place.
#[derive(Debug, Serialize, ToSchema)]
pub struct MyPlace {
    /// Their row of the standings.
    pub standing: StandingView,
    /// Their game being played, if any: `/api/matches/{id}`.
    pub match_id: Option<u64>,
}

/// Which tournaments.
#[derive(Debug, Deserialize, IntoParams)]
pub struct ListQuery {
    /// open (upcoming and running, the default), finished (finished and cancelled) or all.
    pub phase: Option<String>,
    /// At most this many (1-100, default 50), newest first.
    pub limit: Option<u32>,
}

/// A page of tournaments.
#[derive(Debug, Serialize, ToSchema)]
pub struct TournamentList {
    /// Newest first.
    pub tournaments: Vec<TournamentSummary>,
}

/// The tournaments: upcoming and running by default.
#[utoipa::path(get, path = "/api/tournaments", tag = "tournaments", params(ListQuery),
    responses((status = 200, body = TournamentList), (status = "4XX", body = ErrorBody)))]
pub async fn list(
    State(state): State<ApiState>,
    Query(q): Query<ListQuery>,
) -> Result<Json<TournamentList>, ApiError> {
    let limit = limit(q.limit, 50, 100)? as usize;
    let wanted: fn(TournamentPhase) -> bool = match q.phase.as_deref() {
        None | Some("open") => TournamentPhase::is_open,
        Some("finished") => |p: TournamentPhase| !p.is_open(),
        Some("all") => |_| true,
        Some(_) => {
            return Err(ApiError::with_message(
                Api::InvalidParameter,
                "phase is open, finished or all",
            ));
        }
    };
    // The engine's first (every open tournament, and those that ended within the retention
    // window), then the archive's (every tournament that ended since it was kept). One
    // that ends between the two reads is archived before the engine shows it ended, and
    // one found in both is the same.
    let mut tournaments: Vec<TournamentSummary> = {
        let engine = state.core.read().await;
        engine
            .tournaments()
            .filter(|t| wanted(t.phase))
            .take(limit)
            .map(TournamentSummary::new)
            .collect()
    };
    if wanted(TournamentPhase::Finished) {
        let page = u32::try_from(limit).unwrap_or(u32::MAX);
        for t in state.store.ended_tournaments(page).await? {
            if !tournaments.iter().any(|s| s.id == t.id.0) {
                tournaments.push(TournamentSummary::new(&t));
            }
        }
        tournaments.sort_unstable_by_key(|s| std::cmp::Reverse(s.id));
        tournaments.truncate(limit);
    }
    Ok(Json(TournamentList { tournaments }))
}

/// Which part of a tournament.
#[derive(Debug, Deserialize, IntoParams)]
pub struct TournamentQuery {
    /// The standings' first rows to show (1-1000, default 100).
    pub limit: Option<u32>,
    /// A player's address: their own row and game come in `me`, wherever they rank.
    pub player: Option<String>,
}

/// A tournament: its standings, the games being played, its prizes and its countdown.
#[utoipa::path(get, path = "/api/tournaments/{id}", tag = "tournaments",
    params(("id" = u64, Path, description = "Tournament id"), TournamentQuery),
    responses((status = 200, body = TournamentView), (status = "4XX", body = ErrorBody)))]
pub async fn get(
    State(state): State<ApiState>,
    Path(id): Path<u64>,
    Query(q): Query<TournamentQuery>,
) -> Result<Json<TournamentView>, ApiError> {
    let limit = limit(q.limit, 100, 1000)? as usize;
    let player = q
        .player
        .as_deref()
        .map(str::parse::<Address>)
        .transpose()
        .map_err(|_| ApiError::new(Api::InvalidAddress))?;
    view(&state, TournamentId(id), limit, player)
        .await
        .map(Json)
}

/// Builds a tournament's view: the engine's state (or, for one that ended and left its
/// memory, the archive's), with the shown players' profiles.
async fn view(
    state: &ApiState,
    id: TournamentId,
    limit: usize,
    player: Option<Address>,
) -> Result<TournamentView, ApiError> {
    let now_ms = state.core.clock().now_ms();
    let held = {
        let engine = state.core.read().await;
        engine
            .tournament(id)
            .map(|t| Draft::new(t, engine.tournament_next_ms(id), limit, player))
    };
    let mut draft = match held {
        Some(draft) => draft,
        None => {
            let t = state
                .store
                .ended_tournament(id)
                .await?
                .ok_or(triad_engine::EngineError::UnknownTournament)?;
            // An ended tournament's clock has nothing more to do.
            Draft::new(&t, None, limit, player)
        }
    };
    let profiles = state.profiles.of_each(&draft.shown).await?;
    draft.view.now_ms = now_ms;
    let name = |e: &mut EntrantView| {
        if let Some(p) = e
            .address
            .parse()
            .ok()
            .and_then(|a: Address| profiles.get(&a))
        {
            apply_profile(e, p);
        }
    };
    let v = &mut draft.view;
    v.standings.iter_mut().for_each(|s| name(&mut s.player));
    for p in &mut v.pairings {
        name(&mut p.first);
        name(&mut p.second);
    }
    v.prizes.iter_mut().for_each(|p| name(&mut p.player));
    if let Some(me) = &mut v.me {
        name(&mut me.standing.player);
    }
    Ok(draft.view)
}

fn apply_profile(e: &mut EntrantView, p: &Profile) {
    e.name.clone_from(&p.name);
    e.bot |= p.bot;
}

/// A view read from the engine under its lock, before the profiles are looked up.
struct Draft {
    view: TournamentView,
    shown: Vec<Address>,
}

impl Draft {
    /// `next_at_ms`: when the clock next moves it on
    /// ([`Engine::tournament_next_ms`](triad_engine::Engine::tournament_next_ms)).
    fn new(
        t: &Tournament,
        next_at_ms: Option<u64>,
        limit: usize,
        player: Option<Address>,
    ) -> Draft {
        let standings = t.standings();
        let playing: HashMap<u32, u64> = t
            .playing
            .iter()
            .flat_map(|(m, p)| [(p.first, m.0), (p.second, m.0)])
            .collect();
        let entrant = |e: u32| {
            let info = t.info(e);
            EntrantView {
                address: info.address.to_string(),
                name: None,
                bot: info.bot,
            }
        };
        let row = |s: &Standing| {
            let record = &t.records[s.entrant as usize];
            let count = |o: Outcome| {
                u32::try_from(record.games.iter().filter(|g| g.outcome == o).count())
                    .unwrap_or(u32::MAX)
            };
            StandingView {
                rank: s.rank,
                player: entrant(s.entrant),
                status: status_name(t.info(s.entrant).status),
                score: s.score,
                on_fire: matches!(t.spec.format, Format::Arena { .. }) && record.on_fire(),
                wins: count(Outcome::Win),
                draws: count(Outcome::Draw),
                losses: count(Outcome::Loss),
                byes: record.byes,
                buchholz: s.tie_breaks.buchholz,
                sonneborn_berger: f64::from(s.tie_breaks.sonneborn_berger_x2) / 2.0,
                playing: playing.contains_key(&s.entrant),
            }
        };
        let me = player.and_then(|a| {
            let e = t.entrant(a)?;
            let s = standings.iter().find(|s| s.entrant == e)?;
            Some(MyPlace {
                standing: row(s),
                match_id: playing.get(&e).copied(),
            })
        });
        let prizes = t
            .prizes
            .iter()
            .map(|p: &Prize| PrizeView {
                rank: p.rank,
                player: EntrantView {
                    address: p.address.to_string(),
                    name: None,
                    bot: t.entrant(p.address).is_some_and(|e| t.info(e).bot),
                },
                amount: p.amount.to_string(),
            })
            .collect();
        let view = TournamentView {
            summary: TournamentSummary::new(t),
            next_at_ms,
            now_ms: 0,
            standings: standings.iter().take(limit).map(row).collect(),
            pairings: t
                .playing
                .iter()
                .map(|(m, p)| PairingView {
                    match_id: m.0,
                    first: entrant(p.first),
                    second: entrant(p.second),
                })
                .collect(),
            prizes,
            me,
        };
        let mut shown: Vec<Address> = view
            .standings
            .iter()
            .map(|s| &s.player)
            .chain(view.pairings.iter().flat_map(|p| [&p.first, &p.second]))
            .chain(view.me.iter().map(|m| &m.standing.player))
            .chain(view.prizes.iter().map(|p| &p.player))
            .filter_map(|e| e.address.parse().ok())
            .collect();
        shown.sort_unstable();
        shown.dedup();
        Draft { view, shown }
    }
}

/// What a tournament command did.
#[derive(Debug, Serialize, ToSchema)]
pub struct TournamentReceipt {
    /// The tournament, as it now is.
    pub tournament: TournamentSummary,
    /// The events it caused (empty for a duplicate).
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<triad_engine::Event>,
    /// True when the command repeated one already applied (same idempotency key), which
    /// changed nothing.
    pub duplicate: bool,
}

/// Runs a tournament command and answers with the tournament after it.
async fn run(
    state: &ApiState,
    actor: Address,
    command: Command,
    headers: &HeaderMap,
    id: Option<TournamentId>,
) -> Result<impl IntoResponse + use<>, ApiError> {
    let key = idempotency_key(headers)?;
    let unknown = triad_engine::EngineError::UnknownTournament;
    let receipt: Receipt = match state.core.execute(actor, command, key).await {
        // The engine forgets a tournament some time after its end; the archive says it
        // is over, which is what its player needs to hear.
        Err(CoreError::Engine(triad_engine::EngineError::UnknownTournament)) => {
            let ended = match id {
                Some(id) => state.store.ended_tournament(id).await?,
                None => None,
            };
            return Err(ended
                .map_or(unknown, |t| triad_engine::EngineError::TournamentClosed {
                    phase: t.phase,
                })
                .into());
        }
        result => result?,
    };
    let id = id.or_else(|| {
        receipt
            .events
            .iter()
            .find_map(triad_engine::Event::tournament_id)
    });
    let held = {
        let engine = state.core.read().await;
        id.and_then(|id| engine.tournament(id))
            .map(TournamentSummary::new)
    };
    // A duplicate of a command on a tournament forgotten since: the archive has it.
    let tournament = match (held, id) {
        (Some(summary), _) => summary,
        (None, Some(id)) => state
            .store
            .ended_tournament(id)
            .await?
            .map(|t| TournamentSummary::new(&t))
            .ok_or(unknown)?,
        (None, None) => return Err(unknown.into()),
    };
    let status = if receipt.duplicate.is_some() {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((
        status,
        Json(TournamentReceipt {
            tournament,
            events: receipt.events,
            duplicate: receipt.duplicate.is_some(),
        }),
    ))
}

/// Create a tournament. The owner may create any; other players free ones, when the
/// server lets them (`players_may_create_tournaments`).
#[utoipa::path(post, path = "/api/tournaments", tag = "tournaments", request_body = CreateTournamentRequest,
    responses((status = 201, body = TournamentReceipt), (status = 200, body = TournamentReceipt, description = "a duplicate"), (status = "4XX", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn create(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    ApiJson(req): ApiJson<CreateTournamentRequest>,
) -> Result<impl IntoResponse, ApiError> {
    let spec = req.spec(state.core.clock().now_ms())?;
    run(
        &state,
        me,
        Command::CreateTournament { spec },
        &headers,
        None,
    )
    .await
}

/// Enter a tournament, paying its entry fee into its pool (or come back to one after
/// leaving it, without paying again). An account marked as a bot enters as one.
#[utoipa::path(post, path = "/api/tournaments/{id}/join", tag = "tournaments",
    params(("id" = u64, Path, description = "Tournament id")),
    responses((status = 201, body = TournamentReceipt), (status = 200, body = TournamentReceipt, description = "a duplicate"), (status = "4XX", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn join(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    Path(id): Path<u64>,
) -> Result<impl IntoResponse, ApiError> {
    let bot = state.profiles.of(me).await?.bot;
    let tournament = TournamentId(id);
    let command = Command::JoinTournament { tournament, bot };
    run(&state, me, command, &headers, Some(tournament)).await
}

/// Leave a tournament: before it starts, with the fee refunded; after, withdrawn from the
/// pairings, keeping the score so far.
#[utoipa::path(post, path = "/api/tournaments/{id}/leave", tag = "tournaments",
    params(("id" = u64, Path, description = "Tournament id")),
    responses((status = 201, body = TournamentReceipt), (status = 200, body = TournamentReceipt, description = "a duplicate"), (status = "4XX", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn leave(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    Path(id): Path<u64>,
) -> Result<impl IntoResponse, ApiError> {
    let tournament = TournamentId(id);
    let command = Command::LeaveTournament { tournament };
    run(&state, me, command, &headers, Some(tournament)).await
}

/// Pause or resume.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseRequest {
    /// true to pause (not be paired), false to resume.
    pub paused: bool,
}

/// Pause (not be paired until resumed) or resume in a running tournament.
#[utoipa::path(post, path = "/api/tournaments/{id}/pause", tag = "tournaments",
    params(("id" = u64, Path, description = "Tournament id")), request_body = PauseRequest,
    responses((status = 201, body = TournamentReceipt), (status = 200, body = TournamentReceipt, description = "a duplicate"), (status = "4XX", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn pause(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    Path(id): Path<u64>,
    ApiJson(req): ApiJson<PauseRequest>,
) -> Result<impl IntoResponse, ApiError> {
    let tournament = TournamentId(id);
    let command = Command::PauseTournament {
        tournament,
        paused: req.paused,
    };
    run(&state, me, command, &headers, Some(tournament)).await
}

/// Call off a tournament that has not finished, refunding every fee (the owner or its
/// organizer).
#[utoipa::path(post, path = "/api/tournaments/{id}/cancel", tag = "tournaments",
    params(("id" = u64, Path, description = "Tournament id")),
    responses((status = 201, body = TournamentReceipt), (status = 200, body = TournamentReceipt, description = "a duplicate"), (status = "4XX", body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn cancel(
    State(state): State<ApiState>,
    Authed(me): Authed,
    headers: HeaderMap,
    Path(id): Path<u64>,
) -> Result<impl IntoResponse, ApiError> {
    let tournament = TournamentId(id);
    let command = Command::CancelTournament { tournament };
    run(&state, me, command, &headers, Some(tournament)).await
}
