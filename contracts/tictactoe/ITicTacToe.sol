// SPDX-License-Identifier: MIT OR Apache-2.0
pragma solidity ^0.8.23;

/// @title Tic-tac-toe (the Sui on-chain contract's game), with consent, draws and resignation
/// @notice Cells are numbered 0-8, row by row from the top left. The creator of a board
/// plays X and moves first; the invited opponent plays O once they accept. Every address
/// has at most one active board (an open invitation it created, or a game in play); a
/// win, a draw, a resignation, a withdrawal or a refusal frees both players.
/// @dev The contract is Triad's Stylus contract `contracts/tictactoe`. Error codes 0-3 are
/// the Sui contract's abort codes; the others are Triad's stable error codes.
interface ITicTacToe {
    /// @notice A board as getBoard and boardOf return it.
    struct Board {
        /// The board's id (0: no board).
        uint64 id;
        /// Who created it: X, moves first.
        address creator;
        /// Who was invited: O.
        address opponent;
        /// 0 none, 1 invited, 2 playing, 3 won, 4 drawn, 5 resigned, 6 withdrawn, 7 declined.
        uint8 status;
        /// The cells 0-8 as 9 characters from "-", "X", "O".
        string cells;
        /// Whose turn it is while playing, else the zero address.
        address nextPlayer;
        /// The winner (won or resigned), else the zero address.
        address winner;
    }

    /// @notice creator invited opponent to board boardId.
    event BoardCreated(uint64 indexed boardId, address indexed creator, address indexed opponent);
    /// @notice The opponent accepted: the game starts, the creator to move.
    event BoardAccepted(uint64 indexed boardId);
    /// @notice player placed their mark in cell position (0-8).
    event Played(uint64 indexed boardId, address indexed player, uint8 position);
    /// @notice The board closed with status (3-7); winner is zero unless won or resigned.
    event BoardClosed(uint64 indexed boardId, address winner, uint8 status);

    /// @notice Code 0: the caller's board has ended.
    error GameOver();
    /// @notice Code 1: the position is not 0-8.
    error InvalidPosition();
    /// @notice Code 2: the opponent is to move.
    error NotYourTurn();
    /// @notice Code 3: the cell is taken.
    error CellOccupied();
    /// @notice Code 100: no board has that id.
    error UnknownBoard();
    /// @notice Code 101: the caller has no board.
    error NotAPlayer();
    /// @notice Code 102: the caller already has an active board.
    error AlreadyInGame(uint64 boardId);
    /// @notice Code 104: a player cannot invite themselves.
    error SelfPlay();
    /// @notice Code 107: the board is no longer an open invitation.
    error NotWaiting();
    /// @notice Code 108: the invitation is addressed to someone else.
    error NotInvited();
    /// @notice Code 112: the opponent has not accepted yet.
    error NotInPlay();
    /// @notice Code 125: the zero address is nobody.
    error ZeroAddress();

    /// @notice Invites opponent to a new board, which binds the caller until it ends.
    /// @return The new board's id.
    function createBoard(address opponent) external returns (uint64);

    /// @notice The invited opponent accepts board boardId: the game starts.
    function acceptBoard(uint64 boardId) external;

    /// @notice The invited opponent declines board boardId; its creator is free again.
    function declineBoard(uint64 boardId) external;

    /// @notice Places the caller's mark in cell position (0-8) of their board.
    function playGame(uint8 position) external;

    /// @notice Gives up the caller's board: the opponent wins a game in play; an
    /// invitation nobody accepted is withdrawn.
    function resign() external;

    /// @notice The current (or last) board of player; a board with id 0 if they never had one.
    function boardOf(address player) external view returns (Board memory);

    /// @notice Board boardId (UnknownBoard if there is none).
    function getBoard(uint64 boardId) external view returns (Board memory);
}
