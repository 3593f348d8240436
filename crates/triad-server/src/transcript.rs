//! Signed transcripts: a finished match's events as a hash chain whose head the server
//! signs, so that anyone holding the server's public key can check offline what happened
//! (`docs/transcript.md` is the format's specification; `triad verify` and
//! `interop/python/verify_transcript.py` are two verifiers of it).
//!
//! The chain: `link_0 = BLAKE2b-256(HEADER_DOMAIN ‖ server public key ‖ match id (u64,
//! big-endian) ‖ the four payout rules (u32, big-endian))`, and for each event `i` (its
//! stored text, the very bytes the API serves) `link_i = BLAKE2b-256(link_{i-1} ‖ text_i)`.
//! The head is the last link; the server signs `HEAD_DOMAIN ‖ head` with Ed25519.
//!
//! A transcript file is exactly [`Transcript::render`]'s bytes: [`verify`] parses the file
//! and refuses it unless rendering what it parsed gives the same bytes, so a change that
//! JSON parsing would normalise away (a space, an escape, a key it ignores) is caught as
//! well as one the chain or the signature catches. Past the chain and the signature,
//! [`verify`] re-derives the match: every move by the rules (`triad-rules`), the ending
//! from the final position, and every stake, payout and reserve share from the payout
//! rules ([`PayoutRules::settle`]), as the engine settles a match.
//!
//! Pure: no I/O, no clock, no randomness (Ed25519 signing is deterministic).

use std::fmt;

use serde::{Deserialize, Serialize};
use triad_engine::{
    Account, Address, EndReason, Event, EventKind, MatchId, MoveSignature, PayoutRules, Seat,
    TransferReason,
};
use triad_identity::{SigningKey, VerifyingKey};
use triad_rules::{AnyGame, GameKind, Outcome, Player};

/// The format's name and version, the first field of every transcript.
pub const FORMAT: &str = "triad-transcript/1";

/// What the first link hashes before the server's key, the match and the payout rules.
pub const HEADER_DOMAIN: &[u8] = b"triad-transcript/1 header\0";

/// What the server's signature covers before the head.
pub const HEAD_DOMAIN: &[u8] = b"triad-transcript/1 head\0";

/// The one signature algorithm.
pub const ALGORITHM: &str = "ed25519";

/// The server's transcript key as published (`GET /.well-known/triad-transcript-key`) and
/// as named in every transcript.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerKey {
    /// Always `ed25519`.
    pub algorithm: String,
    /// The Ed25519 public key: 64 lowercase hex digits.
    pub public_key: String,
    /// The first 8 bytes of BLAKE2b-256 of the public key, as 16 lowercase hex digits.
    pub key_id: String,
}

impl ServerKey {
    /// The published form of `key`.
    #[must_use]
    pub fn of(key: &VerifyingKey) -> ServerKey {
        ServerKey {
            algorithm: ALGORITHM.to_owned(),
            public_key: hex::encode(key.as_bytes()),
            key_id: key_id(key),
        }
    }

    /// The key it names, checked: the algorithm, the key's encoding and its id.
    ///
    /// # Errors
    /// What is wrong, naming the field.
    pub fn key(&self) -> Result<VerifyingKey, Failure> {
        let field = |name: &'static str, problem: String| Failure::new(Place::Field(name), problem);
        if self.algorithm != ALGORITHM {
            return Err(field(
                "server_key.algorithm",
                format!("is {:?}, not \"{ALGORITHM}\"", self.algorithm),
            ));
        }
        let key = parse_key(&self.public_key)
            .map_err(|problem| field("server_key.public_key", problem))?;
        if self.key_id != key_id(&key) {
            return Err(field(
                "server_key.key_id",
                format!("is not the public key's id ({})", key_id(&key)),
            ));
        }
        Ok(key)
    }
}

/// A public key from exactly 64 lowercase hex digits.
///
/// # Errors
/// What is wrong with the text.
pub fn parse_key(text: &str) -> Result<VerifyingKey, String> {
    let bytes = lower_hex::<32>(text)?;
    let key = triad_identity::parse_public_key(&hex::encode(bytes))
        .map_err(|e| format!("is not a usable Ed25519 public key: {e}"))?;
    Ok(key)
}

/// A key's id: the first 8 bytes of BLAKE2b-256 of its 32 bytes, in hex.
#[must_use]
pub fn key_id(key: &VerifyingKey) -> String {
    hex::encode(&triad_identity::hash256(key.as_bytes())[..8])
}

