// @ts-check
/**
 * Play on this device, without logging in: against the computer (perfect, casual or
 * random; as X or O; tic-tac-toe or SOS), or two people taking turns (as in the HTML5 canvas game).
 *
 * The settings live in the URL, and the HTML5 canvas game's URLs keep working: `/?player=human` is two
 * people, `/?player=random` the random computer; `player=casual|perfect`, `game=sos` and
 * `as=O` (or `as=second`) choose the rest. The default is the canvas game's: you are X against the
 * perfect computer.
 *
 * The game in progress is kept in this browser (`localStorage`), so a reload or a visit to
 * another page does not lose it: the page comes back to it when its address names the same
 * settings, or names none. A change of setting in the middle of a game asks first.
 * @module
 */

import { ApiError } from '../api.js';
import { BoardView } from '../board.js';
import { computerMove } from '../computer.js';
import { announce, h, letterForKey, letterPicker, pageKeys, replace, segmented } from '../dom.js';
import { EMPTY_BOARD, marksFor, outcomeOf, ownersOf, play, turnOf } from '../rules.js';

/**
 * @typedef {import('../rules.js').GameKind} GameKind
 * @typedef {import('../rules.js').Mark} Mark
 * @typedef {'perfect' | 'casual' | 'random' | 'human'} Opponent
 * @typedef {{ game: GameKind, opponent: Opponent, side: 0 | 1 }} Settings
 */

/** Scores for this visit, by game and opponent. @type {Map<string, { p0: number, p1: number, draws: number }>} */
const scores = new Map();

/** @param {URLSearchParams} query @returns {Settings} */
export function settingsFromQuery(query) {
  const player = query.get('player');
  /** @type {Opponent} */
  const opponent = player === 'human' || player === 'random' || player === 'casual' ? player : 'perfect';
  /** @type {GameKind} */
  const game = query.get('game') === 'sos' ? 'sos' : 'tic-tac-toe';
  const as = (query.get('as') ?? '').toLowerCase();
  const side = as === 'o' || as === 'second' || as === '2' ? 1 : 0;
  return { game, opponent, side };
}

/** Where the game in progress is kept. */
const SAVED_GAME = 'triad.local-game';

/**
 * @typedef {{ settings: Settings, moves: { cell: number, mark: Mark }[] }} SavedGame
 */

/** The game kept in this browser, if any and readable. @returns {SavedGame | null} */
function savedGame() {
  try {
    const saved = JSON.parse(localStorage.getItem(SAVED_GAME) ?? 'null');
    if (!saved || typeof saved !== 'object' || !Array.isArray(saved.moves)) return null;
    const settings = settingsFromQuery(new URLSearchParams(queryOf(saved.settings ?? {})));
    return { settings, moves: saved.moves };
  } catch {
    return null;
  }
}

/** @param {SavedGame} game */
function saveGame(game) {
  try {
    localStorage.setItem(SAVED_GAME, JSON.stringify(game));
  } catch {
    // Storage full or refused (a private window): the game simply is not kept.
  }
}

/** @param {Settings} s */
function queryOf(s) {
  const q = new URLSearchParams();
  if (s.opponent !== 'perfect') q.set('player', s.opponent);
  if (s.game === 'sos') q.set('game', 'sos');
  if (s.side === 1 && s.opponent !== 'human') q.set('as', s.game === 'sos' ? 'second' : 'O');
  const text = q.toString();
  return text ? `?${text}` : '';
}

/**
 * @param {HTMLElement} root
 * @param {{ query: URLSearchParams }} ctx
 * @returns {() => void} unmount
 */
