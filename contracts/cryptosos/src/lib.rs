//! CryptoSOS, the on-chain SOS contract, as an Arbitrum Stylus contract, on the same rules crate as
//! Triad's server, so the chain and the server cannot disagree about a board.
//!
//! The interface is exactly CryptoSOS's (`ICryptoSOS.sol` beside this crate), plus one function,
//! `withdraw()`, for the rare payout that could not be pushed (see below):
//!
//! - `play()` pays exactly 1 ether. The first caller waits (`StartGame(p1, 0)`); the next
//!   caller joins and the game starts (`StartGame(p1, p2)`); `p1` moves first.
//! - `placeS(square)` / `placeO(square)`, squares 1-9, by the player to move.
//!   `Move(square, 1 for S or 2 for O, player)` after each; a line of S-O-S wins
//!   (`Win(winner)`, 1.8 ether to the winner); a full board is a tie (`Win(0)`, 0.9 ether
//!   to each). The rest stays in the reserve.
//! - `cancel()`: the waiting player, 2 minutes after `play()` with nobody joining, gets the
//!   1 ether back. It is not counted in the hall of fame.
//! - `ur2slow()`: the player who moved last, 1 minute after that move with no answer, wins
//!   1.9 ether (`Win(claimer)`); it counts as a game for both and a win for the claimer.
//!   If the first move never comes, either player may call it 1 minute after the start: the
//!   game is aborted, both get their 1 ether back, nobody's statistics change and no event
//!   is emitted (the server's engine does the same).
//! - `collectProfit()`: the owner (the deployer) takes the reserve: the balance less what
//!   is held for players.
//! - `getGameState()`: the caller's current (or last) board, CryptoSOS's 9-character string.
//! - `getPlayerStats(player)`: `(wins, games)`.
//!
//! Several games run at once ("MultiSOS"): one game at a time waits for an opponent, every
//! player has one game at a time, and each function finds the caller's own game, so the
//! interface needs no game ids. Anyone can see a player's board with an `eth_call` of
//! `getGameState()` sent "from" that player.
//!
//! Ether is pushed to the recipient at once. A payout to the caller that fails makes the
//! whole call revert (`TransferFailed`), so a caller can only hurt themselves. A payout to
//! the other player (their half of a tie, or their refund when the first move never came)
//! that fails is kept for them instead, and `withdraw()` pays it out: a player whose account
//! refuses ether cannot block their opponent's last move.
//!
//! Every function that takes no payment refuses ether (the SDK's router enforces it), and
//! nothing is ever paid to the zero address: payees are callers, their opponents, or the
//! owner.
// The SDK's macros expand to paths through `alloc`.
extern crate alloc;

use stylus_sdk::{
    alloy_primitives::{Address, U16, U256, U32, U64, U8},
    alloy_sol_types::{abi::token::WordToken, sol, SolEvent, TopicList},
    call::transfer::transfer_eth,
    prelude::*,
    storage::{
        StorageAddress, StorageMap, StorageU16, StorageU256, StorageU32, StorageU64, StorageU8,
    },
};
use triad_rules::{Game as _, Mark, MoveError, Outcome, Player, Sos};

/// The stake: exactly 1 ether.
pub const STAKE: U256 = U256::from_limbs([1_000_000_000_000_000_000, 0, 0, 0]);
/// The winner's payout: 1.8 ether.
pub const WIN_PAYOUT: U256 = U256::from_limbs([1_800_000_000_000_000_000, 0, 0, 0]);
/// Each player's refund after a tie: 0.9 ether.
pub const TIE_REFUND: U256 = U256::from_limbs([900_000_000_000_000_000, 0, 0, 0]);
/// The payout for a timeout claim: 1.9 ether.
pub const TIMEOUT_PAYOUT: U256 = U256::from_limbs([1_900_000_000_000_000_000, 0, 0, 0]);
/// How long a waiting player waits before `cancel()` refunds them: 2 minutes.
pub const WAIT_SECONDS: u64 = 120;
/// How long the player to move has before `ur2slow()`: 1 minute.
pub const MOVE_SECONDS: u64 = 60;