/// A finished match's transcript. The field order is the file's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Transcript {
    /// Always [`FORMAT`].
    pub format: String,
    /// The key that signed it.
    pub server_key: ServerKey,
    /// The match.
    pub match_id: u64,
    /// The payout rules the match was settled by.
    pub payouts: Payouts,
    /// The match's events in order, each as the text the server stored.
    pub events: Vec<String>,
    /// The players' own signed messages about the match (an agents' game's signed
    /// envelopes), in the order the server stored them.
    pub messages: Vec<ClientMessage>,
    /// The chain's links, in hex: `links[i]` after `events[i]`, then one after each
    /// message (`links[events.len() + j]` after `messages[j]`).
    pub links: Vec<String>,
    /// The last link, in hex.
    pub head: String,
    /// The server's Ed25519 signature of [`HEAD_DOMAIN`] ‖ head, in hex.
    pub signature: String,
}

/// A message a player signed with its own key: an agents' game's signed envelope
/// (`triad_protocol::envelope`), which the player cannot later deny.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientMessage {
    /// The sender's address.
    pub from: String,
    /// The recipient's address.
    pub to: String,
    /// The app's id (`tic-tac-toe`).
    pub app: String,
    /// The action's id (`propose`, `accept`, `move`, `result`).
    pub action: String,
    /// The payload, canonical JSON, as signed.
    pub payload: String,
    /// The sender's Ed25519 public key, 64 lowercase hex digits.
    pub public_key: String,
    /// The sender's signature of [`ClientMessage::signing_text`], 128 lowercase hex digits.
    pub signature: String,
}

impl ClientMessage {
    /// The text the sender signed (`triad_protocol::envelope::signing_text`).
    #[must_use]
    pub fn signing_text(&self) -> String {
        format!(
            "{}\nfrom: {}\nto: {}\napp: {}\naction: {}\npayload: {}",
            triad_protocol::envelope::SIGNING_DOMAIN,
            self.from,
            self.to,
            self.app,
            self.action,
            self.payload
        )
    }

    /// What the chain hashes for it: the signed text, then the key and the signature.
    #[must_use]
    pub fn chained_text(&self) -> String {
        format!(
            "{}\npublic_key: {}\nsignature: {}",
            self.signing_text(),
            self.public_key,
            self.signature
        )
    }
}

/// The payout rules, in basis points, as a transcript names them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Payouts {
    /// The winner's share of the pot after a win or a forfeit.
    pub win_bps_of_pot: u32,
    /// Each player's refund, as a share of their own stake, after a draw.
    pub draw_bps_of_stake: u32,
    /// The claimer's share of the pot after a timeout.
    pub timeout_bps_of_pot: u32,
    /// The refund, as a share of the stake, when a waiting player cancels.
    pub cancel_bps_of_stake: u32,
}

impl From<PayoutRules> for Payouts {
    fn from(p: PayoutRules) -> Payouts {
        Payouts {
            win_bps_of_pot: p.win_bps_of_pot,
            draw_bps_of_stake: p.draw_bps_of_stake,
            timeout_bps_of_pot: p.timeout_bps_of_pot,
            cancel_bps_of_stake: p.cancel_bps_of_stake,
        }
    }
}

impl From<Payouts> for PayoutRules {
    fn from(p: Payouts) -> PayoutRules {
        PayoutRules {
            win_bps_of_pot: p.win_bps_of_pot,
            draw_bps_of_stake: p.draw_bps_of_stake,
            timeout_bps_of_pot: p.timeout_bps_of_pot,
            cancel_bps_of_stake: p.cancel_bps_of_stake,
        }
    }
}

/// The first link: the chain's header.
#[must_use]
pub fn header_link(key: &VerifyingKey, match_id: u64, payouts: Payouts) -> [u8; 32] {
    let mut bytes = Vec::with_capacity(HEADER_DOMAIN.len() + 32 + 8 + 16);
    bytes.extend_from_slice(HEADER_DOMAIN);
    bytes.extend_from_slice(key.as_bytes());
    bytes.extend_from_slice(&match_id.to_be_bytes());
    for bps in [
        payouts.win_bps_of_pot,
        payouts.draw_bps_of_stake,
        payouts.timeout_bps_of_pot,
        payouts.cancel_bps_of_stake,
    ] {
        bytes.extend_from_slice(&bps.to_be_bytes());
    }
    triad_identity::hash256(&bytes)
}

/// The link after `previous` for an event's text.
#[must_use]
pub fn next_link(previous: &[u8; 32], event: &str) -> [u8; 32] {
    let mut bytes = Vec::with_capacity(32 + event.len());
    bytes.extend_from_slice(previous);
    bytes.extend_from_slice(event.as_bytes());
    triad_identity::hash256(&bytes)
}

