//! Triad's MCP tools: their inputs (with the JSON schemas a model reads) and the
//! `#[tool_router]` of [`Triad`]. Each tool calls the REST handler of the same action as the
//! request's logged-in address and answers with its JSON and a text form; a refusal is the
//! handler's error body in a tool error.
//!
//! An optional input is absent for its default, never `null`: its schema is the plain type
//! (`schemars(with = …)`), which every tool-schema dialect reads (a nullable `type` array
//! is not portable; the MCP Inspector's `--strict` check says so).

use std::time::Duration;

use axum::{
    extract::{Path, Query, State},
    http::{HeaderMap, request::Parts},
};
use rmcp::{
    ErrorData,
    handler::server::{common::Extension, wrapper::Parameters},
    model::CallToolResult,
    schemars::{self, JsonSchema},
    tool, tool_router,
};
use serde::Deserialize;
use serde_json::{Value, json};
use triad_engine::Address;
use triad_rules::{AnyGame, GameKind};

use super::{
    server::{Follow, Refusal, Triad, answer, answered, caller},
    text,
};
use crate::api::{
    ApiJson, Authed, ClientIp, analysis,
    error::{Api, ApiError},
    games::{self, Amount},
    ledger, tournaments,
};

/// A game, as the tools name it.
#[derive(Copy, Clone, Debug, Deserialize, JsonSchema)]
pub enum GameName {
    /// Tic-tac-toe: X and O; three in a row wins.
    #[serde(rename = "tic-tac-toe")]
    TicTacToe,
    /// SOS: both place S or O; whoever spells S-O-S in a line wins.
    #[serde(rename = "sos")]
    Sos,
}

impl From<GameName> for GameKind {
    fn from(g: GameName) -> GameKind {
        match g {
            GameName::TicTacToe => GameKind::TicTacToe,
            GameName::Sos => GameKind::Sos,
        }
    }
}

/// The computer's strength.
#[derive(Copy, Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LevelName {
    /// Never loses.
    #[default]
    Perfect,
    /// Mostly sound, sometimes careless.
    Casual,
    /// Random legal moves.
    Random,
}

/// A side of the board.
#[derive(Copy, Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SideName {
    /// Moves first (X in tic-tac-toe).
    #[default]
    First,
    /// Moves second (O in tic-tac-toe).
    Second,
}

/// A mark.
#[derive(Copy, Clone, Debug, Deserialize, JsonSchema)]
pub enum MarkName {
    /// X (tic-tac-toe, first player).
    X,
    /// O (tic-tac-toe's second player; either player in SOS).
    O,
    /// S (SOS, either player).
    S,
}

/// Who moves first in a challenged match.
#[derive(Copy, Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FirstName {
    /// The challenger (you).
    #[default]
    Challenger,
    /// The challenged player.
    Opponent,
    /// Drawn at random when the challenge is accepted.
    Random,
}

/// Reads a value of one of the engine's types from its wire name.
fn from_name<T: serde::de::DeserializeOwned>(name: &str) -> Result<T, Refusal> {
    serde_json::from_value(Value::from(name))
        .map_err(|e| ApiError::with_message(Api::InvalidParameter, e.to_string()).into())
}

fn level_name(l: LevelName) -> &'static str {
    match l {
        LevelName::Perfect => "perfect",
        LevelName::Casual => "casual",
        LevelName::Random => "random",
    }
}

/// `play_computer`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct PlayComputer {
    /// The game: "tic-tac-toe" or "sos".
    pub game: GameName,
    /// The computer's strength: "perfect" (default; never loses), "casual" or "random".
    #[serde(default)]
    pub level: LevelName,
    /// Your side: "first" (default; you move first) or "second".
    #[serde(default)]
    pub side: SideName,
}

