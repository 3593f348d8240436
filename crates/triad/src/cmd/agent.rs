//! `triad agent`: an autonomous player of the agents' game protocol (`triad_protocol`)
//! through a Triad server's relay. It accepts proposals (or, with `--challenge`, proposes),
//! plays with the solver at a strength, declares results, copes with duplicates and
//! conflicts by the protocol's rules, and logs each game in one line, with the referee's
//! record beside its own.
//!
//! With `--a2a`, it plays another A2A agent directly instead ([`a2a`]).
//!
//! It always logs in as a bot (`"bot": true`, with `--a2a` too): the server marks its
//! account one, for good, so every person it plays sees the badge.

mod a2a;
mod tournament;

use std::{
    collections::{HashSet, VecDeque},
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use rand::{SeedableRng, TryRng, rngs::SysRng};
use rand_chacha::ChaCha8Rng;
use triad_protocol::{App, Ending, Game, GameId, Message, Propose, Side, Step};
use triad_rules::{GameKind, Player};
use triad_solver::Strength;

use super::{
    GameArg,
    a2a_client::{Peer, Version},
    client::{Client, Connection, Incoming},
};

/// Play the agents' game protocol on your own: accept proposals (or propose with --challenge),
/// play each game with the solver, declare the result, and log each game in one line. With
/// --a2a, propose and play games against another A2A agent instead.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when the games were played and the referee's record \
    agrees with the agent's every time (with --a2a: when every game was played to its end \
    and the other agent kept to the protocol); 1 otherwise."
)]
pub(crate) struct AgentArgs {
    /// The app to play.
    #[arg(long, value_enum, default_value_t)]
    app: GameArg,
    /// How well to play: perfect never loses, casual sometimes lets a win slip, random
    /// plays any legal move.
    #[arg(long, value_enum, default_value_t = StrategyArg::Perfect)]
    strategy: StrategyArg,
    /// Propose games to this agent (its address) instead of waiting for proposals.
    #[arg(long, value_name = "ADDRESS")]
    challenge: Option<String>,
    /// Enter this tournament (as a bot, like every agent) and play all its games, until it
    /// ends; then print the agent's final place and prize.
    #[arg(long, value_name = "ID", conflicts_with_all = ["challenge", "a2a", "games"])]
    tournament: Option<u64>,
    /// Stop after this many games [default: 1 with --challenge or --a2a, else never].
    #[arg(long, value_name = "N")]
    games: Option<u32>,
    /// The role to claim when proposing: X (first), O (second), or alternate, game by game.
    #[arg(long, value_enum, ignore_case = true, default_value_t = RoleArg::Alternate)]
    role: RoleArg,
    /// Seed of the strategy's random choices [default: drawn, and printed].
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// After this many seconds without a word from the opponent, claim the win if its move
    /// deadline has passed (or passes within 10 s), else abort the game.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    patience: u64,
    /// Send messages without the signed envelope.
    #[arg(long)]
    unsigned: bool,
    /// Play over A2A against the agent at this URL (its card's URL or its base URL) instead
    /// of through a server's relay: propose each game, play it, and check every answer.
    #[arg(long, value_name = "URL", conflicts_with_all = ["challenge", "unsigned"])]
    a2a: Option<String>,
    /// With --a2a: the A2A version to speak [default: the newest both speak, 1.0 else 0.3].
    #[arg(long, value_enum, value_name = "VERSION", requires = "a2a")]
    a2a_version: Option<Version>,
    /// With --a2a: the bearer token to send when the agent's card asks for one [default:
    /// Triad's login with the key file, at the server of the card's A2A URL].
    #[arg(long, value_name = "TOKEN", requires = "a2a")]
    a2a_token: Option<String>,
    /// With --a2a: the strength to ask of the other agent (the message's `metadata.level`,
    /// which Triad's computer plays at) [default: ask nothing].
    #[arg(long, value_enum, value_name = "STRATEGY", requires = "a2a")]
    opponent_level: Option<StrategyArg>,
    #[command(flatten)]
    connection: Connection,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum StrategyArg {
    /// Always an optimal move: never loses.
    Perfect,
    /// Usually optimal, sometimes merely safe.
    Casual,
    /// Any legal move.
    Random,
}

impl StrategyArg {
    fn strength(self) -> Strength {
        match self {
            StrategyArg::Perfect => Strength::Perfect,
            StrategyArg::Casual => Strength::Casual,
            StrategyArg::Random => Strength::Random,
        }
    }