/// What the server signs: [`HEAD_DOMAIN`] ‖ head.
#[must_use]
pub fn signed_message(head: &[u8; 32]) -> Vec<u8> {
    [HEAD_DOMAIN, head.as_slice()].concat()
}

impl Transcript {
    /// The transcript of match `match_id`'s `events` (their stored texts, in order) and
    /// its players' signed `messages`, settled by `payouts`, signed with `key`.
    #[must_use]
    pub fn sign(
        key: &SigningKey,
        match_id: u64,
        payouts: Payouts,
        events: Vec<String>,
        messages: Vec<ClientMessage>,
    ) -> Self {
        let public = key.verifying_key();
        let mut link = header_link(&public, match_id, payouts);
        let links = events
            .iter()
            .cloned()
            .chain(messages.iter().map(ClientMessage::chained_text))
            .map(|text| {
                link = next_link(&link, &text);
                hex::encode(link)
            })
            .collect();
        let signature = triad_identity::sign_ed25519(key, &signed_message(&link));
        Transcript {
            format: FORMAT.to_owned(),
            server_key: ServerKey::of(&public),
            match_id,
            payouts,
            events,
            messages,
            links,
            head: hex::encode(link),
            signature,
        }
    }

    /// The file's bytes: the JSON with two-space indentation (serde_json's pretty form:
    /// `": "` after a key, no space before a comma, strings with only the escapes JSON
    /// requires) and one newline at the end. The only form [`verify`] accepts.
    #[must_use]
    pub fn render(&self) -> String {
        // Serialising plain strings, numbers and structs cannot fail.
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// Where a check failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// The file as a whole (its bytes, its JSON).
    File,
    /// A top-level field, by its JSON path.
    Field(&'static str),
    /// Event `index` (0-based, in the file's order), at a field of the event's JSON.
    Event {
        /// Its index in `events`.
        index: usize,
        /// Its global sequence number, when it could be read.
        seq: Option<u64>,
        /// The field, as a JSON path inside the event.
        field: &'static str,
    },
    /// Message `index` (0-based), at one of its fields.
    Message {
        /// Its index in `messages`.
        index: usize,
        /// The field.
        field: &'static str,
    },
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::File => f.write_str("the file"),
            Place::Field(name) => write!(f, "field {name}"),
            Place::Event { index, seq, field } => {
                write!(f, "events[{index}]")?;
                if let Some(seq) = seq {
                    write!(f, " (seq {seq})")?;
                }
                write!(f, ", field {field}")
            }
            Place::Message { index, field } => write!(f, "messages[{index}], field {field}"),
        }
    }
}

/// A failed check: where, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// Where.
    pub place: Place,
    /// What is wrong, in plain words.
    pub problem: String,
}

impl Failure {
    fn new(place: Place, problem: impl Into<String>) -> Failure {
        Failure {
            place,
            problem: problem.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.place, self.problem)
    }
}

impl std::error::Error for Failure {}

/// What a transcript that verifies shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// The transcript itself.
    pub transcript: Transcript,
    /// The game, when the match started.
    pub game: Option<GameKind>,
    /// The seats, first mover first, when the match started.
    pub seats: Option<[Seat; 2]>,
    /// The stake per player.
    pub stake: u128,
    /// The moves played.
    pub moves: usize,
    /// How it ended.
    pub reason: EndReason,
    /// Who won, if anyone.
    pub winner: Option<Player>,
    /// Every payout and refund to a player, in order.
    pub payouts: Vec<(Address, u128)>,
    /// The house's share.
    pub reserve: u128,
    /// The moves whose player's own signature the transcript carries.
    pub signed_moves: usize,
}

