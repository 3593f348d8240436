//! The engine's settings: owner, timeouts, payout rules, limits.

use std::num::NonZeroU16;

use serde::{Deserialize, Serialize};

use crate::{Address, EndReason, TournamentRules};

/// A fraction in basis points (1/10,000).
pub type Bps = u32;

/// How a match's pot is shared out, per ending. The defaults are the on-chain SOS contract's:
/// for a stake `E` (pot `2E`), the winner gets `1.8E`, a tie refunds `0.9E` to each, a
/// timeout claim pays `1.9E`, and a cancel while waiting refunds `E`. Whatever is not paid out goes
/// to the house reserve. Aborts, declines and expiries always refund in full.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayoutRules {
    /// The winner's share of the pot after a win or a forfeit.
    pub win_bps_of_pot: Bps,
    /// Each player's refund, as a share of their own stake, after a draw.
    pub draw_bps_of_stake: Bps,
    /// The claimer's share of the pot after a timeout.
    pub timeout_bps_of_pot: Bps,
    /// The refund, as a share of the stake, when a waiting player cancels.
    pub cancel_bps_of_stake: Bps,
}

impl PayoutRules {
    /// The on-chain SOS contract's amounts: 90% of the pot to a winner, 90% of the stake
    /// back to each on a tie, 95% of the pot on a timeout claim, the whole stake on a cancel.
    pub const STANDARD: PayoutRules = PayoutRules {
        win_bps_of_pot: 9_000,
        draw_bps_of_stake: 9_000,
        timeout_bps_of_pot: 9_500,
        cancel_bps_of_stake: 10_000,
    };

    /// Whether every share is at most 100%.
    #[must_use]
    pub fn is_valid(&self) -> bool {
        [
            self.win_bps_of_pot,
            self.draw_bps_of_stake,
            self.timeout_bps_of_pot,
            self.cancel_bps_of_stake,
        ]
        .iter()
        .all(|&b| b <= 10_000)
    }
}

/// What a match's pot pays out when it ends: the one computation of every payout rule.
/// [`Engine`](crate::Engine) settles every ending with it, and every check made before an
/// ending (a crossed challenge's withdrawal, counted toward the acceptor's stake) asks it
/// too, so the two can never disagree. Whatever is not paid out goes to the reserve.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Settlement {
    /// What the winner gets, when a person won (a win, a forfeit, a timeout).
    pub to_winner: u128,
    /// What each participant gets back (a draw, a cancel, a decline, an expiry, an abort).
    pub to_each: u128,
}

impl PayoutRules {
    /// The payouts of a match with `stake` per player and `pot` in escrow that ends for
    /// `reason`: a share of the pot to the winner, or a share of the stake back to each
    /// participant. Never more than the pot for the participants the ending has (one
    /// winner, or each of the players whose stakes the pot holds), since every share is
    /// at most 100%.
    #[must_use]
    pub fn settle(&self, reason: EndReason, stake: u128, pot: u128) -> Settlement {
        let (to_winner, to_each) = match reason {
            EndReason::Win | EndReason::Forfeit => (share(pot, self.win_bps_of_pot), 0),
            EndReason::Timeout => (share(pot, self.timeout_bps_of_pot), 0),
            EndReason::Draw => (0, share(stake, self.draw_bps_of_stake)),
            EndReason::Cancelled => (0, share(stake, self.cancel_bps_of_stake)),
            EndReason::Declined | EndReason::Expired | EndReason::Aborted => (0, stake),
        };
        Settlement { to_winner, to_each }
    }
}

impl Default for PayoutRules {
    fn default() -> Self {
        PayoutRules::STANDARD
    }
}

/// `amount * bps / 10_000`, rounded down (the remainder goes to the reserve). The quotient
/// and the remainder by 10,000 are scaled apart, so no `u128` amount overflows; the share
/// is at most the amount when `bps <= 10_000`.
#[must_use]
pub fn share(amount: u128, bps: Bps) -> u128 {
    let bps = u128::from(bps);
    (amount / 10_000) * bps + (amount % 10_000) * bps / 10_000
}

/// Who starts a rematch.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RematchStart {
    /// Chosen by the seeded RNG (the tic-tac-toe table's reset, in the Shoehive tutorial).
    Random,
    /// The player who moved second last time moves first.
    Alternate,
}