    /// The name Triad's computer takes as its level.
    fn level(self) -> &'static str {
        match self {
            StrategyArg::Perfect => "perfect",
            StrategyArg::Casual => "casual",
            StrategyArg::Random => "random",
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum RoleArg {
    /// The first player (X in tic-tac-toe).
    #[value(name = "X", alias = "first")]
    X,
    /// The second player (O in tic-tac-toe).
    #[value(name = "O", alias = "second")]
    O,
    /// X in odd games, O in even ones.
    Alternate,
}

/// The game being played.
#[derive(Debug)]
struct Current {
    number: u32,
    peer: String,
    game: Game,
    match_id: Option<u64>,
    last_heard: Instant,
}

#[derive(Debug, Default)]
struct Tally {
    won: u32,
    lost: u32,
    drew: u32,
    aborted: u32,
}

/// How a game ended for this agent.
#[derive(Clone, Copy, Debug)]
enum Outcome {
    Won,
    Lost,
    Drew,
    Aborted,
}

impl Tally {
    /// Counts a game; the outcome's word for the game's line.
    fn count(&mut self, outcome: Outcome) -> &'static str {
        let (count, word) = match outcome {
            Outcome::Won => (&mut self.won, "won"),
            Outcome::Lost => (&mut self.lost, "lost"),
            Outcome::Drew => (&mut self.drew, "drew"),
            Outcome::Aborted => (&mut self.aborted, "aborted"),
        };
        *count += 1;
        word
    }
}

#[derive(Debug)]
struct Agent {
    client: Client,
    app: App,
    strength: Strength,
    rng: ChaCha8Rng,
    unsigned: bool,
    patience: Duration,
    challenge: Option<String>,
    role: RoleArg,
    /// Distinguishes this run's game ids from another run's.
    tag: String,
    current: Option<Current>,
    /// Proposals waiting for an answer: from whom, what, and the match the relay named.
    proposals: VecDeque<(String, Propose, Option<u64>)>,
    /// Games with an id that ended, so that a late copy of their proposal is not taken up.
    finished: HashSet<(String, GameId)>,
    started: u32,
    played: u32,
    tally: Tally,
    disagreements: u32,
}

/// The role to claim in game `number` (1-based): alternating starts with X.
fn role_of_game(role: RoleArg, number: u32) -> Player {
    match role {
        RoleArg::X => Player::First,
        RoleArg::O => Player::Second,
        RoleArg::Alternate if number % 2 == 1 => Player::First,
        RoleArg::Alternate => Player::Second,
    }
}

fn short(address: &str) -> String {
    if address.len() > 12 {
        format!("{}…{}", &address[..6], &address[address.len() - 4..])
    } else {
        address.to_owned()
    }
}

/// How long past its patience an agent waits for the referee's move deadline, which the
/// server's clock keeps, before it aborts a game instead.
const REFEREE_GRACE: Duration = Duration::from_secs(10);

/// What the referee says of a game whose opponent has gone silent.
enum Settled {
    /// It is over: the referee's record, and its winner.
    Ended(String, Option<Player>),
    /// The opponent's move deadline has not passed yet.
    Soon,
    /// Neither: the players must end it.
    No,
}

/// The referee's record of an ended match: in the protocol's words, its reason, and its
/// winner. `None` while the match is in play.
fn record(app: App, view: &serde_json::Value) -> Option<(String, &str, Option<Player>)> {
    let outcome = &view["outcome"];
    let reason = outcome["reason"].as_str()?;
    let winner = match outcome["winner"].as_str() {
        Some("first") => Some(Player::First),
        Some("second") => Some(Player::Second),
        _ => None,
    };
    let text = match (reason, winner) {
        ("win", Some(w)) => format!("win by {}", app.role_name(w)),
        ("draw", _) => "draw".to_owned(),
        (reason, Some(w)) => format!("win by {} ({reason})", app.role_name(w)),
        (reason, None) => format!("abort ({reason})"),
    };
    Some((text, reason, winner))
}

/// The referee's record of a match in the protocol's words, and whether it agrees with the
/// agent's ending.
fn referee(app: App, view: &serde_json::Value, ending: &Ending) -> (String, bool) {
    let Some((text, reason, winner)) = record(app, view) else {
        return ("still in play".to_owned(), false);
    };
    let agrees = match ending {
        Ending::Win { winner: w } => reason == "win" && winner == Some(*w),
        Ending::Draw => reason == "draw",
        Ending::Aborted { .. } => {
            matches!(reason, "aborted" | "cancelled" | "declined" | "expired")
        }
    };
    (text, agrees)
}

impl Agent {
    fn log(&self, line: &str) {
        eprintln!("triad agent {}: {line}", short(&self.client.address()));
    }