/// `challenge`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Challenge {
    /// The opponent's address: 0x and 64 hex digits.
    pub opponent: String,
    /// The game: "tic-tac-toe" or "sos".
    pub game: GameName,
    /// Each player's stake in minor units, as decimal digits ("0", the default, for free
    /// play). Yours is held from your balance until the match ends.
    #[serde(default)]
    #[schemars(with = "String")]
    pub stake: Option<String>,
    /// Who moves first: "challenger" (default, you), "opponent" or "random".
    #[serde(default)]
    pub first: FirstName,
}

/// `accept_challenge`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Accept {
    /// The challenge's match id (from list_challenges).
    pub match_id: u64,
    /// The stake you agree to, in minor units as decimal digits; refused (code 128) unless
    /// it is the challenge's. Give it when the challenge has a stake.
    #[serde(default)]
    #[schemars(with = "String")]
    pub stake: Option<String>,
    /// The game you agree to; refused (code 128) unless it is the challenge's.
    #[serde(default)]
    #[schemars(with = "GameName")]
    pub game: Option<GameName>,
}

/// A match, by id.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct MatchRef {
    /// The match id.
    pub match_id: u64,
}

/// `join_queue`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Queue {
    /// The game: "tic-tac-toe" or "sos".
    pub game: GameName,
    /// The stake in minor units, as decimal digits ("0", the default, for free play).
    #[serde(default)]
    #[schemars(with = "String")]
    pub stake: Option<String>,
}

/// `make_move`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Move {
    /// The match id.
    pub match_id: u64,
    /// The cell, 0-8, row by row from the top-left (the numbers on the drawn board).
    pub cell: u8,
    /// The mark: in tic-tac-toe your own (X or O; may be left out), in SOS "S" or "O"
    /// (required).
    #[serde(default)]
    #[schemars(with = "MarkName")]
    pub mark: Option<MarkName>,
    /// The number of marks on the board after this move (the match's seq + 1). Left out,
    /// it is the next move of the match as it is now; give it to be sure the board did
    /// not change since you looked.
    #[serde(default)]
    #[schemars(with = "u8")]
    pub seq: Option<u8>,
}

/// `wait_for_turn`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Wait {
    /// The match id.
    pub match_id: u64,
    /// How long to wait at most, in seconds (the server caps it, about 9 s by default);
    /// call again when it says it timed out.
    #[serde(default)]
    #[schemars(with = "u64")]
    pub timeout_s: Option<u64>,
}

/// `analyze_position`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Analyze {
    /// The game: "tic-tac-toe" or "sos".
    pub game: GameName,
    /// The board as 9 characters, cell 0 first: "-" for empty, and X/O (tic-tac-toe) or
    /// S/O (SOS); a match's `board` field.
    pub board: String,
}

/// `list_tournaments`'s input.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Tournaments {
    /// Which: "open" (upcoming and running, the default), "finished" or "all".
    #[serde(default)]
    #[schemars(with = "String")]
    pub phase: Option<String>,
}

/// A tournament, by id.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TournamentRef {
    /// The tournament id, from list_tournaments.
    pub tournament_id: u64,
}

/// `follow_tournament`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FollowTournament {
    /// The tournament id.
    pub tournament_id: u64,
    /// How long to wait at most for your next game, in seconds (the server caps it);
    /// 0 answers at once. Call again when it says it timed out.
    #[serde(default)]
    #[schemars(with = "u64")]
    pub timeout_s: Option<u64>,
}

impl Triad {
    /// A command's answer: the match as it now is, drawn.
    fn command_answer(body: Value, me: Address) -> CallToolResult {
        let view = body["match"].clone();
        let text = if view.is_object() {
            text::match_text(&view, me)
        } else {
            "Done.".to_owned()
        };
        answer(json!({"match": view, "duplicate": body["duplicate"]}), text)
    }

    async fn view(&self, id: u64) -> Result<Value, Refusal> {
        answered(games::get_match(State(self.state.clone()), Path(id)).await).await
    }

