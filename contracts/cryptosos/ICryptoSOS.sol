// SPDX-License-Identifier: MIT OR Apache-2.0
pragma solidity ^0.8.23;

/// @title CryptoSOS, several games at once
/// @notice SOS on a 3x3 board for a 1-ether stake. The first player to call play() waits;
/// the next one joins and the game starts, the first player to move. Each function acts
/// on the caller's own game. Squares are numbered 1-9, row by row from the top left.
/// Payouts: the winner 1.8 ether; after a tie 0.9 ether each; a timeout claim 1.9 ether;
/// a cancelled wait, or a game whose first move never came, refunds 1 ether each. The
/// rest stays in the reserve, which only the owner (the deployer) collects.
/// @dev The contract is Triad's Stylus contract `contracts/cryptosos`. Error codes are
/// Triad's stable error codes: 0-3 are the Sui tic-tac-toe contract's move errors, 100+
/// match the server's engine, 200+ exist only on chain.
interface ICryptoSOS {
    /// @notice A player paid: (p1, 0) while p1 waits, (p1, p2) when the game starts.
    event StartGame(address, address);
    /// @notice A mark was placed: the square (1-9), 1 for S or 2 for O, and the player.
    event Move(uint8, uint8, address);
    /// @notice The game ended: the winner, or the zero address after a tie. Not emitted
    /// when a wait is cancelled or a game without moves is aborted.
    event Win(address);

    /// @notice Code 0: the caller's game has ended.
    error GameOver();
    /// @notice Code 1: the square is not 1-9.
    error InvalidPosition();
    /// @notice Code 2: the opponent is to move.
    error NotYourTurn();
    /// @notice Code 3: the square is taken.
    error CellOccupied();
    /// @notice Code 101: the caller has never played.
    error NotAPlayer();
    /// @notice Code 102: the caller is in a game already.
    error AlreadyInGame(uint64 gameId);
    /// @notice Code 104: the caller is the player waiting for an opponent.
    error SelfPlay();
    /// @notice Code 106: cancel() is allowed once nobody has joined for 2 minutes.
    error WaitNotOver(uint64 secondsLeft);
    /// @notice Code 107: the caller is not waiting for an opponent.
    error NotWaiting();
    /// @notice Code 110: the other player still has time.
    error DeadlineNotReached(uint64 secondsLeft);
    /// @notice Code 111: only the player who moved last may claim.
    error NotLastMover();
    /// @notice Code 112: the caller's game has not started (nobody has joined yet).
    error NotInPlay();
    /// @notice Code 115: only the owner may collect the profit.
    error OwnerOnly();
    /// @notice Code 121: the reserve is empty.
    error NothingToCollect();
    /// @notice Code 200: play() takes exactly 1 ether.
    error WrongStake(uint256 required);
    /// @notice Code 201: the caller's account refused the ether sent to it.
    error TransferFailed();
    /// @notice Code 202: nothing is kept for the caller.
    error NothingToWithdraw();

    /// @notice Pays the 1-ether stake and waits for an opponent, or joins the player waiting.
    function play() external payable;

    /// @notice Places an S in square 1-9 of the caller's game.
    function placeS(uint8 square) external;

    /// @notice Places an O in square 1-9 of the caller's game.
    function placeO(uint8 square) external;

    /// @notice The caller's current (or last) board: 9 characters from "-", "S", "O",
    /// square 1 first ("---------" if the caller never played). To watch another player's
    /// board, eth_call this from their address.
    function getGameState() external view returns (string memory);

    /// @notice The waiting player, 2 minutes after play() with nobody joining, takes the
    /// stake back. Not counted in the hall of fame.
    function cancel() external;

    /// @notice The player who moved last, a minute after that move with no answer, wins 1.9
    /// ether. If the first move never came, either player may call it a minute after the
    /// start: the game is aborted and both stakes are refunded, uncounted.
    function ur2slow() external;

    /// @notice The owner takes the reserve: the balance less what is held for players.
    function collectProfit() external;

    /// @notice The hall of fame: games won, and games played to an end (won, tied or
    /// claimed; not cancelled or aborted).
    function getPlayerStats(address player) external view returns (uint32 wins, uint32 games);

    /// @notice Pays the caller what was kept for them: a payout to a player other than the
    /// caller (a tie's refund, an abort's refund) that their account refused.
    function withdraw() external;
}