/// Exactly `N` bytes from `2N` lowercase hex digits.
fn lower_hex<const N: usize>(text: &str) -> Result<[u8; N], String> {
    if text.len() != 2 * N || !text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(format!("is not {} lowercase hex digits", 2 * N));
    }
    let mut out = [0u8; N];
    hex::decode_to_slice(text, &mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

/// Verifies a transcript file against the server's public key `trusted`: its form, the
/// chain, the signature, every move by the rules, the ending and the money by the payout
/// rules. Stops at the first failure, which says where.
///
/// # Errors
/// The first check that fails.
pub fn verify(file: &[u8], trusted: &VerifyingKey) -> Result<Verified, Failure> {
    let transcript: Transcript = serde_json::from_slice(file).map_err(|e| {
        Failure::new(
            Place::File,
            format!(
                "is not a transcript (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
        )
    })?;
    let canonical = transcript.render();
    if canonical.as_bytes() != file {
        let at = canonical
            .bytes()
            .zip(file.iter())
            .position(|(a, b)| a != *b)
            .unwrap_or(canonical.len().min(file.len()));
        return Err(Failure::new(
            Place::File,
            format!(
                "is not in the transcript's one form (docs/transcript.md): it differs at byte {at}"
            ),
        ));
    }
    if transcript.format != FORMAT {
        return Err(Failure::new(
            Place::Field("format"),
            format!("is {:?}, not \"{FORMAT}\"", transcript.format),
        ));
    }
    let key = transcript.server_key.key()?;
    if key != *trusted {
        return Err(Failure::new(
            Place::Field("server_key.public_key"),
            format!(
                "is not the server's key you trust (key id {}, the file names {})",
                key_id(trusted),
                transcript.server_key.key_id
            ),
        ));
    }
    check_chain(&transcript, &key)?;
    check_match(transcript)
}

/// The chain and the server's signature of its head.
fn check_chain(t: &Transcript, key: &VerifyingKey) -> Result<(), Failure> {
    if t.events.is_empty() {
        return Err(Failure::new(Place::Field("events"), "is empty"));
    }
    let entries = t.events.len() + t.messages.len();
    if t.links.len() != entries {
        return Err(Failure::new(
            Place::Field("links"),
            format!(
                "has {} links for {} events and {} messages",
                t.links.len(),
                t.events.len(),
                t.messages.len()
            ),
        ));
    }
    let mut link = header_link(key, t.match_id, t.payouts);
    let texts = t
        .events
        .iter()
        .cloned()
        .chain(t.messages.iter().map(ClientMessage::chained_text));
    for (i, (text, stated)) in texts.zip(&t.links).enumerate() {
        link = next_link(&link, &text);
        if *stated != hex::encode(link) {
            let entry = if i < t.events.len() {
                format!("events[{i}]")
            } else {
                format!("messages[{}]", i - t.events.len())
            };
            return Err(Failure::new(
                Place::Field("links"),
                format!(
                    "links[{i}] is not the chain's link after {entry}: it, an earlier entry, \
                     the match id, the payouts or the link was changed"
                ),
            ));
        }
    }
    if t.head != hex::encode(link) {
        return Err(Failure::new(Place::Field("head"), "is not the last link"));
    }
    let signature = lower_hex::<64>(&t.signature)
        .map_err(|problem| Failure::new(Place::Field("signature"), problem))?;
    triad_identity::verify_ed25519(
        &hex::encode(key.as_bytes()),
        &signed_message(&link),
        &hex::encode(signature),
    )
    .map_err(|_| {
        Failure::new(
            Place::Field("signature"),
            "is not the server key's signature of the head",
        )
    })?;
    Ok(())
}

/// The match re-derived from its events: by the rules and by the payout rules.
struct Replay {
    id: MatchId,
    rules: PayoutRules,
    /// Who opened it (queued or challenged), before it has seats.
    host: Option<Address>,
    game: Option<GameKind>,
    stake: Option<u128>,
    seats: Option<[Seat; 2]>,
    position: Option<AnyGame>,
    moves: usize,
    /// Each move made: its seq, cell, mark and seat.
    played: Vec<(u8, u8, triad_rules::Mark, Seat)>,
    escrow: u128,
    ended: Option<(EndReason, Option<Player>)>,
    /// The transfers the ending owes, in the order the engine makes them.
    owed: std::collections::VecDeque<(Account, u128, TransferReason)>,
    paid: Vec<(Address, u128)>,
    reserve: u128,
    /// The server's key id, which a player's signature of a move names.
    key_id: String,
    /// The moves whose event carries its player's signature.
    signed: usize,
}

fn check_match(transcript: Transcript) -> Result<Verified, Failure> {
    if !PayoutRules::from(transcript.payouts).is_valid() {
        return Err(Failure::new(
            Place::Field("payouts"),
            "give a share over 100% (10000 basis points)",
        ));
    }
    let mut replay = Replay {
        id: MatchId(transcript.match_id),
        rules: transcript.payouts.into(),
        host: None,
        game: None,
        stake: None,
        seats: None,
        position: None,
        moves: 0,
        played: Vec::new(),
        escrow: 0,
        ended: None,
        owed: std::collections::VecDeque::new(),
        paid: Vec::new(),
        reserve: 0,
        key_id: transcript.server_key.key_id.clone(),
        signed: 0,
    };
    let mut last: Option<(u64, u64)> = None;
    for (index, text) in transcript.events.iter().enumerate() {
        let at = |seq: Option<u64>, field: &'static str| Place::Event { index, seq, field };
        let event: Event = serde_json::from_str(text)
            .map_err(|e| Failure::new(at(None, "(the event)"), format!("is not an event: {e}")))?;
        let seq = Some(event.seq);
        if let Some((prev_seq, prev_at)) = last {
            if event.seq <= prev_seq {
                return Err(Failure::new(
                    at(seq, "seq"),
                    format!("does not come after the previous event's ({prev_seq})"),
                ));
            }
            if event.at_ms < prev_at {
                return Err(Failure::new(
                    at(seq, "at_ms"),
                    "is earlier than the previous event's",
                ));
            }
        }
        last = Some((event.seq, event.at_ms));
        if event.match_id() != Some(replay.id) {
            return Err(Failure::new(
                at(seq, "match_id"),
                format!("is not the transcript's match ({})", replay.id),
            ));
        }
        replay
            .step(&event.kind)
            .map_err(|(field, problem)| Failure::new(at(seq, field), problem))?;
    }
    let Some((reason, winner)) = replay.ended else {
        return Err(Failure::new(
            Place::Field("events"),
            "end before the match does (no game_ended event)",
        ));
    };
    if let Some((to, amount, why)) = replay.owed.front() {
        return Err(Failure::new(
            Place::Field("events"),
            format!(
                "end before the match is settled: a {} of {amount} to {} is missing",
                reason_name(*why),
                account_name(to)
            ),
        ));
    }
    if replay.escrow != 0 {
        return Err(Failure::new(
            Place::Field("events"),
            format!("leave {} in the match's escrow", replay.escrow),
        ));
    }
    let signed_moves = check_messages(&transcript.messages, &replay)? + replay.signed;
    Ok(Verified {
        signed_moves,
        transcript,
        game: replay.game,
        seats: replay.seats,
        stake: replay.stake.unwrap_or(0),
        moves: replay.moves,
        reason,
        winner,
        payouts: replay.paid,
        reserve: replay.reserve,
    })
}

/// The players' signed messages: each is its sender's (a player of the match) signature
/// of that exact message to the other player, and each signed move is a move the match
/// has, by that player. Returns how many moves were signed.
fn check_messages(messages: &[ClientMessage], replay: &Replay) -> Result<usize, Failure> {
    use triad_protocol::{App, Message, Signed, envelope};
    let players: Vec<Address> = replay
        .seats
        .map(|seats| seats.iter().filter_map(Seat::address).collect())
        .unwrap_or_default();
    let mut signed_moves = 0;
    for (index, m) in messages.iter().enumerate() {
        let at = |field: &'static str, problem: String| {
            Failure::new(Place::Message { index, field }, problem)
        };
        let address = |field: &'static str, text: &str| -> Result<Address, Failure> {
            let a: Address = text
                .parse()
                .map_err(|_| at(field, "is not an address".to_owned()))?;
            if a.to_string() != text || !players.contains(&a) {
                return Err(at(field, "is not a player of the match".to_owned()));
            }
            Ok(a)
        };
        let from = address("from", &m.from)?;
        let to = address("to", &m.to)?;
        if from == to {
            return Err(at("to", "is the sender".to_owned()));
        }
        let app = App::from_id(&m.app).map_err(|e| at("app", e.to_string()))?;
        let message = Message::decode_json(app, &m.action, &m.payload)
            .map_err(|e| at("payload", e.to_string()))?;
        if message.payload_json(app) != m.payload {
            return Err(at("payload", "is not in its canonical form".to_owned()));
        }
        lower_hex::<32>(&m.public_key).map_err(|p| at("public_key", p))?;
        lower_hex::<64>(&m.signature).map_err(|p| at("signature", p))?;
        let signed = Signed {
            public_key: m.public_key.clone(),
            signature: m.signature.clone(),
        };
        envelope::verify(&signed, from.as_bytes(), to.as_bytes(), app, &message)
            .map_err(|e| at("signature", e.to_string()))?;
        if let Message::Move(mv) = &message {
            let made = replay.played.iter().any(|&(seq, cell, mark, by)| {
                seq == mv.seq
                    && cell == u8::from(mv.position)
                    && mark == mv.mark
                    && by == Seat::Human(from)
            });
            if !made {
                return Err(at(
                    "payload",
                    format!(
                        "signs move {} that the match does not have by its sender",
                        mv.seq
                    ),
                ));
            }
            signed_moves += 1;
        }
    }
    Ok(signed_moves)
}