    /// The amount of a tool's optional stake.
    fn stake(stake: Option<&str>) -> Result<Amount, Refusal> {
        match stake {
            None => Ok(Amount(0)),
            Some(text) => triad_engine::parse_amount(text).map(Amount).map_err(|e| {
                ApiError::with_message(
                    Api::InvalidParameter,
                    format!("stake: {e}; give minor units as decimal digits, such as \"0\""),
                )
                .into()
            }),
        }
    }

    /// A long wait's deadline (`timeout_s`, capped below the request timeout, as the
    /// agents' inbox long-poll) and its slot: a wait holds a request open, so it counts as
    /// one of the IP address's long-polls while the slot is held.
    fn long_wait(
        &self,
        parts: &Parts,
        timeout_s: Option<u64>,
    ) -> Result<(tokio::time::Instant, crate::bounds::Share), Refusal> {
        let settings = &self.state.settings;
        let longest = settings
            .request_timeout_ms
            .saturating_sub(1_000)
            .min(25_000);
        let wait = Duration::from_millis(
            timeout_s
                .map_or(longest, |s| s.saturating_mul(1000))
                .min(longest),
        );
        let client = parts
            .extensions
            .get::<ClientIp>()
            .map_or(std::net::IpAddr::from([0, 0, 0, 0]), |c| c.0);
        let slot = self
            .state
            .long_polls
            .take(client)
            .map_err(|why| Refusal::from(ApiError::from(self.state.long_polls.refusal(why))))?;
        Ok((tokio::time::Instant::now() + wait, slot))
    }

    async fn run<F>(&self, parts: &Parts, act: F) -> CallToolResult
    where
        F: AsyncFnOnce(Address) -> Result<CallToolResult, Refusal>,
    {
        let result = match caller(parts) {
            Ok(me) => act(me).await,
            Err(e) => Err(e),
        };
        result.unwrap_or_else(Refusal::into_result)
    }
}