    async fn send(&mut self, to: &str, message: &Message) -> anyhow::Result<u64> {
        let sent = self
            .client
            .send(to, self.app, message, self.unsigned)
            .await?;
        Ok(sent.match_id)
    }

    fn next_role(&self) -> Player {
        role_of_game(self.role, self.started)
    }

    async fn propose(&mut self, target: String) -> anyhow::Result<()> {
        self.started += 1;
        let role = self.next_role();
        let game_id = GameId::new(&format!("{}-{}", self.tag, self.started))?;
        let (game, message) = Game::propose(self.app, role, Some(game_id));
        let match_id = self
            .send(&target, &message)
            .await
            .with_context(|| format!("cannot propose a game to {target}"))?;
        self.current = Some(Current {
            number: self.started,
            peer: target,
            game,
            match_id: Some(match_id),
            last_heard: Instant::now(),
        });
        Ok(())
    }

    async fn accept_next(&mut self) {
        while let Some((from, proposal, proposed)) = self.proposals.pop_front() {
            let (game, message) = Game::accept(self.app, &proposal);
            // The acceptance names the match of the proposal it answers: the relay accepts
            // that free game or nothing.
            let sent = self
                .client
                .send_for(&from, self.app, &message, self.unsigned, proposed)
                .await
                .map(|sent| sent.match_id);
            match sent {
                Ok(match_id) => {
                    self.started += 1;
                    self.current = Some(Current {
                        number: self.started,
                        peer: from,
                        game,
                        match_id: Some(match_id),
                        last_heard: Instant::now(),
                    });
                    return;
                }
                Err(e) => self.log(&format!(
                    "could not accept the proposal of {}: {e:#}",
                    short(&from)
                )),
            }
        }
    }

    /// Moves when it is my turn (and declares the result when the move ends the game).
    async fn act(&mut self) {
        let Some(current) = self.current.as_mut() else {
            return;
        };
        if !current.game.my_turn() {
            return;
        }
        let position = *current.game.position();
        let Some(mv) =
            triad_solver::table(position.kind()).choose(&position, self.strength, &mut self.rng)
        else {
            return;
        };
        let messages = match current.game.play(mv.cell.index(), mv.mark) {
            Ok(messages) => messages,
            Err(e) => {
                self.log(&format!("cannot play {mv:?}: {e}"));
                return;
            }
        };
        let peer = current.peer.clone();
        for message in messages {
            if let Err(e) = self.send(&peer, &message).await {
                // The referee refused what this agent thought legal: the two disagree, so
                // the game is called off (the protocol's state conflict).
                self.log(&format!(
                    "the relay refused my {}: {e:#}; aborting the game",
                    message.action()
                ));
                self.abort_current("state-conflict").await;
                return;
            }
        }
    }

