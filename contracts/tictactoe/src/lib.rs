//! The Sui on-chain tic-tac-toe contract's game, on the EVM as an Arbitrum Stylus contract, with
//! the rules of Triad's rules crate and its flaws fixed. The interface is `ITicTacToe.sol` beside
//! this crate.
//!
//! - `createBoard(opponent)` invites `opponent` to a board; the creator plays X and moves
//!   first. The opponent is not locked in by an invitation: they may be busy, and they may
//!   ignore it.
//! - `acceptBoard(id)` by the invited opponent starts the game (they must be free);
//!   `declineBoard(id)` refuses it.
//! - `playGame(position)` places the caller's mark in cell 0-8 of their board. Three in a
//!   row wins; a full board is a draw. Either way the game ends and both players are free.
//! - `resign()` gives up: during play the opponent wins; before the opponent accepted, it
//!   withdraws the invitation.
//! - `boardOf(player)` and `getBoard(id)` look boards up.
//!
//! One active board per address: an address that created an invitation, or plays a game,
//! cannot create or accept another until it ends.
//!
//! Errors 0-3 are the Sui contract's abort codes as custom errors (`GameOver`, `InvalidPosition`,
//! `NotYourTurn`, `CellOccupied`); the rules crate decides them, in its documented order
//! (the turn is checked before the cell, unlike the Sui contract). Every other mistake has its own
//! custom error, numbered like the server's errors. No function accepts ether.
// The SDK's macros expand to paths through `alloc`.
extern crate alloc;

use stylus_sdk::{
    alloy_primitives::{Address, U16, U64, U8},
    alloy_sol_types::{abi::token::WordToken, sol, SolEvent, TopicList},
    prelude::*,
    storage::{StorageAddress, StorageMap, StorageU16, StorageU64, StorageU8},
};
use triad_rules::{Game as _, Mark, MoveError, Outcome, Player, TicTacToe};

sol! {
    #![sol(all_derives)]

    /// A board as `getBoard` and `boardOf` return it.
    #[derive(AbiType)]
    struct Board {
        /// The board's id (0: no board).
        uint64 id;
        /// Who created it: X, moves first.
        address creator;
        /// Who was invited: O.
        address opponent;
        /// 0 none, 1 invited, 2 playing, 3 won, 4 drawn, 5 resigned, 6 withdrawn, 7 declined.
        uint8 status;
        /// The cells 0-8 as 9 characters from `-`, `X`, `O`.
        string cells;
        /// Whose turn it is while playing, else the zero address.
        address nextPlayer;
        /// The winner (won or resigned), else the zero address.
        address winner;
    }

    /// `creator` invited `opponent` to board `boardId`.
    event BoardCreated(uint64 indexed boardId, address indexed creator, address indexed opponent);
    /// The opponent accepted: the game starts, the creator to move.
    event BoardAccepted(uint64 indexed boardId);
    /// `player` placed their mark in cell `position` (0-8).
    event Played(uint64 indexed boardId, address indexed player, uint8 position);
    /// The board closed with `status` (3-7); `winner` is zero unless won or resigned.
    event BoardClosed(uint64 indexed boardId, address winner, uint8 status);

    /// Code 0: the caller's board has ended.
    error GameOver();
    /// Code 1: the position is not 0-8.
    error InvalidPosition();
    /// Code 2: the opponent is to move.
    error NotYourTurn();
    /// Code 3: the cell is taken.
    error CellOccupied();
    /// Code 100: no board has that id.
    error UnknownBoard();
    /// Code 101: the caller has no board.
    error NotAPlayer();
    /// Code 102: the caller already has an active board.
    error AlreadyInGame(uint64 boardId);
    /// Code 104: a player cannot invite themselves.
    error SelfPlay();
    /// Code 107: the board is no longer an open invitation.
    error NotWaiting();
    /// Code 108: the invitation is addressed to someone else.
    error NotInvited();
    /// Code 112: the opponent has not accepted yet.
    error NotInPlay();
    /// Code 125: the zero address is nobody.
    error ZeroAddress();
}

/// Every way a call can fail.
#[derive(SolidityError, Debug)]
pub enum TicTacToeError {
    /// See [`GameOver`].
    GameOver(GameOver),
    /// See [`InvalidPosition`].
    InvalidPosition(InvalidPosition),
    /// See [`NotYourTurn`].
    NotYourTurn(NotYourTurn),
    /// See [`CellOccupied`].
    CellOccupied(CellOccupied),
    /// See [`UnknownBoard`].
    UnknownBoard(UnknownBoard),
    /// See [`NotAPlayer`].
    NotAPlayer(NotAPlayer),
    /// See [`AlreadyInGame`].
    AlreadyInGame(AlreadyInGame),
    /// See [`SelfPlay`].
    SelfPlay(SelfPlay),
    /// See [`NotWaiting`].
    NotWaiting(NotWaiting),
    /// See [`NotInvited`].
    NotInvited(NotInvited),
    /// See [`NotInPlay`].
    NotInPlay(NotInPlay),
    /// See [`ZeroAddress`].
    ZeroAddress(ZeroAddress),
}

