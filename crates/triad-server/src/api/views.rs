//! The JSON shapes the API returns, built from engine state.

use serde::Serialize;
use triad_engine::{Address, Config, Match, PlayerStats, Seat};
use triad_rules::{Cell, GameKind, Player};
use utoipa::ToSchema;

/// One seat of a match.
#[derive(Debug, Serialize, ToSchema)]
pub struct SeatView {
    /// `human` or `computer`.
    pub kind: &'static str,
    /// The player's address (humans only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// The computer's strength (computer only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// The marks this seat places: `["X"]`, `["O"]` or `["S","O"]`.
    pub marks: Vec<String>,
    /// The player's display name, if any (humans only; `GET /api/matches/{id}` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Whether the player is a bot (humans only; `GET /api/matches/{id}` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bot: Option<bool>,
    /// The seat's address, to look its profile up.
    #[serde(skip)]
    pub(crate) who: Option<Address>,
}

/// A move already made.
#[derive(Debug, Serialize, ToSchema)]
pub struct MoveView {
    /// The number of marks after it.
    pub seq: u8,
    /// Cell 0-8.
    pub cell: u8,
    /// The mark.
    pub mark: String,
    /// `first` or `second`.
    pub player: &'static str,
}

/// A pending deadline.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeadlineView {
    /// When, in ms since the epoch.
    pub at_ms: u64,
    /// `challenge_expires`, `abort` or `timeout`.
    pub kind: String,
}

/// How a match ended.
#[derive(Debug, Serialize, ToSchema)]
pub struct OutcomeView {
    /// win, draw, forfeit, timeout, cancelled, declined, expired or aborted.
    pub reason: &'static str,
    /// `first`, `second`, or null.
    pub winner: Option<&'static str>,
    /// The winner's address, if a person won.
    pub winner_address: Option<String>,
    /// Every cell of every winning line.
    pub cells: Vec<u8>,
    /// When it ended.
    pub ended_ms: u64,
    /// Each player's rating before and after the game, `[first, second]`, when it moved
    /// ratings (a played game between two people); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratings: Option<Vec<RatingChangeView>>,
}

/// A player's rating before and after a game, in whole points.
#[derive(Debug, Serialize, ToSchema)]
pub struct RatingChangeView {
    /// Before the game.
    pub before: i32,
    /// After it.
    pub after: i32,
    /// `after - before`: what the web app shows as ±N.
    pub change: i32,
}

/// An open challenge's terms.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChallengeView {
    /// Who challenged.
    pub challenger: String,
    /// Who is challenged.
    pub opponent: String,
    /// challenger, opponent or random.
    pub first: String,
    /// When it lapses.
    pub expires_at_ms: u64,
}

/// A match's full state.
#[derive(Debug, Serialize, ToSchema)]
pub struct MatchView {
    /// The id.
    pub id: u64,
    /// tic-tac-toe or sos.
    pub game: &'static str,
    /// Each player's stake in minor units, as a decimal string.
    pub stake: String,
    /// queue, challenge, computer, rematch or tournament.
    pub origin: &'static str,
    /// The match it is a rematch of.
    pub rematch_of: Option<u64>,
    /// The tournament that paired it: `/api/tournaments/{id}`.
    pub tournament: Option<u64>,
    /// The tournament's Swiss round, or its arena's pairing wave, from 1.
    pub round: Option<u32>,
    /// waiting, ready, in_progress or finished.
    pub phase: &'static str,
    /// Who created it.
    pub host: String,
    /// `[first, second]` once both seats are filled.
    pub players: Option<Vec<SeatView>>,
    /// The 9-character state string, `-` for empty (the `cryptosos` contract's `getGameState()`).
    pub board: String,
    /// `first` or `second` while in play.
    pub turn: Option<&'static str>,
    /// The address to move, if a person.
    pub turn_address: Option<String>,
    /// The number of marks on the board; the next move's `seq` is one more.
    pub seq: u8,
    /// The moves so far.
    pub moves: Vec<MoveView>,
    /// The pending deadline.
    pub deadline: Option<DeadlineView>,
    /// When the waiting host may cancel.
    pub cancel_allowed_at_ms: Option<u64>,
    /// How it ended.
    pub outcome: Option<OutcomeView>,
    /// The open challenge's terms.
    pub challenge: Option<ChallengeView>,
    /// Who offered a rematch.
    pub rematch_offer: Option<&'static str>,
    /// The rematch made from it.
    pub rematch: Option<u64>,
    /// When it was created.
    pub created_ms: u64,
    /// When it started or the last move was made (later by any outage since, which the
    /// server gives back to the clocks: the deadline runs from here).
    pub last_activity_ms: u64,
}