    async fn abort_current(&mut self, reason: &str) {
        let Some(current) = self.current.as_mut() else {
            return;
        };
        if let Ok(abort) = current.game.abort(reason) {
            let peer = current.peer.clone();
            if let Err(e) = self.send(&peer, &abort).await {
                self.log(&format!("could not send the abort: {e:#}"));
            }
        }
    }

    async fn handle(&mut self, incoming: &Incoming) {
        let (app, message, verified) = match incoming.decode() {
            Ok(decoded) => decoded,
            Err(e) => {
                self.log(&format!(
                    "ignored #{} from {}: {e}",
                    incoming.id,
                    short(&incoming.from)
                ));
                return;
            }
        };
        if verified == Some(false) {
            self.log(&format!(
                "ignored #{}: its signature is not {}'s",
                incoming.id,
                short(&incoming.from)
            ));
            return;
        }
        if app != self.app {
            if let Message::Propose(p) = &message {
                // Decline at once, so the proposer is not left waiting.
                let decline = Message::Result(triad_protocol::GameResult::abort(
                    "unsupported-app",
                    p.game_id.clone(),
                ));
                let _ = self
                    .client
                    .send(&incoming.from, app, &decline, self.unsigned)
                    .await;
                self.log(&format!(
                    "declined a {app} proposal from {}: this agent plays {}",
                    short(&incoming.from),
                    self.app
                ));
            }
            return;
        }
        if let Message::Propose(p) = &message {
            self.on_proposal(&incoming.from, p, incoming.match_id).await;
            return;
        }
        let received = {
            let Some(current) = self.current.as_mut().filter(|c| c.peer == incoming.from) else {
                // A proposal withdrawn before I took it up.
                if let Message::Result(r) = &message {
                    self.proposals
                        .retain(|(from, p, _)| !(from == &incoming.from && p.game_id == r.game_id));
                }
                return;
            };
            current.last_heard = Instant::now();
            if let Some(id) = incoming.match_id {
                current.match_id = Some(id);
            }
            current.game.receive(&message)
        };
        match received {
            Ok(steps) => {
                for step in steps {
                    if let Step::Conflict { error, abort } = step {
                        self.log(&format!(
                            "state conflict with {}: {error}; aborting",
                            short(&incoming.from)
                        ));
                        if let Err(e) = self
                            .client
                            .send(&incoming.from, self.app, &abort, self.unsigned)
                            .await
                        {
                            self.log(&format!("could not send the abort: {e:#}"));
                        }
                    }
                }
            }
            Err(e) => {
                let from = short(&incoming.from);
                self.log(&format!("ignored #{} from {from}: {e}", incoming.id));
            }
        }
    }

    async fn on_proposal(&mut self, from: &str, p: &Propose, match_id: Option<u64>) {
        let current_game = self.current.as_ref().is_some_and(|c| {
            c.peer == from && !c.game.is_proposer() && c.game.game_id() == p.game_id.as_ref()
        });
        let seen = p
            .game_id
            .as_ref()
            .is_some_and(|id| self.finished.contains(&(from.to_owned(), id.clone())))
            || self.proposals.iter().any(|(f, q, _)| f == from && q == p);
        if current_game || seen {
            return;
        }
        if self.challenge.is_some() {
            let decline =
                Message::Result(triad_protocol::GameResult::abort("busy", p.game_id.clone()));
            let _ = self
                .client
                .send(from, self.app, &decline, self.unsigned)
                .await;
            self.log(&format!(
                "declined a proposal from {}: this agent proposes its own games",
                short(from)
            ));
            return;
        }
        self.proposals
            .push_back((from.to_owned(), p.clone(), match_id));
    }