type Result<T, E = TicTacToeError> = core::result::Result<T, E>;

/// A rules error for a move the contract checked. The contract places the mover's own
/// mark, so only these four can happen.
fn move_error(error: MoveError) -> TicTacToeError {
    match error {
        MoveError::GameOver => GameOver {}.into(),
        MoveError::InvalidPosition => InvalidPosition {}.into(),
        MoveError::NotYourTurn => NotYourTurn {}.into(),
        MoveError::CellOccupied => CellOccupied {}.into(),
        _ => unreachable!("the contract places the mover's own mark"),
    }
}

/// Where a board is in its life; the numbers are the ABI's `status`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Status {
    /// No such board.
    None = 0,
    /// The creator invited the opponent, who has not answered.
    Invited = 1,
    /// The opponent accepted; moves are being made.
    Playing = 2,
    /// Someone completed a line.
    Won = 3,
    /// The board filled with no line.
    Drawn = 4,
    /// A player gave up; the other won.
    Resigned = 5,
    /// The creator withdrew the invitation.
    Withdrawn = 6,
    /// The opponent declined the invitation.
    Declined = 7,
}

impl Status {
    fn from_stored(value: U8) -> Status {
        match value.saturating_to::<u8>() {
            0 => Status::None,
            1 => Status::Invited,
            2 => Status::Playing,
            3 => Status::Won,
            4 => Status::Drawn,
            5 => Status::Resigned,
            6 => Status::Withdrawn,
            7 => Status::Declined,
            _ => unreachable!("a stored board has a status"),
        }
    }

    fn stored(self) -> U8 {
        U8::from(self as u8)
    }

    /// Whether the board binds its creator (and, once accepted, its opponent).
    fn is_active(self) -> bool {
        matches!(self, Status::Invited | Status::Playing)
    }
}

/// One board. The first three fields share a storage slot.
#[storage]
pub struct StoredBoard {
    /// X; moves first.
    creator: StorageAddress,
    /// A [`Status`].
    status: StorageU8,
    /// The cells as triad-rules' position number (0 is the empty board).
    position: StorageU16,
    /// O.
    opponent: StorageAddress,
    /// Who won (won or resigned).
    winner: StorageAddress,
}

/// The contract's storage.
#[storage]
#[entrypoint]
pub struct TicTacToeContract {
    /// The id of the last board created (ids start at 1).
    last_id: StorageU64,
    /// Boards by id.
    boards: StorageMap<u64, StoredBoard>,
    /// Each address's current (or last) board: as creator from `createBoard`, as opponent
    /// from `acceptBoard`.
    board_of: StorageMap<Address, StorageU64>,
}