sol! {
    #![sol(all_derives)]

    /// A player paid: `(p1, 0)` while p1 waits, `(p1, p2)` when the game starts.
    event StartGame(address, address);
    /// A mark was placed: the square (1-9), 1 for S or 2 for O, and the player.
    event Move(uint8, uint8, address);
    /// The game ended: the winner, or the zero address after a tie.
    event Win(address);

    /// Code 0: the caller's game has ended.
    error GameOver();
    /// Code 1: the square is not 1-9.
    error InvalidPosition();
    /// Code 2: the opponent is to move.
    error NotYourTurn();
    /// Code 3: the square is taken.
    error CellOccupied();
    /// Code 101: the caller has never played.
    error NotAPlayer();
    /// Code 102: the caller is in a game already.
    error AlreadyInGame(uint64 gameId);
    /// Code 104: the caller is the player waiting for an opponent.
    error SelfPlay();
    /// Code 106: `cancel()` is allowed once nobody has joined for 2 minutes.
    error WaitNotOver(uint64 secondsLeft);
    /// Code 107: the caller is not waiting for an opponent.
    error NotWaiting();
    /// Code 110: the other player still has time.
    error DeadlineNotReached(uint64 secondsLeft);
    /// Code 111: only the player who moved last may claim.
    error NotLastMover();
    /// Code 112: the caller's game has not started (nobody has joined yet).
    error NotInPlay();
    /// Code 115: only the owner may collect the profit.
    error OwnerOnly();
    /// Code 121: the reserve is empty.
    error NothingToCollect();
    /// Code 200: `play()` takes exactly 1 ether.
    error WrongStake(uint256 required);
    /// Code 201: the caller's account refused the ether sent to it.
    error TransferFailed();
    /// Code 202: nothing is kept for the caller.
    error NothingToWithdraw();
}

/// Every way a call can fail.
#[derive(SolidityError, Debug)]
pub enum CryptoSosError {
    /// See [`GameOver`].
    GameOver(GameOver),
    /// See [`InvalidPosition`].
    InvalidPosition(InvalidPosition),
    /// See [`NotYourTurn`].
    NotYourTurn(NotYourTurn),
    /// See [`CellOccupied`].
    CellOccupied(CellOccupied),
    /// See [`NotAPlayer`].
    NotAPlayer(NotAPlayer),
    /// See [`AlreadyInGame`].
    AlreadyInGame(AlreadyInGame),
    /// See [`SelfPlay`].
    SelfPlay(SelfPlay),
    /// See [`WaitNotOver`].
    WaitNotOver(WaitNotOver),
    /// See [`NotWaiting`].
    NotWaiting(NotWaiting),
    /// See [`DeadlineNotReached`].
    DeadlineNotReached(DeadlineNotReached),
    /// See [`NotLastMover`].
    NotLastMover(NotLastMover),
    /// See [`NotInPlay`].
    NotInPlay(NotInPlay),
    /// See [`OwnerOnly`].
    OwnerOnly(OwnerOnly),
    /// See [`NothingToCollect`].
    NothingToCollect(NothingToCollect),
    /// See [`WrongStake`].
    WrongStake(WrongStake),
    /// See [`TransferFailed`].
    TransferFailed(TransferFailed),
    /// See [`NothingToWithdraw`].
    NothingToWithdraw(NothingToWithdraw),
}

type Result<T, E = CryptoSosError> = core::result::Result<T, E>;

/// A rules error for a move the contract checked. SOS's two marks belong to both players,
/// so only these four can happen.
fn move_error(error: MoveError) -> CryptoSosError {
    match error {
        MoveError::GameOver => GameOver {}.into(),
        MoveError::InvalidPosition => InvalidPosition {}.into(),
        MoveError::NotYourTurn => NotYourTurn {}.into(),
        MoveError::CellOccupied => CellOccupied {}.into(),
        _ => unreachable!("the contract places only S and O"),
    }
}

/// Where a game is in its life.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Status {
    /// `p1` waits for an opponent.
    Waiting = 1,
    /// Both players paid; moves are being made.
    Playing = 2,
    /// Won, tied, claimed, aborted or cancelled.
    Over = 3,
}

impl Status {
    fn from_stored(value: U8) -> Status {
        match value.saturating_to::<u8>() {
            1 => Status::Waiting,
            2 => Status::Playing,
            3 => Status::Over,
            _ => unreachable!("a stored game has a status"),
        }
    }