    /// Ends the current game once it is over and settled (or the opponent's declaration is
    /// overdue); checks the referee's record and logs the game.
    async fn maybe_finish(&mut self) -> anyhow::Result<()> {
        let Some(current) = self.current.as_ref() else {
            return Ok(());
        };
        let waited = current.last_heard.elapsed();
        let overdue = waited > self.patience;
        let Some(ending) = current.game.ending().cloned() else {
            if overdue && !current.game.my_turn() {
                let peer = short(&current.peer);
                if let Some(id) = current.match_id {
                    match self.ask_referee(id).await {
                        Settled::Ended(text, winner) => {
                            self.finish_by_referee(&text, winner);
                            return Ok(());
                        }
                        // The referee's deadline is about to pass (its clock, not mine):
                        // ask again in a second rather than abort a game about to be won.
                        Settled::Soon if waited < self.patience + REFEREE_GRACE => {
                            tokio::time::sleep(Duration::from_secs(1)).await;
                            return Ok(());
                        }
                        Settled::Soon | Settled::No => {}
                    }
                }
                self.log(&format!(
                    "no word from {peer} for {:?}; aborting",
                    self.patience
                ));
                self.abort_current("no-reply").await;
                return Box::pin(self.maybe_finish()).await;
            }
            return Ok(());
        };
        if !current.game.is_settled() && !overdue {
            return Ok(()); // the opponent moved last: its declaration comes next
        }
        let current = self.current.take().expect("checked above");
        let outcome = match &ending {
            Ending::Win { winner } if *winner == current.game.me() => Outcome::Won,
            Ending::Win { .. } => Outcome::Lost,
            Ending::Draw => Outcome::Drew,
            Ending::Aborted { .. } => Outcome::Aborted,
        };
        let record = match current.match_id {
            Some(id) => match self.client.get(&format!("/api/matches/{id}")).await {
                Ok(view) => {
                    let (text, agrees) = referee(self.app, &view, &ending);
                    if !agrees {
                        self.disagreements += 1;
                    }
                    if agrees {
                        text
                    } else {
                        format!("{text} — DISAGREES")
                    }
                }
                Err(e) => format!("unavailable ({e:#})"),
            },
            None => "no match".to_owned(),
        };
        let by = match &ending {
            Ending::Aborted { by: Side::Me, .. } => " by me",
            Ending::Aborted {
                by: Side::Opponent, ..
            } => " by the opponent",
            _ => "",
        };
        let how = format!(
            "{}{by} after {} moves",
            ending.describe(self.app),
            current.game.seq()
        );
        self.log_game(&current, outcome, &how, &record);
        Ok(())
    }

    /// Counts an ended game and logs its one line: how it ended for this agent, and what
    /// the referee recorded.
    fn log_game(&mut self, current: &Current, outcome: Outcome, how: &str, record: &str) {
        let outcome = self.tally.count(outcome);
        self.played += 1;
        if let Some(id) = current.game.game_id() {
            self.finished.insert((current.peer.clone(), id.clone()));
        }
        println!(
            "game {}: {} match {} as {} vs {}: {outcome} ({how}); referee: {record}",
            current.number,
            self.app,
            current
                .match_id
                .map_or_else(|| "?".to_owned(), |m| m.to_string()),
            self.app.role_name(current.game.me()),
            current.peer,
        );
    }