export function mount(root, ctx) {
  let settings = settingsFromQuery(ctx.query);
  let board = EMPTY_BOARD;
  /** @type {number[]} */
  let cells = [];
  /** @type {Mark} */
  let sosMark = 'S';
  let thinking = false;
  let generation = 0;
  /** @type {string | null} */
  let problem = null;
  let counted = false;

  const human = (/** @type {0 | 1} */ p) => settings.opponent === 'human' || p === settings.side;
  const name = (/** @type {0 | 1} */ p) => {
    if (settings.opponent !== 'human') return p === settings.side ? 'You' : 'The computer';
    if (settings.game === 'sos') return p === 0 ? 'Player 1' : 'Player 2';
    return p === 0 ? 'X' : 'O';
  };
  const scoreKey = () => `${settings.game}|${settings.opponent}|${settings.side}`;
  const score = () => {
    let s = scores.get(scoreKey());
    if (!s) scores.set(scoreKey(), (s = { p0: 0, p1: 0, draws: 0 }));
    return s;
  };

  const boardView = new BoardView({
    label: 'Game board',
    onPlay: (cell) => humanMove(cell),
    onRefuse: (_cell, taken) => {
      if (outcomeOf(settings.game, board)) return 'The game is over';
      if (taken) return 'That square is taken';
      return thinking ? 'Wait for the computer\'s move' : null;
    },
    onKey: (e) => pickKey(e.key),
  });

  const status = h('div', { class: 'status' });
  const banner = h('div', { class: 'result-banner', hidden: true });
  const picker = h('div', { class: 'mark-picker' });
  const problemBox = h('div', { class: 'inline-error', role: 'alert', hidden: true });
  const moveList = h('ol', { class: 'move-list', 'aria-label': 'Moves' });
  const scoreBoard = h('div', { class: 'scoreboard' });
  const settingsBox = h('div', { class: 'settings' });
  /** Asks before a change of setting throws away the game in progress. */
  const confirmBox = h('div', { class: 'confirm-card card', role: 'alertdialog', 'aria-label': 'Start a new game?', hidden: true });
  const help = h('p', { class: 'kbd-help' });

  const stage = h('div', { class: 'stage' }, status, banner, h('div', { class: 'board-host' }, boardView.element), picker, problemBox, help);
  const panel = h(
    'aside',
    { class: 'panel card' },
    h('h1', { class: 'panel-title', text: 'Play' }),
    h('p', { class: 'muted', text: 'On this device, no account needed.' }),
    settingsBox,
    confirmBox,
    h('div', { class: 'panel-actions' }, h('button', { class: 'btn btn-primary', type: 'button', text: 'New game', onclick: () => newGame() })),
    h('h2', { class: 'section-title', text: 'Score' }),
    scoreBoard,
    h('h2', { class: 'section-title', text: 'Moves' }),
    moveList,
  );
  replace(root, h('section', { class: 'view view-play' }, h('div', { class: 'play-layout' }, stage, panel)));

  /** @param {string} key */
  function pickKey(key) {
    const letter = settings.game === 'sos' ? letterForKey(key, sosMark) : null;
    if (letter) setMark(letter);
    return letter !== null;
  }

  /** @param {Mark} mark */
  function setMark(mark) {
    sosMark = mark;
    announce(`Placing ${mark}`);
    render();
  }

  function renderSettings() {
    replace(
      settingsBox,
      segmented(
        'Game',
        [
          { value: 'tic-tac-toe', label: 'Tic-tac-toe' },
          { value: 'sos', label: 'SOS' },
        ],
        settings.game,
        (game) => change({ game: /** @type {GameKind} */ (game) }),
      ),
      segmented(
        'Opponent',
        [
          { value: 'perfect', label: 'Perfect', hint: 'The solver: it never loses' },
          { value: 'casual', label: 'Casual', hint: 'Sometimes settles for a merely safe move' },
          { value: 'random', label: 'Random', hint: 'Any legal move' },
          { value: 'human', label: '2 players', hint: 'Two people on this device' },
        ],
        settings.opponent,
        (opponent) => change({ opponent: /** @type {Opponent} */ (opponent) }),
      ),
      settings.opponent === 'human'
        ? null
        : segmented(
            'You play',
            settings.game === 'sos'
              ? [
                  { value: '0', label: 'First' },
                  { value: '1', label: 'Second' },
                ]
              : [
                  { value: '0', label: 'X · first' },
                  { value: '1', label: 'O · second' },
                ],
            String(settings.side),
            (side) => change({ side: side === '1' ? 1 : 0 }),
            'side',
          ),
    );
  }

  /** @param {Partial<Settings>} next */
  function change(next) {
    const apply = () => {
      confirmBox.hidden = true;
      settings = { ...settings, ...next };
      history.replaceState(null, '', `${location.pathname}${queryOf(settings)}`);
      renderSettings();
      newGame();
      // On a phone the settings are below the board: bring the new game into view.
      if (window.matchMedia('(max-width: 760px)').matches) stage.scrollIntoView({ block: 'start', behavior: window.matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
    };
    if (!cells.length || outcomeOf(settings.game, board)) return apply();
    // A game in progress: ask, and keep it unless the player says otherwise.
    const keep = h('button', {
      class: 'btn',
      type: 'button',
      text: 'Keep playing',
      onclick: () => {
        confirmBox.hidden = true;
        renderSettings();
        announce('Your game goes on.');
      },
    });
    replace(
      confirmBox,
      h('p', { class: 'confirm-text', text: `Start a new game? The game in progress (${cells.length} move${cells.length === 1 ? '' : 's'}) will be lost.` }),
      h('div', { class: 'confirm-actions' }, h('button', { class: 'btn btn-primary', type: 'button', text: 'New game', onclick: apply }), keep),
    );
    confirmBox.hidden = false;
    keep.focus();
  }

  function save() {
    saveGame({ settings, moves: cells.map((cell) => ({ cell, mark: /** @type {Mark} */ (board[cell]) })) });
  }

  /**
   * Comes back to the game kept in this browser, when the address names its settings or
   * none; returns whether it did.
   */
  function resume() {
    const saved = savedGame();
    const explicit = ['player', 'game', 'as'].some((k) => ctx.query.has(k));
    if (!saved || !saved.moves.length) return false;
    if (explicit && queryOf(saved.settings) !== queryOf(settings)) return false;
    try {
      let replay = EMPTY_BOARD;
      for (const { cell, mark } of saved.moves) replay = play(saved.settings.game, replay, cell, mark);
      settings = saved.settings;
      board = replay;
      cells = saved.moves.map((m) => m.cell);
    } catch {
      return false;
    }
    counted = !!outcomeOf(settings.game, board);
    history.replaceState(null, '', `${location.pathname}${queryOf(settings)}`);
    announce(`Your game of ${settings.game === 'sos' ? 'SOS' : 'tic-tac-toe'} is back. ${turnText()}`);
    return true;
  }

  /** @param {boolean} [forget] whether to drop the kept game now (not at the page's start: a game kept for other settings stays until a move here) */
  function newGame(forget = true) {
    generation++;
    board = EMPTY_BOARD;
    cells = [];
    thinking = false;
    problem = null;
    counted = false;
    sosMark = 'S';
    if (forget) save();
    announce(`New game of ${settings.game === 'sos' ? 'SOS' : 'tic-tac-toe'}. ${turnText()}`);
    render();
    maybeComputer();
  }

  /** A link to this game's review (which is also its share link). */
  function reviewLink() {
    const moves = cells.map((cell) => `${board[cell]}${cell + 1}`).join(',');
    const query = new URLSearchParams({ game: settings.game, moves });
    return h('a', { class: 'btn', href: `/review?${query}`, text: 'Review' });
  }

  function turnText() {
    const outcome = outcomeOf(settings.game, board);
    if (outcome) return resultText(outcome);
    const p = turnOf(board);
    if (settings.opponent === 'human') return `${name(p)} to move`;
    return p === settings.side ? 'Your move' : 'The computer is thinking';
  }

  /** @param {import('../rules.js').Outcome} outcome */
  function resultText(outcome) {
    if (outcome.winner === null) return 'Draw';
    if (settings.opponent !== 'human') return outcome.winner === settings.side ? 'You win!' : 'The computer wins';
    return `${name(outcome.winner)} wins!`;
  }

  /** @param {number} cell */
  function humanMove(cell) {
    const p = turnOf(board);
    if (thinking || outcomeOf(settings.game, board) || !human(p) || board[cell] !== '-') {
      boardView.refuse(cell, board[cell] !== '-');
      return;
    }
    const mark = settings.game === 'sos' ? sosMark : marksFor(settings.game, p)[0];
    place(cell, mark);
    maybeComputer();
  }

  /** @param {number} cell @param {Mark} mark */
  function place(cell, mark) {
    const p = turnOf(board);
    board = play(settings.game, board, cell, mark);
    cells.push(cell);
    save();
    const outcome = outcomeOf(settings.game, board);
    let text = `${name(p)} ${settings.opponent !== 'human' && p === settings.side ? 'place' : 'places'} ${mark} in square ${cell + 1}.`;
    if (settings.opponent === 'human' && settings.game !== 'sos') text = `${mark} in square ${cell + 1}.`;
    if (outcome) {
      text += ` ${resultText(outcome)}`;
      if (!counted) {
        counted = true;
        const s = score();
        if (outcome.winner === null) s.draws++;
        else if (outcome.winner === 0) s.p0++;
        else s.p1++;
      }
    } else text += ` ${turnText()}.`;
    announce(text);
    render();
  }

  async function maybeComputer() {
    if (settings.opponent === 'human' || outcomeOf(settings.game, board)) return;
    if (turnOf(board) === settings.side) return;
    const mine = generation;
    thinking = true;
    problem = null;
    render();
    const started = performance.now();
    try {
      const move = await computerMove(settings.game, board, settings.opponent);
      // A short pause, so the reply reads as a reply.
      const wait = Math.max(0, 320 - (performance.now() - started));
      await new Promise((resolve) => setTimeout(resolve, wait));
      if (mine !== generation) return;
      thinking = false;
      if (move) place(move.cell, move.mark);
    } catch (e) {
      if (mine !== generation) return;
      thinking = false;
      problem = e instanceof ApiError || e instanceof Error ? e.message : String(e);
      render();
    }
  }

  function render() {
    const outcome = outcomeOf(settings.game, board);
    const p = turnOf(board);
    const canPlay = !outcome && !thinking && human(p) && !problem;
    boardView.set({
      game: settings.game,
      board,
      lastCell: cells.length ? cells[cells.length - 1] : null,
      winCells: outcome ? outcome.cells : [],
      interactive: canPlay,
      ghost: settings.game === 'sos' ? sosMark : marksFor(settings.game, p)[0],
      owners: ownersOf(cells),
    });

    // Whose turn, with the mark as a glyph (not colour alone).
    const glyph = settings.game === 'sos' ? (p === 0 ? '1' : '2') : p === 0 ? 'X' : 'O';
    replace(
      status,
      outcome
        ? h('span', { class: 'status-text' }, resultText(outcome))
        : [
            h('span', { class: `mark-badge p${p}`, text: glyph }),
            h('span', { class: 'status-text' }, thinking ? h('span', { class: 'thinking' }, 'The computer is thinking') : turnText()),
          ],
    );
    status.dataset.state = outcome ? 'over' : thinking ? 'thinking' : 'turn';

    // The result takes the place of the turn line, above the board.
    status.hidden = !!outcome;
    banner.hidden = !outcome;
    if (outcome) {
      const again = h('button', { class: 'btn btn-primary', type: 'button', text: 'Play again', onclick: () => newGame() });
      // A win on this device is a win, unless the computer won it.
      const kind = outcome.winner === null ? 'draw' : settings.opponent !== 'human' && outcome.winner !== settings.side ? 'loss' : 'win';
      replace(
        banner,
        h('div', { class: `result-card is-${kind}`, role: 'status' }, h('div', { class: 'result-text' }, h('p', { class: `result-title ${kind}`, text: resultText(outcome) })), h('div', { class: 'result-actions' }, again, reviewLink())),
      );
    }

    picker.hidden = settings.game !== 'sos' || !!outcome;
    if (settings.game === 'sos') {
      replace(picker, ...letterPicker(sosMark, (m) => setMark(m), true));
    }

    problemBox.hidden = !problem;
    if (problem) {
      replace(problemBox, h('span', { text: problem }), h('button', { class: 'btn btn-small', type: 'button', text: 'Try again', onclick: () => maybeComputer() }));
    }

    help.textContent = settings.game === 'sos'
      ? 'Click or tap a square. Keyboard: arrows and Enter, or 1–9; S or O picks the letter.'
      : 'Click or tap a square. Keyboard: arrows and Enter, or 1–9.';

    replace(
      moveList,
      cells.map((cell, i) => h('li', { class: `move p${i % 2}` }, h('span', { class: 'move-mark', text: board[cell] }), ` square ${cell + 1}`)),
    );
    if (!cells.length) moveList.appendChild(h('li', { class: 'muted empty', text: 'No moves yet' }));

    const s = score();
    const label0 = settings.opponent === 'human' ? name(0) : settings.side === 0 ? 'You' : 'Computer';
    const label1 = settings.opponent === 'human' ? name(1) : settings.side === 1 ? 'You' : 'Computer';
    replace(
      scoreBoard,
      h('div', { class: 'score' }, h('span', { class: 'score-value', text: String(s.p0) }), h('span', { class: 'score-label', text: label0 })),
      h('div', { class: 'score' }, h('span', { class: 'score-value', text: String(s.draws) }), h('span', { class: 'score-label', text: 'Draws' })),
      h('div', { class: 'score' }, h('span', { class: 'score-value', text: String(s.p1) }), h('span', { class: 'score-label', text: label1 })),
    );
  }

  const stopKeys = pageKeys((cell) => humanMove(cell), (key) => pickKey(key));

  if (resume()) {
    renderSettings();
    render();
    maybeComputer();
  } else {
    renderSettings();
    newGame(false);
  }
  return () => {
    generation++;
    stopKeys();
    boardView.destroy();
  };
}