fn reason_name(reason: TransferReason) -> &'static str {
    match reason {
        TransferReason::Deposit => "deposit",
        TransferReason::Withdrawal => "withdrawal",
        TransferReason::Stake => "stake",
        TransferReason::Payout => "payout",
        TransferReason::Refund => "refund",
        TransferReason::ReserveShare => "reserve share",
        TransferReason::Collect => "collection",
        TransferReason::EntryFee => "entry fee",
        TransferReason::Prize => "prize",
    }
}

fn account_name(account: &Account) -> String {
    match account {
        Account::Outside => "outside".to_owned(),
        Account::Player(a) => a.to_string(),
        Account::Escrow(id) => format!("the escrow of match {id}"),
        Account::Reserve => "the reserve".to_owned(),
        Account::Pool(id) => format!("the pool of tournament {id}"),
    }
}

/// A failed step: the event's field and the problem.
type StepError = (&'static str, String);

impl Replay {
    fn step(&mut self, kind: &EventKind) -> Result<(), StepError> {
        match kind {
            EventKind::Queued {
                player,
                game,
                stake,
                ..
            } => self.open(*player, *game, *stake),
            EventKind::ChallengeIssued {
                challenger,
                game,
                stake,
                ..
            } => self.open(*challenger, *game, *stake),
            EventKind::ChallengeAccepted { .. }
            | EventKind::ChallengeDeclined { .. }
            | EventKind::ChallengeExpired { .. } => {
                if self.host.is_none() || self.seats.is_some() || self.ended.is_some() {
                    return Err(("type", "answers no open challenge".to_owned()));
                }
                Ok(())
            }
            EventKind::GameStarted {
                game, stake, seats, ..
            } => self.start(*game, *stake, *seats),
            EventKind::Moved {
                seq,
                player,
                by,
                cell,
                mark,
                signed,
                ..
            } => {
                self.play(*seq, *player, *by, u8::from(*cell), *mark)?;
                match signed {
                    Some(signed) => self.check_signed(*seq, *by, u8::from(*cell), *mark, signed),
                    None => Ok(()),
                }
            }
            EventKind::MatchAborted { .. } => {
                if self.position.is_none() || self.ended.is_some() {
                    return Err(("type", "aborts no match in play".to_owned()));
                }
                Ok(())
            }
            EventKind::GameEnded {
                reason,
                winner,
                cells,
                ..
            } => self.end(*reason, *winner, *cells),
            EventKind::RematchOffered { .. } => {
                if self.ended.is_none() || !self.owed.is_empty() {
                    return Err((
                        "type",
                        "offers a rematch of a match not yet over".to_owned(),
                    ));
                }
                Ok(())
            }
            EventKind::Transferred { transfer, .. } => {
                self.transfer(transfer.from, transfer.to, transfer.amount, transfer.reason)
            }
            EventKind::PuzzleAttempted { .. } => Err((
                "type",
                "is a puzzle attempt, which belongs to no match".to_owned(),
            )),
            EventKind::TournamentCreated { .. }
            | EventKind::TournamentJoined { .. }
            | EventKind::TournamentLeft { .. }
            | EventKind::TournamentPaused { .. }
            | EventKind::TournamentStarted { .. }
            | EventKind::TournamentRound { .. }
            | EventKind::TournamentFinished { .. }
            | EventKind::TournamentCancelled { .. } => Err((
                "type",
                "is a tournament's event, which belongs to no match".to_owned(),
            )),
            EventKind::ClocksResumed { .. } => Err((
                "type",
                "is the clocks resuming after an outage, which belongs to no match".to_owned(),
            )),
            EventKind::Forgotten { .. } => Err((
                "type",
                "is the clock sweeping memory, which belongs to no match".to_owned(),
            )),
        }
    }

    fn open(&mut self, host: Address, game: GameKind, stake: u128) -> Result<(), StepError> {
        if self.host.is_some() || self.seats.is_some() {
            return Err(("type", "opens a match already open".to_owned()));
        }
        self.host = Some(host);
        self.game = Some(game);
        self.stake = Some(stake);
        Ok(())
    }

    fn start(&mut self, game: GameKind, stake: u128, seats: [Seat; 2]) -> Result<(), StepError> {
        if self.seats.is_some() || self.ended.is_some() {
            return Err(("type", "starts a match already started or over".to_owned()));
        }
        if self.game.is_some_and(|g| g != game) {
            return Err((
                "game",
                "is not the game the match was opened for".to_owned(),
            ));
        }
        if self.stake.is_some_and(|s| s != stake) {
            return Err((
                "stake",
                "is not the stake the match was opened with".to_owned(),
            ));
        }
        if let Some(host) = self.host
            && !seats.iter().any(|s| s.address() == Some(host))
        {
            return Err((
                "seats",
                "leave out the player who opened the match".to_owned(),
            ));
        }
        self.game = Some(game);
        self.stake = Some(stake);
        self.seats = Some(seats);
        self.position = Some(AnyGame::new(game));
        Ok(())
    }

    fn play(
        &mut self,
        seq: u8,
        player: Player,
        by: Seat,
        cell: u8,
        mark: triad_rules::Mark,
    ) -> Result<(), StepError> {
        let (Some(position), Some(seats)) = (self.position, self.seats) else {
            return Err(("type", "is a move before the match started".to_owned()));
        };
        if self.ended.is_some() {
            return Err(("type", "is a move after the match ended".to_owned()));
        }
        if player != position.turn() {
            return Err((
                "player",
                format!("is not the player to move ({:?})", position.turn()),
            ));
        }
        if by != seats[player.index()] {
            return Err(("by", "is not who sits in the mover's seat".to_owned()));
        }
        let (next, _) = position
            .play_as(player, cell, mark)
            .map_err(|e| ("cell", format!("is not a legal move by the rules: {e}")))?;
        self.moves += 1;
        if usize::from(seq) != self.moves {
            return Err((
                "seq",
                format!("is not the number of marks after the move ({})", self.moves),
            ));
        }
        self.position = Some(next);
        self.played.push((seq, cell, mark, by));
        Ok(())
    }

    /// A move's signature by its player: the key is the mover's address's, and it signed
    /// this move of this match on this server (`triad_identity::move_message`).
    fn check_signed(
        &mut self,
        seq: u8,
        by: Seat,
        cell: u8,
        mark: triad_rules::Mark,
        signed: &MoveSignature,
    ) -> Result<(), StepError> {
        let Some(address) = by.address() else {
            return Err((
                "signed",
                "is on a move of the computer, which signs nothing".to_owned(),
            ));
        };
        let key = triad_identity::parse_public_key(&hex::encode(signed.public_key))
            .map_err(|e| ("signed.public_key", format!("is not a player's key: {e}")))?;
        if Address::from_bytes(triad_identity::address_of(&key)) != address {
            return Err((
                "signed.public_key",
                format!("is not the key of the mover's address ({address})"),
            ));
        }
        let text = triad_identity::move_message(
            &self.key_id,
            self.id.0,
            seq,
            cell,
            mark.char(),
            &address.to_string(),
        );
        triad_identity::verify_ed25519(
            &hex::encode(signed.public_key),
            text.as_bytes(),
            &hex::encode(signed.signature),
        )
        .map_err(|_| {
            (
                "signed.signature",
                "does not verify: the mover did not sign this move".to_owned(),
            )
        })?;
        self.signed += 1;
        Ok(())
    }

    fn end(
        &mut self,
        reason: EndReason,
        winner: Option<Player>,
        cells: triad_rules::CellSet,
    ) -> Result<(), StepError> {
        if self.ended.is_some() {
            return Err(("type", "ends a match already over".to_owned()));
        }
        let Some(stake) = self.stake else {
            return Err(("type", "ends a match never opened".to_owned()));
        };
        let outcome = self.position.and_then(|p| p.outcome());
        let expected_cells = match outcome {
            Some(Outcome::Win { cells, .. }) => cells,
            _ => triad_rules::CellSet::default(),
        };
        match reason {
            EndReason::Win | EndReason::Draw => {
                let Some(outcome) = outcome else {
                    return Err((
                        "reason",
                        format!(
                            "is {}, but the game is not over by the rules",
                            reason.name()
                        ),
                    ));
                };
                let rules_reason = match outcome {
                    Outcome::Win { .. } => EndReason::Win,
                    Outcome::Draw => EndReason::Draw,
                };
                if reason != rules_reason {
                    return Err((
                        "reason",
                        format!(
                            "is {}, but by the rules the game is a {}",
                            reason.name(),
                            rules_reason.name()
                        ),
                    ));
                }
                if winner != outcome.winner() {
                    return Err((
                        "winner",
                        "is not the rules' winner of the final position".to_owned(),
                    ));
                }
            }
            EndReason::Forfeit | EndReason::Timeout => {
                if self.position.is_none() || outcome.is_some() {
                    return Err((
                        "reason",
                        format!("is {}, but no game was in play", reason.name()),
                    ));
                }
                if winner.is_none() {
                    return Err((
                        "winner",
                        format!("is missing: a {} has a winner", reason.name()),
                    ));
                }
            }
            EndReason::Aborted => {
                if outcome.is_some() || winner.is_some() {
                    return Err(("reason", "is aborted, but the game has a result".to_owned()));
                }
            }
            EndReason::Cancelled | EndReason::Declined | EndReason::Expired => {
                if self.seats.is_some() || winner.is_some() {
                    return Err((
                        "reason",
                        format!("is {}, but the match had started", reason.name()),
                    ));
                }
            }
        }
        if cells != expected_cells {
            return Err(("cells", "are not the cells of the winning lines".to_owned()));
        }
        self.ended = Some((reason, winner));
        // The settlement, as the engine makes it (`Engine::finish`).
        let pot = self.escrow;
        let settlement = self.rules.settle(reason, stake, pot);
        let humans: Vec<Address> = match self.seats {
            Some(seats) => seats.iter().filter_map(Seat::address).collect(),
            None => self.host.into_iter().collect(),
        };
        let mut paid = 0;
        if reason.was_played() && reason != EndReason::Draw {
            let winner_address = winner
                .and_then(|p| self.seats.map(|s| s[p.index()]))
                .and_then(|s| s.address());
            if let Some(w) = winner_address {
                self.owe(
                    Account::Player(w),
                    settlement.to_winner,
                    TransferReason::Payout,
                );
                paid = settlement.to_winner;
            }
        } else {
            let why = if reason == EndReason::Draw {
                TransferReason::Payout
            } else {
                TransferReason::Refund
            };
            for h in humans {
                self.owe(Account::Player(h), settlement.to_each, why);
                paid = paid.saturating_add(settlement.to_each);
            }
        }
        if paid > pot {
            return Err((
                "reason",
                format!("would pay out {paid} from a pot of {pot}"),
            ));
        }
        self.owe(Account::Reserve, pot - paid, TransferReason::ReserveShare);
        Ok(())
    }

    fn owe(&mut self, to: Account, amount: u128, why: TransferReason) {
        if amount > 0 {
            self.owed.push_back((to, amount, why));
        }
    }

    fn transfer(
        &mut self,
        from: Account,
        to: Account,
        amount: u128,
        reason: TransferReason,
    ) -> Result<(), StepError> {
        let escrow = Account::Escrow(self.id);
        if self.ended.is_some() {
            let Some((owed_to, owed, why)) = self.owed.pop_front() else {
                return Err((
                    "transfer",
                    "moves money after the match was settled".to_owned(),
                ));
            };
            if from != escrow {
                return Err(("transfer.from", "is not the match's escrow".to_owned()));
            }
            if to != owed_to || reason != why {
                return Err((
                    "transfer.to",
                    format!(
                        "is not the next transfer the payout rules owe ({} to {})",
                        reason_name(why),
                        account_name(&owed_to)
                    ),
                ));
            }
            if amount != owed {
                return Err((
                    "transfer.amount",
                    format!("is {amount}; the payout rules give {owed}"),
                ));
            }
            self.escrow -= amount;
            match to {
                Account::Player(a) => self.paid.push((a, amount)),
                _ => self.reserve += amount,
            }
            return Ok(());
        }
        if reason != TransferReason::Stake || to != escrow {
            return Err((
                "transfer",
                "is not a stake into the match's escrow, the only money that moves before the end"
                    .to_owned(),
            ));
        }
        let Account::Player(staker) = from else {
            return Err(("transfer.from", "is not a player".to_owned()));
        };
        let seated = match self.seats {
            Some(seats) => seats.iter().any(|s| s.address() == Some(staker)),
            None => self.host == Some(staker),
        };
        if !seated {
            return Err(("transfer.from", "is not a player of the match".to_owned()));
        }
        if Some(amount) != self.stake {
            return Err(("transfer.amount", "is not the match's stake".to_owned()));
        }
        // Saturating: a hostile file's amounts near `u128::MAX` are refused, not a panic.
        self.escrow = self.escrow.saturating_add(amount);
        if self.escrow > amount.saturating_mul(2) || self.escrow == u128::MAX {
            return Err((
                "transfer.amount",
                "puts more than two stakes in escrow".to_owned(),
            ));
        }
        Ok(())
    }
}

/// The setting that keeps the server's transcript key: its 32-byte Ed25519 seed in hex.
pub const KEY_SETTING: &str = "transcript_key";

/// The signing key from its stored seed (64 hex digits).
///
/// # Errors
/// When the stored text is not 64 hex digits.
pub fn signing_key(seed_hex: &str) -> Result<SigningKey, String> {
    let mut seed = [0u8; 32];
    hex::decode_to_slice(seed_hex, &mut seed)
        .map_err(|e| format!("the stored transcript key is not 64 hex digits: {e}"))?;
    Ok(SigningKey::from_bytes(&seed))
}