    fn stored(self) -> U8 {
        U8::from(self as u8)
    }
}

/// One game. The first field group shares one storage slot.
#[storage]
pub struct Game {
    /// The player who paid first; they move first.
    first: StorageAddress,
    /// The board, as triad-rules' position number (0 is the empty board).
    position: StorageU16,
    /// A [`Status`].
    status: StorageU8,
    /// When the wait began, the game started, or the last mark was placed (seconds).
    since: StorageU64,
    /// The player who joined (zero while waiting).
    second: StorageAddress,
}

/// A player's hall-of-fame entry.
#[storage]
pub struct Stats {
    wins: StorageU32,
    games: StorageU32,
}

/// The contract's storage.
#[storage]
#[entrypoint]
pub struct CryptoSos {
    /// Who deployed the contract; the only one who may collect the profit.
    owner: StorageAddress,
    /// The id of the last game created (ids start at 1).
    last_id: StorageU64,
    /// The game waiting for a second player, or 0.
    waiting: StorageU64,
    /// Wei that belongs to players: stakes of open games and payouts kept for them.
    held: StorageU256,
    /// Games by id.
    games: StorageMap<u64, Game>,
    /// Each player's current (or last) game.
    game_of: StorageMap<Address, StorageU64>,
    /// The hall of fame.
    stats: StorageMap<Address, Stats>,
    /// Payouts kept for players whose account refused them.
    owed: StorageMap<Address, StorageU256>,
}

/// A game in play, read from storage.
struct InPlay {
    id: u64,
    first: Address,
    second: Address,
    board: Sos,
    since: u64,
}

impl InPlay {
    fn seat(&self, player: Address) -> Player {
        if player == self.first {
            Player::First
        } else {
            Player::Second
        }
    }

    fn address(&self, seat: Player) -> Address {
        match seat {
            Player::First => self.first,
            Player::Second => self.second,
        }
    }

    fn opponent(&self, player: Address) -> Address {
        self.address(self.seat(player).other())
    }
}

fn board(position: U16) -> Sos {
    // Not `expect`, whose `Debug` formatting of the error would cost code size.
    Sos::from_position_number(u32::from(position.saturating_to::<u16>()))
        .unwrap_or_else(|_| unreachable!("a stored position is one the rules produced"))
}

/// Emits `event` as the SDK's `log` does, minus its `unwrap`, whose `Debug` formatting
/// costs kilobytes of code. Four topic slots always fit an event, so nothing can fail.
fn emit<E: SolEvent>(vm: &impl RawLogAccess, event: E) {
    let mut topics = [WordToken::default(); 4];
    let _ = event.encode_topics_raw(&mut topics);
    let count = E::TopicList::COUNT;
    let mut bytes = Vec::with_capacity(32 * count + 96);
    for topic in &topics[..count] {
        bytes.extend_from_slice(topic.as_slice());
    }
    event.encode_data_to(&mut bytes);
    vm.emit_log(&bytes, count);
}

#[public]
impl CryptoSos {
    /// Records the deployer as the owner. Stylus deploys through a factory contract, so
    /// the deployer is the transaction's origin.
    #[constructor]
    pub fn constructor(&mut self) {
        let deployer = self.vm().tx_origin();
        self.owner.set(deployer);
    }

    /// Pays the 1-ether stake and waits for an opponent, or joins the player waiting.
    #[payable]
    pub fn play(&mut self) -> Result<()> {
        let me = self.vm().msg_sender();
        let now = self.vm().block_timestamp();
        if self.vm().msg_value() != STAKE {
            return Err(WrongStake { required: STAKE }.into());
        }
        let mine = self.game_of.get(me).saturating_to::<u64>();
        if mine != 0 {
            match Status::from_stored(self.games.getter(mine).status.get()) {
                Status::Waiting => return Err(SelfPlay {}.into()),
                Status::Playing => return Err(AlreadyInGame { gameId: mine }.into()),
                Status::Over => {}
            }
        }
        let held = self.held.get();
        self.held.set(held + STAKE);
        let waiting = self.waiting.get().saturating_to::<u64>();
        if waiting == 0 {
            let id = self.last_id.get().saturating_to::<u64>() + 1;
            self.last_id.set(U64::from(id));
            self.waiting.set(U64::from(id));
            let mut game = self.games.setter(id);
            game.first.set(me);
            game.status.set(Status::Waiting.stored());
            game.since.set(U64::from(now));
            self.game_of.setter(me).set(U64::from(id));
            emit(
                self.vm(),
                StartGame {
                    _0: me,
                    _1: Address::ZERO,
                },
            );
        } else {
            self.waiting.set(U64::ZERO);
            let mut game = self.games.setter(waiting);
            game.second.set(me);
            game.status.set(Status::Playing.stored());
            game.since.set(U64::from(now));
            let first = game.first.get();
            self.game_of.setter(me).set(U64::from(waiting));
            emit(self.vm(), StartGame { _0: first, _1: me });
        }
        Ok(())
    }

