// SPDX-License-Identifier: MIT OR Apache-2.0
pragma solidity 0.8.30;

/// @title CryptoSOS in Solidity: the reference the Stylus contract is compared with
/// @notice Written from the CryptoSOS specification (docs/origins.md) and the decisions in
/// contracts/README.md, not translated from the Rust: it keeps its own board (one byte per
/// square) and finds S-O-S itself. The differential test runs it in revm beside the Stylus
/// contract on thousands of random call sequences and requires the same outcome, return
/// data, events and balance changes for every call.
/// @dev Every state change precedes the transfers of a call (the only later write is the
/// record of a refused payout, after a call that changed nothing). Unlike a Stylus program,
/// which refuses every reentrant call, this contract has no reentrancy guard; reentrancy
/// cannot break its accounting.
contract CryptoSOS {
    event StartGame(address, address);
    event Move(uint8, uint8, address);
    event Win(address);

    error GameOver();
    error InvalidPosition();
    error NotYourTurn();
    error CellOccupied();
    error NotAPlayer();
    error AlreadyInGame(uint64 gameId);
    error SelfPlay();
    error WaitNotOver(uint64 secondsLeft);
    error NotWaiting();
    error DeadlineNotReached(uint64 secondsLeft);
    error NotLastMover();
    error NotInPlay();
    error OwnerOnly();
    error NothingToCollect();
    error WrongStake(uint256 required);
    error TransferFailed();
    error NothingToWithdraw();

    uint256 private constant STAKE = 1 ether;
    uint256 private constant WIN_PAYOUT = 1.8 ether;
    uint256 private constant TIE_REFUND = 0.9 ether;
    uint256 private constant TIMEOUT_PAYOUT = 1.9 ether;
    uint64 private constant WAIT_SECONDS = 2 minutes;
    uint64 private constant MOVE_SECONDS = 1 minutes;

    uint8 private constant EMPTY = 0;
    uint8 private constant S = 1;
    uint8 private constant O = 2;

    enum Status {
        None,
        Waiting,
        Playing,
        Over
    }

    struct Game {
        address first;
        address second;
        Status status;
        /// When the wait began, the game started or the last mark was placed.
        uint64 since;
        /// How many marks are on the board.
        uint8 marks;
        /// Squares 1-9 at indices 0-8: EMPTY, S or O.
        uint8[9] squares;
    }

    struct Record {
        uint32 wins;
        uint32 games;
    }

    address private immutable owner;
    uint64 private lastId;
    uint64 private waiting;
    /// Wei that belongs to players: stakes of open games and payouts kept for them.
    uint256 private held;
    mapping(uint64 => Game) private games;
    mapping(address => uint64) private gameOf;
    mapping(address => Record) private records;
    mapping(address => uint256) private owed;

    constructor() {
        owner = msg.sender;
    }

    function play() external payable {
        if (msg.value != STAKE) revert WrongStake(STAKE);
        uint64 mine = gameOf[msg.sender];
        if (mine != 0) {
            Status status = games[mine].status;
            if (status == Status.Waiting) revert SelfPlay();
            if (status == Status.Playing) revert AlreadyInGame(mine);
        }
        held += STAKE;
        if (waiting == 0) {
            uint64 id = ++lastId;
            waiting = id;
            Game storage created = games[id];
            created.first = msg.sender;
            created.status = Status.Waiting;
            created.since = uint64(block.timestamp);
            gameOf[msg.sender] = id;
            emit StartGame(msg.sender, address(0));
        } else {
            uint64 id = waiting;
            waiting = 0;
            Game storage joined = games[id];
            joined.second = msg.sender;
            joined.status = Status.Playing;
            joined.since = uint64(block.timestamp);
            gameOf[msg.sender] = id;
            emit StartGame(joined.first, msg.sender);
        }
    }

    function placeS(uint8 square) external {
        place(square, S);
    }

    function placeO(uint8 square) external {
        place(square, O);
    }

    function getGameState() external view returns (string memory) {
        bytes memory state = "---------";
        uint64 id = gameOf[msg.sender];
        if (id != 0) {
            uint8[9] storage squares = games[id].squares;
            for (uint256 i = 0; i < 9; i++) {
                if (squares[i] == S) state[i] = "S";
                else if (squares[i] == O) state[i] = "O";
            }
        }
        return string(state);
    }

    function cancel() external {
        uint64 id = gameOf[msg.sender];
        if (id == 0 || games[id].status != Status.Waiting) revert NotWaiting();
        uint64 deadline = games[id].since + WAIT_SECONDS;
        if (block.timestamp < deadline) revert WaitNotOver(deadline - uint64(block.timestamp));
        games[id].status = Status.Over;
        waiting = 0;
        held -= STAKE;
        pay(msg.sender, STAKE);
    }

    function ur2slow() external {
        (uint64 id, Game storage game) = gameInPlay();
        bool started = game.marks > 0;
        if (started && toMove(game) == msg.sender) revert NotLastMover();
        uint64 deadline = game.since + MOVE_SECONDS;
        if (block.timestamp < deadline) {
            revert DeadlineNotReached(deadline - uint64(block.timestamp));
        }
        close(id);
        if (started) {
            count(game, msg.sender);
            emit Win(msg.sender);
            pay(msg.sender, TIMEOUT_PAYOUT);
        } else {
            pay(msg.sender, STAKE);
            payOrKeep(opponentOf(game, msg.sender), STAKE);
        }
    }

    function collectProfit() external {
        if (msg.sender != owner) revert OwnerOnly();
        uint256 balance = address(this).balance;
        uint256 profit = balance > held ? balance - held : 0;
        if (profit == 0) revert NothingToCollect();
        pay(owner, profit);
    }

    function getPlayerStats(address player) external view returns (uint32 wins, uint32 games_) {
        Record storage record = records[player];
        return (record.wins, record.games);
    }

    function withdraw() external {
        uint256 amount = owed[msg.sender];
        if (amount == 0) revert NothingToWithdraw();
        owed[msg.sender] = 0;
        held -= amount;
        pay(msg.sender, amount);
    }

    function place(uint8 square, uint8 letter) private {
        (uint64 id, Game storage game) = gameInPlay();
        if (toMove(game) != msg.sender) revert NotYourTurn();
        if (square < 1 || square > 9) revert InvalidPosition();
        if (game.squares[square - 1] != EMPTY) revert CellOccupied();
        game.squares[square - 1] = letter;
        game.marks += 1;
        game.since = uint64(block.timestamp);
        emit Move(square, letter, msg.sender);
        if (spellsSos(game.squares)) {
            close(id);
            count(game, msg.sender);
            emit Win(msg.sender);
            pay(msg.sender, WIN_PAYOUT);
        } else if (game.marks == 9) {
            close(id);
            count(game, address(0));
            emit Win(address(0));
            pay(msg.sender, TIE_REFUND);
            payOrKeep(opponentOf(game, msg.sender), TIE_REFUND);
        }
    }

    /// The caller's game, which must be in play.
    function gameInPlay() private view returns (uint64 id, Game storage game) {
        id = gameOf[msg.sender];
        if (id == 0) revert NotAPlayer();
        game = games[id];
        if (game.status == Status.Waiting) revert NotInPlay();
        if (game.status == Status.Over) revert GameOver();
    }

    /// The first player moves when an even number of marks is on the board.
    function toMove(Game storage game) private view returns (address) {
        return game.marks % 2 == 0 ? game.first : game.second;
    }

    function opponentOf(Game storage game, address player) private view returns (address) {
        return player == game.first ? game.second : game.first;
    }

    /// Whether S-O-S reads along any row, column or diagonal (a line reads the same both
    /// ways, so one direction suffices).
    function spellsSos(uint8[9] storage b) private view returns (bool) {
        uint8[3][8] memory lines = [
            [0, 1, 2], [3, 4, 5], [6, 7, 8],
            [0, 3, 6], [1, 4, 7], [2, 5, 8],
            [0, 4, 8], [2, 4, 6]
        ];
        for (uint256 i = 0; i < 8; i++) {
            if (b[lines[i][0]] == S && b[lines[i][1]] == O && b[lines[i][2]] == S) {
                return true;
            }
        }
        return false;
    }

    function close(uint64 id) private {
        games[id].status = Status.Over;
        held -= 2 * STAKE;
    }

    /// A game played to its end counts for both players, and as a win for `winner`.
    function count(Game storage game, address winner) private {
        records[game.first].games += 1;
        records[game.second].games += 1;
        if (winner != address(0)) records[winner].wins += 1;
    }

    function pay(address to, uint256 amount) private {
        (bool ok, ) = to.call{value: amount}("");
        if (!ok) revert TransferFailed();
    }

    function payOrKeep(address to, uint256 amount) private {
        (bool ok, ) = to.call{value: amount}("");
        if (!ok) {
            owed[to] += amount;
            held += amount;
        }
    }
}