    /// What the referee says of a game whose opponent has gone silent. The game may be over
    /// already (the server ends it at the deadline with automatic timeouts, or the opponent
    /// called it off), or the opponent's move deadline may have passed, which makes the win
    /// mine to claim (the timeout claim, `POST /api/matches/{id}/claim-timeout`).
    async fn ask_referee(&mut self, id: u64) -> Settled {
        let path = format!("/api/matches/{id}");
        let Ok(view) = self.client.get(&path).await else {
            return Settled::No;
        };
        if let Some((text, _, winner)) = record(self.app, &view) {
            return Settled::Ended(text, winner);
        }
        if view["deadline"]["kind"] != "timeout" {
            return Settled::No;
        }
        let claim = self
            .client
            .post(&format!("{path}/claim-timeout"), &serde_json::json!({}))
            .await;
        match claim {
            Ok(_) => match self.client.get(&path).await {
                Ok(view) => record(self.app, &view).map_or(Settled::No, |(text, _, winner)| {
                    Settled::Ended(text, winner)
                }),
                Err(_) => Settled::No,
            },
            // 110: the deadline has not passed yet.
            Err(e) if Client::refusal_code(&e) == Some(110) => Settled::Soon,
            Err(e) => {
                self.log(&format!("could not claim the timeout: {e:#}"));
                Settled::No
            }
        }
    }

    /// Ends the current game as the referee recorded it, when the referee ended it before
    /// the players did (its clock: the opponent let a move's time run out).
    fn finish_by_referee(&mut self, text: &str, winner: Option<Player>) {
        let Some(current) = self.current.take() else {
            return;
        };
        let outcome = match winner {
            Some(w) if w == current.game.me() => Outcome::Won,
            Some(_) => Outcome::Lost,
            None => Outcome::Aborted,
        };
        let how = format!(
            "the referee ended it after {} moves, the opponent silent",
            current.game.seq()
        );
        self.log_game(&current, outcome, &how, text);
    }