    /// Places an S in `square` (1-9).
    #[selector(name = "placeS")]
    pub fn place_s(&mut self, square: u8) -> Result<()> {
        self.place(square, Mark::S)
    }

    /// Places an O in `square` (1-9).
    #[selector(name = "placeO")]
    pub fn place_o(&mut self, square: u8) -> Result<()> {
        self.place(square, Mark::O)
    }

    /// The caller's current (or last) board: 9 characters from `-`, `S`, `O`, square 1 first.
    #[selector(name = "getGameState")]
    pub fn get_game_state(&self) -> String {
        let me = self.vm().msg_sender();
        let id = self.game_of.get(me).saturating_to::<u64>();
        let position = if id == 0 {
            U16::ZERO
        } else {
            self.games.getter(id).position.get()
        };
        board(position).board().chars().iter().collect()
    }

    /// The waiting player, 2 minutes after `play()` with nobody joining, takes back the
    /// stake.
    pub fn cancel(&mut self) -> Result<()> {
        let me = self.vm().msg_sender();
        let now = self.vm().block_timestamp();
        let id = self.game_of.get(me).saturating_to::<u64>();
        if id == 0 || Status::from_stored(self.games.getter(id).status.get()) != Status::Waiting {
            return Err(NotWaiting {}.into());
        }
        let deadline = self.games.getter(id).since.get().saturating_to::<u64>() + WAIT_SECONDS;
        if now < deadline {
            return Err(WaitNotOver {
                secondsLeft: deadline - now,
            }
            .into());
        }
        self.games.setter(id).status.set(Status::Over.stored());
        self.waiting.set(U64::ZERO);
        let held = self.held.get();
        self.held.set(held - STAKE);
        self.pay(me, STAKE)
    }

    /// Claims the game when the opponent has not answered the caller's move for a minute
    /// (1.9 ether), or aborts it with full refunds when the first move has not come a
    /// minute after the start. (The name is spelled out: the SDK would make it `ur2Slow`.)
    #[selector(name = "ur2slow")]
    pub fn ur2slow(&mut self) -> Result<()> {
        let me = self.vm().msg_sender();
        let now = self.vm().block_timestamp();
        let game = self.in_play(me)?;
        let deadline = game.since + MOVE_SECONDS;
        let first_move_made = !game.board.board().is_empty();
        if first_move_made && game.board.turn() == game.seat(me) {
            return Err(NotLastMover {}.into());
        }
        if now < deadline {
            return Err(DeadlineNotReached {
                secondsLeft: deadline - now,
            }
            .into());
        }
        self.close(&game);
        if first_move_made {
            self.count(&game, Some(me));
            emit(self.vm(), Win { _0: me });
            self.pay(me, TIMEOUT_PAYOUT)
        } else {
            self.pay(me, STAKE)?;
            self.pay_or_keep(game.opponent(me), STAKE);
            Ok(())
        }
    }

    /// The owner takes the reserve: everything not held for players.
    #[selector(name = "collectProfit")]
    pub fn collect_profit(&mut self) -> Result<()> {
        let me = self.vm().msg_sender();
        if me != self.owner.get() {
            return Err(OwnerOnly {}.into());
        }
        let contract = self.vm().contract_address();
        let profit = self.vm().balance(contract).saturating_sub(self.held.get());
        if profit.is_zero() {
            return Err(NothingToCollect {}.into());
        }
        self.pay(me, profit)
    }