#[tool_router(vis = "pub(super)")]
impl Triad {
    #[tool(
        description = "Start a game against the computer (no stake). You move first unless side is \"second\". Answers with the match (its match_id) and the board drawn; the computer's first move, if it starts, is already on it."
    )]
    async fn play_computer(
        &self,
        Parameters(p): Parameters<PlayComputer>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let request = games::ComputerRequest {
                    game: p.game.into(),
                    level: from_name(level_name(p.level))?,
                    side: from_name(match p.side {
                        SideName::First => "first",
                        SideName::Second => "second",
                    })?,
                };
                let body = answered(
                    games::play_computer(
                        State(self.state.clone()),
                        Authed(me),
                        HeaderMap::new(),
                        ApiJson(request),
                    )
                    .await,
                )
                .await?;
                Ok(Self::command_answer(body, me))
            })
            .await)
    }

    #[tool(
        description = "Challenge another player, by address, to a game. With a stake, yours is held until the match ends. The opponent must accept (accept_challenge); then call wait_for_turn."
    )]
    async fn challenge(
        &self,
        Parameters(p): Parameters<Challenge>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let request = games::ChallengeRequest {
                    opponent: p.opponent,
                    game: p.game.into(),
                    stake: Self::stake(p.stake.as_deref())?,
                    first: from_name(match p.first {
                        FirstName::Challenger => "challenger",
                        FirstName::Opponent => "opponent",
                        FirstName::Random => "random",
                    })?,
                };
                let body = answered(
                    games::create_challenge(
                        State(self.state.clone()),
                        Authed(me),
                        HeaderMap::new(),
                        ApiJson(request),
                    )
                    .await,
                )
                .await?;
                Ok(Self::command_answer(body, me))
            })
            .await)
    }

    #[tool(
        description = "List the open challenges addressed to you (incoming; accept or decline them by match_id) and your own open challenge (outgoing)."
    )]
    async fn list_challenges(
        &self,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let body =
                    answered(games::list_challenges(State(self.state.clone()), Authed(me)).await)
                        .await?;
                let mut out = String::new();
                for (list, title) in [
                    (&body["incoming"], "To you"),
                    (&body["outgoing"], "From you"),
                ] {
                    let items = list.as_array().map(Vec::as_slice).unwrap_or_default();
                    out.push_str(&format!(
                        "{title}: {}\n",
                        if items.is_empty() { "none" } else { "" }
                    ));
                    for m in items {
                        out.push_str(&format!(
                            "- match_id {}: {} from {} to {}, stake {}\n",
                            m["id"],
                            m["game"].as_str().unwrap_or("?"),
                            m["challenge"]["challenger"].as_str().unwrap_or("?"),
                            m["challenge"]["opponent"].as_str().unwrap_or("?"),
                            m["stake"].as_str().unwrap_or("0"),
                        ));
                    }
                }
                Ok(answer(body, out))
            })
            .await)
    }

    #[tool(
        description = "Accept a challenge addressed to you (its match_id from list_challenges). State the stake and game you agree to: the acceptance is refused (code 128) unless they are the challenge's. Then play or wait_for_turn."
    )]
    async fn accept_challenge(
        &self,
        Parameters(p): Parameters<Accept>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let mut terms = serde_json::Map::new();
                if let Some(stake) = &p.stake {
                    Self::stake(Some(stake))?;
                    terms.insert("stake".into(), Value::from(stake.as_str()));
                }
                if let Some(game) = p.game {
                    terms.insert("game".into(), Value::from(GameKind::from(game).name()));
                }
                let body = if terms.is_empty() {
                    axum::body::Bytes::new()
                } else {
                    axum::body::Bytes::from(Value::Object(terms).to_string())
                };
                let body = answered(
                    games::accept_challenge(
                        State(self.state.clone()),
                        Authed(me),
                        HeaderMap::new(),
                        Path(p.match_id),
                        body,
                    )
                    .await,
                )
                .await?;
                Ok(Self::command_answer(body, me))
            })
            .await)
    }

    #[tool(
        description = "Decline a challenge addressed to you; the challenger gets the stake back."
    )]
    async fn decline_challenge(
        &self,
        Parameters(p): Parameters<MatchRef>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let body = answered(
                    games::decline_challenge(
                        State(self.state.clone()),
                        Authed(me),
                        HeaderMap::new(),
                        Path(p.match_id),
                    )
                    .await,
                )
                .await?;
                Ok(Self::command_answer(body, me))
            })
            .await)
    }

    #[tool(
        description = "Join the open queue for a game: start at once against the earliest player waiting with the same game and stake, or wait (call wait_for_turn with the match_id)."
    )]
    async fn join_queue(
        &self,
        Parameters(p): Parameters<Queue>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let request = games::QueueRequest {
                    game: p.game.into(),
                    stake: Self::stake(p.stake.as_deref())?,
                };
                let body = answered(
                    games::join_queue(
                        State(self.state.clone()),
                        Authed(me),
                        HeaderMap::new(),
                        ApiJson(request),
                    )
                    .await,
                )
                .await?;
                Ok(Self::command_answer(body, me))
            })
            .await)
    }

    #[tool(
        description = "Leave the queue. With a stake, only after the wait time (the refusal says how long is left)."
    )]
    async fn leave_queue(
        &self,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let body = answered(
                    games::leave_queue(State(self.state.clone()), Authed(me), HeaderMap::new())
                        .await,
                )
                .await?;
                Ok(Self::command_answer(body, me))
            })
            .await)
    }

    #[tool(
        description = "See a match: the board drawn with cell numbers, whose turn it is, the moves so far and, when it is over, how it ended."
    )]
    async fn get_match(
        &self,
        Parameters(p): Parameters<MatchRef>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let view = self.view(p.match_id).await?;
                let text = text::match_text(&view, me);
                Ok(answer(view, text))
            })
            .await)
    }

    #[tool(
        description = "List the legal moves in a match when it is your turn: each as a cell (0-8) and a mark. Empty when it is not your turn or the match is over."
    )]
    async fn legal_moves(
        &self,
        Parameters(p): Parameters<MatchRef>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let view = self.view(p.match_id).await?;
                let mine = text::in_play(&view) && text::my_turn(&view, me);
                let moves: Vec<Value> = if mine {
                    let kind: GameKind = view["game"].as_str().unwrap_or_default().parse().map_err(
                        |_| Refusal::from(ApiError::new(Api::InternalError)),
                    )?;
                    let position = AnyGame::parse(kind, view["board"].as_str().unwrap_or_default())
                        .map_err(|_| Refusal::from(ApiError::new(Api::InternalError)))?;
                    position
                        .legal_moves()
                        .iter()
                        .map(|mv| json!({"cell": mv.cell.index(), "mark": mv.mark.char().to_string()}))
                        .collect()
                } else {
                    Vec::new()
                };
                let mut out = text::match_text(&view, me);
                if mine {
                    let list: Vec<String> = moves
                        .iter()
                        .map(|m| format!("{} on {}", m["mark"].as_str().unwrap_or_default(), m["cell"]))
                        .collect();
                    out.push_str(&format!("\nLegal moves: {}", list.join(", ")));
                }
                Ok(answer(
                    json!({"match_id": p.match_id, "your_turn": mine, "seq": view["seq"], "moves": moves}),
                    out,
                ))
            })
            .await)
    }

    #[tool(
        description = "Place a mark: your move in a match, on an empty cell (0-8). In SOS say the mark (S or O). A refused move changes nothing; the refusal's code and message say why."
    )]
    async fn make_move(
        &self,
        Parameters(p): Parameters<Move>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let view = self.view(p.match_id).await?;
                let seq = match p.seq {
                    Some(seq) => seq,
                    None => u8::try_from(view["seq"].as_u64().unwrap_or_default() + 1)
                        .unwrap_or(u8::MAX),
                };
                let mark = match p.mark {
                    Some(MarkName::X) => 'X',
                    Some(MarkName::O) => 'O',
                    Some(MarkName::S) => 'S',
                    // Tic-tac-toe: a seat has one mark. SOS: the player must choose.
                    None => {
                        let seat = text::my_seat(&view, me);
                        let index = usize::from(seat == Some("second"));
                        let marks = view["players"][index]["marks"].as_array();
                        match marks.map(Vec::as_slice) {
                            Some([only]) if seat.is_some() => {
                                only.as_str().and_then(|m| m.chars().next()).unwrap_or('X')
                            }
                            _ => {
                                return Err(ApiError::with_message(
                                    Api::InvalidParameter,
                                    "say which mark to place: in SOS, \"S\" or \"O\"",
                                )
                                .into());
                            }
                        }
                    }
                };
                let mark = triad_rules::Mark::from_char(mark)
                    .ok_or_else(|| Refusal::from(ApiError::new(Api::InvalidParameter)))?;
                let body = answered(
                    games::make_move(
                        State(self.state.clone()),
                        Authed(me),
                        HeaderMap::new(),
                        Path(p.match_id),
                        ApiJson(games::MoveRequest {
                            seq,
                            cell: p.cell,
                            mark,
                            signature: None,
                        }),
                    )
                    .await,
                )
                .await?;
                Ok(Self::command_answer(body, me))
            })
            .await)
    }

    #[tool(description = "Resign (forfeit) a match you are playing: the opponent wins.")]
    async fn resign(
        &self,
        Parameters(p): Parameters<MatchRef>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let body = answered(
                    games::forfeit(
                        State(self.state.clone()),
                        Authed(me),
                        HeaderMap::new(),
                        Path(p.match_id),
                    )
                    .await,
                )
                .await?;
                Ok(Self::command_answer(body, me))
            })
            .await)
    }

    #[tool(
        description = "Claim the win when the opponent has run out of time to move (or abort a match whose first move never came). Refused, with the time left, before the deadline."
    )]
    async fn claim_timeout(
        &self,
        Parameters(p): Parameters<MatchRef>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let body = answered(
                    games::claim_timeout(
                        State(self.state.clone()),
                        Authed(me),
                        HeaderMap::new(),
                        Path(p.match_id),
                    )
                    .await,
                )
                .await?;
                Ok(Self::command_answer(body, me))
            })
            .await)
    }

    #[tool(
        description = "Offer a rematch of a finished match, or accept the opponent's offer (against the computer it starts at once). Answers with the new match when one starts."
    )]
    async fn rematch(
        &self,
        Parameters(p): Parameters<MatchRef>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let body = answered(
                    games::rematch(
                        State(self.state.clone()),
                        Authed(me),
                        HeaderMap::new(),
                        Path(p.match_id),
                    )
                    .await,
                )
                .await?;
                Ok(Self::command_answer(body, me))
            })
            .await)
    }

    #[tool(
        description = "Wait until it is your turn in a match, or the match is over, and answer with the match. Returns at once if it already is; after timeout_s (capped by the server) it answers with timed_out: call it again."
    )]
    async fn wait_for_turn(
        &self,
        Parameters(p): Parameters<Wait>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let (deadline, _slot) = self.long_wait(&parts, p.timeout_s)?;
                // Follow the match first, then read it: no move can fall between the two.
                let mut follow = Follow::new(&self.state);
                follow.add(p.match_id);
                loop {
                    let view = self.view(p.match_id).await?;
                    let over = view["phase"] == "finished";
                    let mine = text::in_play(&view) && text::my_turn(&view, me);
                    if over || mine {
                        let text = text::match_text(&view, me);
                        return Ok(answer(
                            json!({"your_turn": mine, "finished": over, "timed_out": false, "match": view}),
                            text,
                        ));
                    }
                    let next = tokio::select! {
                        next = follow.next() => next,
                        () = tokio::time::sleep_until(deadline) => None,
                    };
                    if next.is_none() {
                        let text = format!(
                            "{}\nStill not your turn (timed out); call wait_for_turn again.",
                            text::match_text(&view, me)
                        );
                        return Ok(answer(
                            json!({"your_turn": false, "finished": false, "timed_out": true, "match": view}),
                            text,
                        ));
                    }
                }
            })
            .await)
    }

    #[tool(
        description = "Analyse a position with the solver: the exact value (win, draw or loss with best play) of every legal move for the player to move, and the best moves."
    )]
    async fn analyze_position(
        &self,
        Parameters(p): Parameters<Analyze>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |_me| {
                let game = GameKind::from(p.game).name().to_owned();
                let body = answered(analysis::analyze(Path((game, p.board))).await).await?;
                let mut out = text::grid(body["board"].as_str().unwrap_or_default());
                match body["turn"].as_str() {
                    Some(turn) => out.push_str(&format!(
                        "{turn} to move: {} in {} plies with best play.\n",
                        body["value"]["verdict"].as_str().unwrap_or("?"),
                        body["value"]["plies"]
                    )),
                    None => out.push_str("The game is over.\n"),
                }
                for m in body["moves"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                {
                    out.push_str(&format!(
                        "- {} on {}: {} in {}\n",
                        m["mark"].as_str().unwrap_or("?"),
                        m["cell"],
                        m["verdict"].as_str().unwrap_or("?"),
                        m["plies"]
                    ));
                }
                Ok(answer(body, out))
            })
            .await)
    }

    #[tool(description = "Your balance, in minor units, and your latest ledger entries.")]
    async fn my_balance(
        &self,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let body = answered(
                    ledger::my_ledger(
                        State(self.state.clone()),
                        Authed(me),
                        Query(ledger::LedgerQuery {
                            before: None,
                            limit: Some(10),
                        }),
                    )
                    .await,
                )
                .await?;
                let text = format!(
                    "Your balance: {} minor units.",
                    body["balance"].as_str().unwrap_or("0")
                );
                Ok(answer(body, text))
            })
            .await)
    }

    #[tool(
        description = "Your stats: games played, won and drawn, your rating, and your active match."
    )]
    async fn my_stats(
        &self,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let body = answered(
                    games::get_player(State(self.state.clone()), Path(me.to_string())).await,
                )
                .await?;
                let text = format!(
                    "{}: {} games, {} won, {} drawn; rating {:.0}; active match: {}.",
                    me,
                    body["games"],
                    body["wins"],
                    body["draws"],
                    body["rating"]["rating"].as_f64().unwrap_or_default(),
                    body["active_match"]
                        .as_u64()
                        .map_or_else(|| "none".to_owned(), |id| id.to_string()),
                );
                Ok(answer(body, text))
            })
            .await)
    }

    #[tool(
        description = "List the tournaments (arenas and Swiss events): by default the upcoming and running ones, with their game, format, start, entry fee, pool and players. phase \"finished\" or \"all\" for others."
    )]
    async fn list_tournaments(
        &self,
        Parameters(p): Parameters<Tournaments>,
    ) -> Result<CallToolResult, ErrorData> {
        let query = tournaments::ListQuery {
            phase: p.phase,
            limit: None,
        };
        let listed =
            answered(tournaments::list(State(self.state.clone()), Query(query)).await).await;
        Ok(match listed {
            Ok(body) => {
                let text = text::tournaments_text(&body);
                answer(body, text)
            }
            Err(refusal) => refusal.into_result(),
        })
    }

    #[tool(
        description = "Enter a tournament (its tournament_id from list_tournaments), paying its entry fee if it has one; you enter as a bot. Then call follow_tournament to get each game as you are paired."
    )]
    async fn join_tournament(
        &self,
        Parameters(p): Parameters<TournamentRef>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let body = answered(
                    tournaments::join(
                        State(self.state.clone()),
                        Authed(me),
                        HeaderMap::new(),
                        Path(p.tournament_id),
                    )
                    .await,
                )
                .await?;
                let text = text::tournament_text(&body["tournament"], None);
                Ok(answer(body, text))
            })
            .await)
    }

    #[tool(
        description = "Leave a tournament: before it starts, with your fee refunded; after, you are no longer paired and keep your score."
    )]
    async fn leave_tournament(
        &self,
        Parameters(p): Parameters<TournamentRef>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let body = answered(
                    tournaments::leave(
                        State(self.state.clone()),
                        Authed(me),
                        HeaderMap::new(),
                        Path(p.tournament_id),
                    )
                    .await,
                )
                .await?;
                let text = text::tournament_text(&body["tournament"], None);
                Ok(answer(body, text))
            })
            .await)
    }

    #[tool(
        description = "Follow a tournament you entered: waits (up to timeout_s, capped by the server) until you have a game to play or the tournament ends, and answers with your place, the leaders and your game's match_id (play it with wait_for_turn and make_move, then call this again). When it is over, the final standings and prizes."
    )]
    async fn follow_tournament(
        &self,
        Parameters(p): Parameters<FollowTournament>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(self
            .run(&parts, async |me| {
                let (deadline, _slot) = self.long_wait(&parts, p.timeout_s)?;
                loop {
                    let query = tournaments::TournamentQuery {
                        limit: Some(10),
                        player: Some(me.to_string()),
                    };
                    let view = answered(
                        tournaments::get(
                            State(self.state.clone()),
                            Path(p.tournament_id),
                            Query(query),
                        )
                        .await,
                    )
                    .await?;
                    let over = matches!(view["phase"].as_str(), Some("finished" | "cancelled"));
                    let game = view["me"]["match_id"].as_u64();
                    let now = tokio::time::Instant::now();
                    if over || game.is_some() || now >= deadline {
                        let text = text::tournament_text(&view, Some(me));
                        let timed_out = !over && game.is_none();
                        return Ok(answer(
                            json!({"your_game": game, "finished": over, "timed_out": timed_out, "tournament": view}),
                            text,
                        ));
                    }
                    // Pairings come with the clock's tick: a short look-again is enough.
                    tokio::time::sleep_until((now + Duration::from_millis(250)).min(deadline)).await;
                }
            })
            .await)
    }
}