    async fn run(&mut self, games: Option<u32>) -> anyhow::Result<()> {
        let mut cursor = self.client.saved_cursor();
        loop {
            if games.is_some_and(|n| self.played >= n) {
                return Ok(());
            }
            if self.current.is_none() {
                if let Some(target) = self.challenge.clone() {
                    self.propose(target).await?;
                } else if !self.proposals.is_empty() {
                    self.accept_next().await;
                }
            }
            self.act().await;
            self.maybe_finish().await?;
            if self.current.is_none() && (self.challenge.is_some() || !self.proposals.is_empty()) {
                continue;
            }
            let wait = match &self.current {
                Some(c) => self
                    .patience
                    .saturating_sub(c.last_heard.elapsed())
                    .min(Duration::from_secs(20))
                    .max(Duration::from_millis(10)),
                None => Duration::from_secs(20),
            };
            let (messages, next) = match self.client.inbox(cursor, wait).await {
                Ok(page) => page,
                Err(e) => {
                    self.log(&format!("cannot read the inbox: {e:#}; retrying"));
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            for message in &messages {
                self.handle(message).await;
                // Acting between messages keeps the order of play even when several arrive
                // together (a move, then the next proposal).
                self.act().await;
                self.maybe_finish().await?;
            }
            if next != cursor {
                cursor = next;
                self.client.save_cursor(cursor)?;
            }
        }
    }
}

pub(crate) fn run(args: AgentArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let seed = match args.seed {
            Some(seed) => seed,
            None => {
                let mut bytes = [0u8; 8];
                SysRng
                    .try_fill_bytes(&mut bytes)
                    .context("no randomness for the seed")?;
                u64::from_le_bytes(bytes)
            }
        };
        let app = App::of_game(GameKind::from(args.app));
        let strength = args.strategy.strength();
        if let Some(address) = &args.a2a {
            return play_a2a(&args, address, app, strength, seed).await;
        }
        let mut client = Client::connect(&args.connection, true).await?;
        if let Some(id) = args.tournament {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            eprintln!(
                "triad agent: on {}: tournament {id}, {strength} play, seed {seed}",
                client.server()
            );
            return tournament::play(&mut client, id, strength, &mut rng).await;
        }
        if let Some(target) = &args.challenge {
            triad_identity::parse_address(target)
                .map_err(|e| anyhow::anyhow!("--challenge {target}: {e}"))?;
        }
        let games = args.games.or(args.challenge.is_some().then_some(1));
        let mut agent = Agent {
            tag: format!("{:08x}", seed as u32 ^ (seed >> 32) as u32),
            client,
            app,
            strength,
            rng: ChaCha8Rng::seed_from_u64(seed),
            unsigned: args.unsigned,
            patience: Duration::from_secs(args.patience.max(1)),
            challenge: args.challenge,
            role: args.role,
            current: None,
            proposals: VecDeque::new(),
            finished: HashSet::new(),
            started: 0,
            played: 0,
            tally: Tally::default(),
            disagreements: 0,
        };
        let what = match &agent.challenge {
            Some(target) => format!("proposing {app} to {}", short(target)),
            None => format!("accepting {app} proposals"),
        };
        agent.log(&format!(
            "on {}: {what}, {} play, seed {seed}",
            agent.client.server(),
            strength
        ));
        agent.run(games).await?;
        let t = &agent.tally;
        eprintln!(
            "triad agent: played {}: {} won, {} lost, {} drawn, {} aborted",
            agent.played, t.won, t.lost, t.drew, t.aborted
        );
        if agent.disagreements > 0 {
            bail!(
                "the referee's record disagreed with this agent's in {} games",
                agent.disagreements
            );
        }
        Ok(())
    })
}

/// `triad agent --a2a`: reads the agent's card, logs in if it asks, and plays the games.
async fn play_a2a(
    args: &AgentArgs,
    address: &str,
    app: App,
    strength: Strength,
    seed: u64,
) -> anyhow::Result<()> {
    // Message ids must not repeat between runs, even with the same --seed.
    let mut bytes = [0u8; 8];
    SysRng
        .try_fill_bytes(&mut bytes)
        .context("no randomness for the message ids")?;
    let tag = format!("triad-agent-{:016x}", u64::from_le_bytes(bytes));
    let connection = args.connection.clone();
    let peer = Peer::connect(
        address,
        args.a2a_version,
        args.a2a_token.clone(),
        move || connection.load_key(),
        tag,
    )
    .await?;
    eprintln!(
        "triad agent: {} at {} over A2A {}: proposing {app}, {strength} play, seed {seed}",
        peer.name, peer.endpoint, peer.version
    );
    let plan = a2a::Plan {
        app,
        strength,
        role: args.role,
        games: args.games.unwrap_or(1),
        level: args.opponent_level.map(StrategyArg::level),
    };
    a2a::run(peer, plan, ChaCha8Rng::seed_from_u64(seed)).await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_referees_record_is_compared_by_outcome() {
        let app = App::TicTacToe;
        let won = json!({"outcome": {"reason": "win", "winner": "first"}});
        assert_eq!(
            referee(
                app,
                &won,
                &Ending::Win {
                    winner: Player::First
                }
            ),
            ("win by X".into(), true)
        );
        assert!(
            !referee(
                app,
                &won,
                &Ending::Win {
                    winner: Player::Second
                }
            )
            .1
        );
        assert!(!referee(app, &won, &Ending::Draw).1);
        let drawn = json!({"outcome": {"reason": "draw", "winner": null}});
        assert_eq!(referee(app, &drawn, &Ending::Draw), ("draw".into(), true));
        let aborted = json!({"outcome": {"reason": "aborted", "winner": null}});
        let mine = Ending::Aborted {
            by: Side::Me,
            reason: Some("state-conflict".into()),
        };
        assert_eq!(
            referee(app, &aborted, &mine),
            ("abort (aborted)".into(), true)
        );
        assert!(!referee(app, &json!({"outcome": null}), &Ending::Draw).1);
        let forfeit = json!({"outcome": {"reason": "forfeit", "winner": "second"}});
        assert_eq!(
            referee(App::Sos, &forfeit, &Ending::Draw).0,
            "win by second (forfeit)"
        );
    }

    #[test]
    fn addresses_are_shortened_for_logs() {
        assert_eq!(short(&format!("0x{}", "ab".repeat(32))), "0xabab…abab");
        assert_eq!(short("0x12"), "0x12");
    }
}