fn cells(position: U16) -> TicTacToe {
    // Not `expect`, whose `Debug` formatting of the error would cost code size.
    TicTacToe::from_position_number(u32::from(position.saturating_to::<u16>()))
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
impl TicTacToeContract {
    /// Invites `opponent` to a new board, which binds the caller until it ends. Returns its
    /// id.
    #[selector(name = "createBoard")]
    pub fn create_board(&mut self, opponent: Address) -> Result<u64> {
        let me = self.vm().msg_sender();
        if opponent.is_zero() {
            return Err(ZeroAddress {}.into());
        }
        if opponent == me {
            return Err(SelfPlay {}.into());
        }
        self.ensure_free(me)?;
        let id = self.last_id.get().saturating_to::<u64>() + 1;
        self.last_id.set(U64::from(id));
        let mut board = self.boards.setter(id);
        board.creator.set(me);
        board.opponent.set(opponent);
        board.status.set(Status::Invited.stored());
        self.board_of.setter(me).set(U64::from(id));
        emit(
            self.vm(),
            BoardCreated {
                boardId: id,
                creator: me,
                opponent,
            },
        );
        Ok(id)
    }

    /// The invited opponent accepts board `boardId`: the game starts.
    #[selector(name = "acceptBoard")]
    pub fn accept_board(&mut self, board_id: u64) -> Result<()> {
        let me = self.vm().msg_sender();
        self.open_invitation(board_id, me)?;
        self.ensure_free(me)?;
        self.boards
            .setter(board_id)
            .status
            .set(Status::Playing.stored());
        self.board_of.setter(me).set(U64::from(board_id));
        emit(self.vm(), BoardAccepted { boardId: board_id });
        Ok(())
    }

    /// The invited opponent declines board `boardId`; its creator is free again.
    #[selector(name = "declineBoard")]
    pub fn decline_board(&mut self, board_id: u64) -> Result<()> {
        let me = self.vm().msg_sender();
        self.open_invitation(board_id, me)?;
        self.close(board_id, Address::ZERO, Status::Declined);
        Ok(())
    }

    /// Places the caller's mark in cell `position` (0-8) of their board.
    #[selector(name = "playGame")]
    pub fn play_game(&mut self, position: u8) -> Result<()> {
        let me = self.vm().msg_sender();
        let id = self.current(me)?;
        let board = self.boards.getter(id);
        let seat = if board.creator.get() == me {
            Player::First
        } else {
            Player::Second
        };
        let mark = if seat == Player::First {
            Mark::X
        } else {
            Mark::O
        };
        let (next, _) = cells(board.position.get())
            .play_as(seat, position, mark)
            .map_err(move_error)?;
        self.boards
            .setter(id)
            .position
            .set(U16::from(next.position_number()));
        emit(
            self.vm(),
            Played {
                boardId: id,
                player: me,
                position,
            },
        );
        match next.outcome() {
            None => {}
            Some(Outcome::Win { .. }) => self.close(id, me, Status::Won),
            Some(Outcome::Draw) => self.close(id, Address::ZERO, Status::Drawn),
        }
        Ok(())
    }

    /// Gives up the caller's board: the opponent wins a game in play; an invitation nobody
    /// accepted is withdrawn.
    pub fn resign(&mut self) -> Result<()> {
        let me = self.vm().msg_sender();
        let id = self.board_of.get(me).saturating_to::<u64>();
        if id == 0 {
            return Err(NotAPlayer {}.into());
        }
        let board = self.boards.getter(id);
        match Status::from_stored(board.status.get()) {
            Status::Invited => self.close(id, Address::ZERO, Status::Withdrawn),
            Status::Playing => {
                let (creator, opponent) = (board.creator.get(), board.opponent.get());
                let winner = if me == creator { opponent } else { creator };
                self.close(id, winner, Status::Resigned);
            }
            _ => return Err(GameOver {}.into()),
        }
        Ok(())
    }

    /// The current (or last) board of `player`; a board with id 0 if they never had one.
    #[selector(name = "boardOf")]
    pub fn board_of(&self, player: Address) -> Board {
        let id = self.board_of.get(player).saturating_to::<u64>();
        if id == 0 {
            return Board {
                id: 0,
                creator: Address::ZERO,
                opponent: Address::ZERO,
                status: Status::None as u8,
                cells: String::from("---------"),
                nextPlayer: Address::ZERO,
                winner: Address::ZERO,
            };
        }
        self.view(id)
    }

    /// Board `boardId`.
    #[selector(name = "getBoard")]
    pub fn get_board(&self, board_id: u64) -> Result<Board> {
        if board_id == 0 || board_id > self.last_id.get().saturating_to::<u64>() {
            return Err(UnknownBoard {}.into());
        }
        Ok(self.view(board_id))
    }
}

impl TicTacToeContract {
    /// Refuses a caller whose board is still active.
    fn ensure_free(&self, player: Address) -> Result<()> {
        let id = self.board_of.get(player).saturating_to::<u64>();
        if id != 0 && Status::from_stored(self.boards.getter(id).status.get()).is_active() {
            return Err(AlreadyInGame { boardId: id }.into());
        }
        Ok(())
    }

    /// Checks that board `id` is an open invitation to `me`.
    fn open_invitation(&self, id: u64, me: Address) -> Result<()> {
        let board = self.boards.getter(id);
        let status = Status::from_stored(board.status.get());
        if status == Status::None {
            return Err(UnknownBoard {}.into());
        }
        if board.opponent.get() != me {
            return Err(NotInvited {}.into());
        }
        if status != Status::Invited {
            return Err(NotWaiting {}.into());
        }
        Ok(())
    }

    /// The caller's board, if it is being played.
    fn current(&self, me: Address) -> Result<u64> {
        let id = self.board_of.get(me).saturating_to::<u64>();
        if id == 0 {
            return Err(NotAPlayer {}.into());
        }
        match Status::from_stored(self.boards.getter(id).status.get()) {
            Status::Invited => Err(NotInPlay {}.into()),
            Status::Playing => Ok(id),
            _ => Err(GameOver {}.into()),
        }
    }

    /// Ends board `id`; both players are free again.
    fn close(&mut self, id: u64, winner: Address, status: Status) {
        let mut board = self.boards.setter(id);
        board.status.set(status.stored());
        board.winner.set(winner);
        emit(
            self.vm(),
            BoardClosed {
                boardId: id,
                winner,
                status: status as u8,
            },
        );
    }

    fn view(&self, id: u64) -> Board {
        let board = self.boards.getter(id);
        let status = Status::from_stored(board.status.get());
        let game = cells(board.position.get());
        let (creator, opponent) = (board.creator.get(), board.opponent.get());
        let next_player = match (status, game.turn()) {
            (Status::Playing, Player::First) => creator,
            (Status::Playing, Player::Second) => opponent,
            _ => Address::ZERO,
        };
        Board {
            id,
            creator,
            opponent,
            status: status as u8,
            cells: game.board().chars().iter().collect(),
            nextPlayer: next_player,
            winner: board.winner.get(),
        }
    }
}
