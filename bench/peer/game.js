'use strict';
// The tic-tac-toe game of boardgame.io's tutorial (https://boardgame.io/documentation/#/tutorial),
// for the 0.50 API, as the peer that Triad's benchmark measures itself against serves it.
// The one addition is its `name`, so that the Lobby routes and the socket.io namespace are
// "tic-tac-toe" (the tutorial's game is served as "default").

const { INVALID_MOVE } = require('boardgame.io/core');

// The eight lines of three cells: three rows, three columns, two diagonals.
const LINES = [
  [0, 1, 2], [3, 4, 5], [6, 7, 8],
  [0, 3, 6], [1, 4, 7], [2, 5, 8],
  [0, 4, 8], [2, 4, 6],
];

/** Whether one player holds a whole line. `cells` holds a player id ("0", "1") or null. */
function isVictory(cells) {
  return LINES.some(([a, b, c]) => cells[a] !== null && cells[a] === cells[b] && cells[a] === cells[c]);
}

/** Whether every cell is taken. */
function isDraw(cells) {
  return cells.every((cell) => cell !== null);
}

const TicTacToe = {
  name: 'tic-tac-toe',
  setup: () => ({ cells: Array(9).fill(null) }),
  turn: { minMoves: 1, maxMoves: 1 },
  moves: {
    clickCell: ({ G, playerID }, id) => {
      if (G.cells[id] !== null) return INVALID_MOVE;
      G.cells[id] = playerID;
    },
  },
  endIf: ({ G, ctx }) => {
    if (isVictory(G.cells)) return { winner: ctx.currentPlayer };
    if (isDraw(G.cells)) return { draw: true };
  },
};

module.exports = { TicTacToe, isVictory, isDraw };