pub(crate) fn player_name(p: Player) -> &'static str {
    match p {
        Player::First => "first",
        Player::Second => "second",
    }
}

fn plain<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

fn seat_view(seat: Seat, game: GameKind, player: Player) -> SeatView {
    let marks = game
        .marks_for(player)
        .iter()
        .map(|m| m.char().to_string())
        .collect();
    match seat {
        Seat::Human(a) => SeatView {
            kind: "human",
            address: Some(a.to_string()),
            level: None,
            marks,
            name: None,
            bot: None,
            who: Some(a),
        },
        Seat::Computer(level) => SeatView {
            kind: "computer",
            address: None,
            level: Some(plain(&level)),
            marks,
            name: None,
            bot: None,
            who: None,
        },
    }
}

impl MatchView {
    /// The people seated, to look their profiles up ([`MatchView::with_profiles`]).
    #[must_use]
    pub fn seated(&self) -> Vec<Address> {
        self.players
            .iter()
            .flatten()
            .filter_map(|s| s.who)
            .collect()
    }

    /// The same view with each person's display name and bot mark on their seat.
    #[must_use]
    pub fn with_profiles(
        mut self,
        profiles: &std::collections::HashMap<Address, crate::profiles::Profile>,
    ) -> MatchView {
        for seat in self.players.iter_mut().flatten() {
            if let Some(who) = seat.who {
                let profile = profiles.get(&who);
                seat.name = profile.and_then(|p| p.name.clone());
                seat.bot = Some(profile.is_some_and(|p| p.bot));
            }
        }
        self
    }