    /// `(wins, games)` of `player`: games won, tied or claimed, not cancelled or aborted.
    #[selector(name = "getPlayerStats")]
    pub fn get_player_stats(&self, player: Address) -> (u32, u32) {
        let stats = self.stats.getter(player);
        (
            stats.wins.get().saturating_to::<u32>(),
            stats.games.get().saturating_to::<u32>(),
        )
    }

    /// Pays the caller what was kept for them after their account refused a payout.
    pub fn withdraw(&mut self) -> Result<()> {
        let me = self.vm().msg_sender();
        let amount = self.owed.get(me);
        if amount.is_zero() {
            return Err(NothingToWithdraw {}.into());
        }
        self.owed.setter(me).set(U256::ZERO);
        let held = self.held.get();
        self.held.set(held - amount);
        self.pay(me, amount)
    }
}

impl CryptoSos {
    /// The caller's game, if it is being played.
    fn in_play(&self, me: Address) -> Result<InPlay> {
        let id = self.game_of.get(me).saturating_to::<u64>();
        if id == 0 {
            return Err(NotAPlayer {}.into());
        }
        let game = self.games.getter(id);
        match Status::from_stored(game.status.get()) {
            Status::Waiting => Err(NotInPlay {}.into()),
            Status::Over => Err(GameOver {}.into()),
            Status::Playing => Ok(InPlay {
                id,
                first: game.first.get(),
                second: game.second.get(),
                board: board(game.position.get()),
                since: game.since.get().saturating_to::<u64>(),
            }),
        }
    }

    fn place(&mut self, square: u8, mark: Mark) -> Result<()> {
        let me = self.vm().msg_sender();
        let now = self.vm().block_timestamp();
        let game = self.in_play(me)?;
        // Squares 1-9 are cells 0-8; 0 wraps to 255, which the rules refuse as they do 10.
        let (next, _) = game
            .board
            .play_as(game.seat(me), square.wrapping_sub(1), mark)
            .map_err(move_error)?;
        let mut stored = self.games.setter(game.id);
        stored.position.set(U16::from(next.position_number()));
        stored.since.set(U64::from(now));
        let code = if mark == Mark::S { 1 } else { 2 };
        emit(
            self.vm(),
            Move {
                _0: square,
                _1: code,
                _2: me,
            },
        );
        match next.outcome() {
            None => Ok(()),
            Some(Outcome::Win { winner, .. }) => {
                let winner = game.address(winner);
                self.close(&game);
                self.count(&game, Some(winner));
                emit(self.vm(), Win { _0: winner });
                self.pay(winner, WIN_PAYOUT)
            }
            Some(Outcome::Draw) => {
                self.close(&game);
                self.count(&game, None);
                emit(self.vm(), Win { _0: Address::ZERO });
                self.pay(me, TIE_REFUND)?;
                self.pay_or_keep(game.opponent(me), TIE_REFUND);
                Ok(())
            }
        }
    }

    /// Ends a game in play: its pot is no longer held for it.
    fn close(&mut self, game: &InPlay) {
        self.games.setter(game.id).status.set(Status::Over.stored());
        let held = self.held.get();
        self.held.set(held - STAKE - STAKE);
    }

    /// Counts a finished game for both players, and a win for `winner`.
    fn count(&mut self, game: &InPlay, winner: Option<Address>) {
        for player in [game.first, game.second] {
            let mut stats = self.stats.setter(player);
            let games = stats.games.get();
            stats.games.set(games.saturating_add(U32::from(1)));
            if winner == Some(player) {
                let wins = stats.wins.get();
                stats.wins.set(wins.saturating_add(U32::from(1)));
            }
        }
    }

    /// Sends ether to the caller; if their account refuses it, the whole call reverts.
    fn pay(&mut self, to: Address, amount: U256) -> Result<()> {
        transfer_eth(self.vm(), to, amount).map_err(|_| TransferFailed {}.into())
    }

    /// Sends ether to someone other than the caller; if their account refuses it, it is
    /// kept for them (`withdraw()`), so they cannot block the caller.
    fn pay_or_keep(&mut self, to: Address, amount: U256) {
        if transfer_eth(self.vm(), to, amount).is_err() {
            let owed = self.owed.get(to);
            self.owed.setter(to).set(owed + amount);
            let held = self.held.get();
            self.held.set(held + amount);
        }
    }
}