/// The engine's settings. All times are milliseconds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// The operator (the SOS contract's owner): the only address that may deposit and collect.
    pub owner: Address,
    /// Seed of every random choice (who starts, the computer's tie-breaks).
    pub seed: u64,
    /// How long a waiting player must wait before cancelling with a refund.
    pub wait_cancel_ms: u64,
    /// How long the player to move has, from the opponent's last move (or the start).
    pub move_timeout_ms: u64,
    /// How long a challenge stays open.
    pub challenge_ttl_ms: u64,
    /// When true, a `Tick` at the deadline ends a slow player's match; when false, the
    /// last mover must claim it (`ur2slow`).
    pub automatic_timeouts: bool,
    /// The payout rules.
    pub payouts: PayoutRules,
    /// Who starts a rematch.
    pub rematch_start: RematchStart,
    /// The largest stake a match may have.
    #[serde(with = "crate::amount::text")]
    pub max_stake: u128,
    /// How long an idempotency key is remembered.
    pub idempotency_window_ms: u64,
    /// How long a finished match, or a finished or cancelled tournament, stays in memory
    /// (for rematches and queries) before only the event log and the store's archive hold
    /// it.
    pub finished_retention_ms: u64,
    /// The tournament settings.
    #[serde(default)]
    pub tournaments: TournamentRules,
    /// How many counters match ids come from. A match's id comes from the counter of the
    /// address that creates it ([`match_id_stripe`](Config::match_id_stripe)): the
    /// challenger, the player who queues, asks for a rematch or plays the computer, a
    /// tournament game's first seat. Stripe `s` of `S` gives the ids `S + s`, `2S + s`, …
    /// in order, so commands of players in different stripes create matches without
    /// sharing a counter (ARCHITECTURE.md, "Partitioned ordering"). One, the default,
    /// gives 1, 2, 3, …. Fixed for the life of a log: a log replays only with the count
    /// it was written with.
    #[serde(default = "one_stripe")]
    pub match_id_stripes: NonZeroU16,
    /// The first event of the log that the clock sweeps memory for
    /// ([`EventKind::Forgotten`](crate::EventKind::Forgotten)). The events before it were
    /// written when every event swept memory as of its own time, and replay so; one, the
    /// default, is a log that the clock has swept from its start. A database keeps the
    /// value it first opened with.
    #[serde(default = "first_event")]
    pub swept_by_clock_from_seq: u64,
    /// The first event of the log from which a tournament that ends (finished or
    /// cancelled) is forgotten after [`finished_retention_ms`](Config::finished_retention_ms),
    /// the store's archive holding it. One that ended by an earlier event ended while the
    /// store kept no such archive, so it stays in memory, the one place that holds it. One,
    /// the default, is a log whose every tournament was archived as it ended. A database
    /// keeps the value it first opened with.
    #[serde(default = "first_event")]
    pub tournaments_archived_from_seq: u64,
}

fn first_event() -> u64 {
    1
}

fn one_stripe() -> NonZeroU16 {
    NonZeroU16::MIN
}

impl Config {
    /// The SOS contract's defaults with the given owner.
    #[must_use]
    pub fn new(owner: Address) -> Config {
        Config {
            owner,
            seed: 0,
            wait_cancel_ms: 120_000,
            move_timeout_ms: 60_000,
            challenge_ttl_ms: 600_000,
            automatic_timeouts: false,
            payouts: PayoutRules::STANDARD,
            rematch_start: RematchStart::Random,
            max_stake: 1_000_000_000_000_000_000,
            idempotency_window_ms: 24 * 60 * 60 * 1000,
            finished_retention_ms: 15 * 60 * 1000,
            tournaments: TournamentRules::default(),
            match_id_stripes: one_stripe(),
            swept_by_clock_from_seq: first_event(),
            tournaments_archived_from_seq: first_event(),
        }
    }

    /// The stripe of match ids that `address` creates matches in: its first eight bytes,
    /// as a little-endian number, modulo [`match_id_stripes`](Config::match_id_stripes)
    /// (an address is a hash, so the stripes share addresses evenly).
    #[must_use]
    pub fn match_id_stripe(&self, address: Address) -> u16 {
        let bytes = address.as_bytes();
        let head = u64::from_le_bytes(bytes[..8].try_into().expect("eight bytes"));
        let stripes = u64::from(self.match_id_stripes.get());
        u16::try_from(head % stripes).expect("a stripe is below a u16 count")
    }
}