    /// The view of a match under a configuration.
    #[must_use]
    pub fn new(m: &Match, config: &Config) -> MatchView {
        let game = m.game();
        let turn = m.turn();
        MatchView {
            id: m.id.0,
            game: game.name(),
            stake: m.stake.to_string(),
            origin: match m.origin {
                triad_engine::Origin::Queue => "queue",
                triad_engine::Origin::Challenge => "challenge",
                triad_engine::Origin::Computer => "computer",
                triad_engine::Origin::Rematch { .. } => "rematch",
                triad_engine::Origin::Tournament { .. } => "tournament",
            },
            rematch_of: match m.origin {
                triad_engine::Origin::Rematch { of } => Some(of.0),
                _ => None,
            },
            tournament: match m.origin {
                triad_engine::Origin::Tournament { tournament, .. } => Some(tournament.0),
                _ => None,
            },
            round: match m.origin {
                triad_engine::Origin::Tournament { round, .. } => Some(round),
                _ => None,
            },
            phase: m.phase.name(),
            host: m.host.to_string(),
            players: m.seats.map(|s| {
                Player::BOTH
                    .iter()
                    .map(|&p| seat_view(s[p.index()], game, p))
                    .collect()
            }),
            board: m.game_state(),
            turn: turn.map(player_name),
            turn_address: turn
                .and_then(|p| m.seat(p))
                .and_then(|s| s.address())
                .map(|a| a.to_string()),
            seq: m.seq(),
            moves: m
                .moves
                .iter()
                .enumerate()
                .map(|(i, mv)| MoveView {
                    seq: i as u8 + 1,
                    cell: mv.cell.index(),
                    mark: mv.mark.char().to_string(),
                    player: player_name(Player::to_move_after(i as u32)),
                })
                .collect(),
            deadline: m.deadline(config).map(|d| DeadlineView {
                at_ms: d.at_ms,
                kind: plain(&d.kind),
            }),
            cancel_allowed_at_ms: (m.phase == triad_engine::Phase::Waiting)
                .then(|| m.cancel_allowed_at_ms(config)),
            outcome: m.result.map(|r| OutcomeView {
                reason: r.reason.name(),
                winner: r.winner.map(player_name),
                winner_address: r
                    .winner
                    .and_then(|p| m.seat(p))
                    .and_then(|s| s.address())
                    .map(|a| a.to_string()),
                cells: r.cells.iter().map(Cell::index).collect(),
                ended_ms: r.ended_ms,
                ratings: r.ratings.map(|changes| {
                    changes
                        .iter()
                        .map(|c| RatingChangeView {
                            before: c.before,
                            after: c.after,
                            change: c.after - c.before,
                        })
                        .collect()
                }),
            }),
            challenge: m.challenge.map(|c| ChallengeView {
                challenger: c.challenger.to_string(),
                opponent: c.opponent.to_string(),
                first: plain(&c.first),
                expires_at_ms: c.expires_at_ms,
            }),
            rematch_offer: m.rematch_offer.map(player_name),
            rematch: m.rematch.map(|r| r.0),
            created_ms: m.created_ms,
            last_activity_ms: m.last_activity_ms,
        }
    }
}

/// A Glicko-2 rating.
#[derive(Debug, Serialize, ToSchema)]
pub struct RatingView {
    /// The rating (1500 to start).
    pub rating: f64,
    /// The deviation (350 to start).
    pub deviation: f64,
    /// The volatility.
    pub volatility: f64,
}

/// A player's public record.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlayerView {
    /// The address: the player's identity.
    pub address: String,
    /// The display name, if the player took one (shown beside the address).
    pub name: Option<String>,
    /// Whether the account is a bot (an agent said so; never taken away).
    pub bot: bool,
    /// Games won.
    pub wins: u32,
    /// Games played (cancelled, declined, expired and aborted matches do not count).
    pub games: u32,
    /// Games drawn.
    pub draws: u32,
    /// Tournaments won.
    pub tournament_wins: u32,
    /// The rating.
    pub rating: RatingView,
    /// The active match, if any (the `tictactoe` contract's board by address).
    pub active_match: Option<u64>,
    /// The puzzle rating, apart from the rating of played games (in a player's own view,
    /// not in the leaderboard's rows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub puzzles: Option<super::puzzles::PuzzleRecordView>,
}

impl PlayerView {
    /// The view of a player's stats.
    #[must_use]
    pub fn new(address: Address, stats: PlayerStats, active: Option<u64>) -> PlayerView {
        PlayerView {
            address: address.to_string(),
            name: None,
            bot: false,
            wins: stats.wins,
            games: stats.games,
            draws: stats.draws,
            tournament_wins: stats.tournament_wins,
            rating: RatingView {
                rating: stats.rating.rating,
                deviation: stats.rating.deviation,
                volatility: stats.rating.volatility,
            },
            active_match: active,
            puzzles: None,
        }
    }

    /// The same view with the player's profile (display name and bot mark).
    #[must_use]
    pub fn with_profile(mut self, profile: crate::profiles::Profile) -> PlayerView {
        self.name = profile.name;
        self.bot = profile.bot;
        self
    }

    /// The same view with the player's puzzle record.
    #[must_use]
    pub fn with_puzzles(mut self, record: triad_engine::PuzzleRecord) -> PlayerView {
        self.puzzles = Some(record.into());
        self
    }
}
