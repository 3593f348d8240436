// @ts-check
/**
 * Puzzles from the solver: today's puzzle (or `/puzzles?id=tic-tac-toe-1234`), played on
 * the board against the best defence.
 *
 * Each move goes to `POST /api/puzzles/{id}/attempts` with the line so far; the server
 * answers `going` with the defence's reply (played here on the board), or decides the
 * attempt: `solved`, or `failed` at the first wrong move, with the correct line. A logged-in
 * player's first decided attempt at a puzzle moves their puzzle rating and the puzzle's
 * (shown here); "Try again" replays it unrated, "Next puzzle" opens the next one in the
 * set's order.
 * @module
 */

import { api, ApiError } from '../api.js';
import { BoardView } from '../board.js';
import { announce, h, letterForKey, letterPicker, pageKeys, replace } from '../dom.js';
import { gameName } from '../format.js';
import { outcomeOf, whyIllegal } from '../rules.js';
import { myAddress, onSession, refreshMe, session } from '../session.js';

/**
 * @typedef {import('../rules.js').GameKind} GameKind
 * @typedef {import('../rules.js').Mark} Mark
 * @typedef {{ rating: number, deviation: number, attempts: number, solved: number }} PuzzleRecord
 * @typedef {{
 *   id: string, game: GameKind, board: string, turn: 'first' | 'second', marks: string[],
 *   goal: 'win' | 'draw', moves: number, title: string, rating: PuzzleRecord,
 * }} PuzzleView
 * @typedef {{ cell: number, mark: string }} LineMove
 * @typedef {{ before: number, after: number }} RatingChange
 * @typedef {{
 *   status: 'going' | 'solved' | 'failed', reply: LineMove | null, wrong_move: number | null,
 *   correct_first_moves: LineMove[], solution: LineMove[], rated: boolean,
 *   player_rating: RatingChange | null, puzzle_rating: RatingChange | null,
 * }} AttemptResult
 */

/** How long the defence's reply waits before it appears, so the player sees their move land. */
const REPLY_DELAY_MS = 350;

/** The side to move, in words: X or O in tic-tac-toe, Player 1 or 2 in SOS. @param {PuzzleView} p */
function sideName(p) {
  if (p.game === 'sos') return p.turn === 'first' ? 'Player 1' : 'Player 2';
  return p.turn === 'first' ? 'X' : 'O';
}

/** "X to move: win in 2". @param {PuzzleView} p */
export function goalText(p) {
  return `${sideName(p)} to move: ${p.title}`;
}

/** A line's moves as squares people read: "X 5, O 1, X 9". @param {LineMove[]} line */
function lineText(line) {
  return line.map((m) => `${m.mark} ${m.cell + 1}`).join(', ');
}

/** A signed rating change, rounded: "+12", "−8". @param {RatingChange} c */
function delta(c) {
  const d = Math.round(c.after - c.before);
  return d >= 0 ? `+${d}` : `−${-d}`;
}

/**
 * @param {HTMLElement} root
 * @param {{ query: URLSearchParams, navigate: (path: string) => void }} ctx
 * @returns {() => void} unmount
 */
export function mount(root, ctx) {
  const wanted = ctx.query.get('id');
  /** @type {PuzzleView | null} */
  let puzzle = null;
  let daily = false;
  let board = '---------';
  /** @type {LineMove[]} */
  let line = [];
  /** @type {'loading' | 'solving' | 'waiting' | 'solved' | 'failed'} */
  let phase = 'loading';
  /** @type {AttemptResult | null} */
  let result = null;
  /** @type {Mark} */
  let sosMark = 'S';
  /** @type {string | null} */
  let problem = null;
  let generation = 0;

  const boardView = new BoardView({
    label: 'Puzzle board',
    onPlay: (cell) => move(cell),
    onRefuse: (_cell, taken) => {
      if (phase === 'solved' || phase === 'failed') return 'The puzzle is over';
      if (taken) return 'That square is taken';
      return phase === 'waiting' ? 'Wait for the reply' : null;
    },
    onKey: (e) => pickKey(e.key),
  });

  const title = h('h1', { class: 'panel-title', text: 'Puzzles' });
  const status = h('div', { class: 'status puzzle-goal' });
  const banner = h('div', { class: 'result-banner', hidden: true });
  const picker = h('div', { class: 'mark-picker' });
  const problemBox = h('div', { class: 'inline-error', role: 'alert', hidden: true });
  const about = h('div', { class: 'puzzle-about' });
  const stage = h('div', { class: 'stage' }, status, banner, h('div', { class: 'board-host' }, boardView.element), picker, problemBox);
  const panel = h(
    'aside',
    { class: 'panel card' },
    title,
    h('p', { class: 'muted', text: 'Positions the solver chose: find the only way to win, or to hold the draw, against its best defence.' }),
    about,
    h(
      'div',
      { class: 'panel-actions' },
      h('button', { class: 'btn', type: 'button', text: 'Try again', onclick: () => restart() }),
      h('button', { class: 'btn btn-primary', type: 'button', text: 'Next puzzle', onclick: () => next() }),
    ),
  );
  replace(root, h('section', { class: 'view view-puzzles' }, h('div', { class: 'play-layout' }, stage, panel)));

  async function load() {
    const mine = ++generation;
    phase = 'loading';
    render();
    try {
      if (wanted) {
        puzzle = await api('GET', `/api/puzzles/${encodeURIComponent(wanted)}`, undefined, { auth: false });
        daily = false;
      } else {
        /** @type {{ puzzle: PuzzleView }} */
        const today = await api('GET', '/api/puzzles/daily', undefined, { auth: false });
        puzzle = today.puzzle;
        daily = true;
      }
      if (mine !== generation) return;
      problem = null;
      restart();
    } catch (e) {
      if (mine !== generation) return;
      problem = e instanceof Error ? e.message : String(e);
      render();
    }
  }

  function restart() {
    if (!puzzle) return;
    generation++;
    board = puzzle.board;
    line = [];
    result = null;
    problem = null;
    phase = 'solving';
    sosMark = 'S';
    announce(`${goalText(puzzle)}.`);
    render();
  }

  /** Opens the puzzle after this one in the set (the first after the last). */
  async function next() {
    if (!puzzle) return;
    try {
      /** @type {{ puzzles: PuzzleView[] }} */
      let page = await api('GET', `/api/puzzles?limit=1&after=${encodeURIComponent(puzzle.id)}`, undefined, { auth: false });
      if (!page.puzzles.length) page = await api('GET', '/api/puzzles?limit=1', undefined, { auth: false });
      if (page.puzzles.length) ctx.navigate(`/puzzles?id=${encodeURIComponent(page.puzzles[0].id)}`);
    } catch (e) {
      problem = e instanceof Error ? e.message : String(e);
      render();
    }
  }

  /** @param {string} key */
  function pickKey(key) {
    const letter = puzzle?.game !== 'sos' ? null : letterForKey(key, sosMark);
    if (!letter) return false;
    sosMark = letter;
    announce(`Placing ${sosMark}`);
    render();
    return true;
  }

  /** The player's move: shown at once, then checked by the server. @param {number} cell */
  async function move(cell) {
    if (!puzzle || phase !== 'solving') return;
    const mark = puzzle.game === 'sos' ? sosMark : puzzle.marks[0];
    const why = whyIllegal(puzzle.game, board, cell, /** @type {Mark} */ (mark));
    if (why) {
      announce(why);
      return;
    }
    line = [...line, { cell, mark }];
    board = board.slice(0, cell) + mark + board.slice(cell + 1);
    phase = 'waiting';
    render();
    const mine = generation;
    const started = performance.now();
    try {
      /** @type {AttemptResult} */
      const answer = await api('POST', `/api/puzzles/${encodeURIComponent(puzzle.id)}/attempts`, { moves: line });
      if (mine !== generation) return;
      // The defence's reply lands first: also when it fills the board of a saved draw.
      if (answer.reply) {
        const wait = REPLY_DELAY_MS - (performance.now() - started);
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (mine !== generation) return;
        const reply = answer.reply;
        line = [...line, reply];
        board = board.slice(0, reply.cell) + reply.mark + board.slice(reply.cell + 1);
      }
      if (answer.status === 'going') {
        phase = 'solving';
        if (answer.reply) announce(`Reply: ${answer.reply.mark} in square ${answer.reply.cell + 1}. Your move.`);
      } else {
        result = answer;
        phase = answer.status;
        announce(answer.status === 'solved' ? 'Solved!' : `Not this one. The solution: ${lineText(answer.solution)}.`);
        if (answer.rated) {
          refreshPuzzle();
          refreshMe().catch(() => {});
        }
      }
    } catch (e) {
      if (mine !== generation) return;
      // The move was not checked: take it back, so it can be played again.
      line = line.slice(0, -1);
      board = board.slice(0, cell) + '-' + board.slice(cell + 1);
      phase = 'solving';
      problem = e instanceof ApiError || e instanceof Error ? e.message : String(e);
    }
    render();
  }

  /** The puzzle's rating after a rated attempt. */
  async function refreshPuzzle() {
    if (!puzzle) return;
    try {
      /** @type {PuzzleView} */
      const fresh = await api('GET', `/api/puzzles/${encodeURIComponent(puzzle.id)}`, undefined, { auth: false });
      if (puzzle && fresh.id === puzzle.id) puzzle = { ...puzzle, rating: fresh.rating };
      render();
    } catch {
      // The rating shown stays the one before; the next load shows the new one.
    }
  }

  /** Who placed each cell of the line (the puzzle's own marks have no owner). */
  function owners() {
    /** @type {(0 | 1 | null)[]} */
    const out = Array(9).fill(null);
    const first = puzzle?.turn === 'first' ? 0 : 1;
    line.forEach((m, i) => {
      out[m.cell] = /** @type {0 | 1} */ ((first + i) % 2);
    });
    return out;
  }

  function render() {
    const p = puzzle;
    title.textContent = p ? (daily ? 'Daily puzzle' : 'Puzzle') : 'Puzzles';
    problemBox.hidden = !problem;
    if (problem) replace(problemBox, h('span', { text: problem }), h('button', { class: 'btn btn-small', type: 'button', text: 'Reload', onclick: () => load() }));
    if (!p) {
      replace(status, h('span', { class: 'status-text', text: phase === 'loading' ? 'Loading the puzzle…' : 'No puzzle' }));
      banner.hidden = true;
      picker.hidden = true;
      replace(about);
      boardView.set({ game: 'tic-tac-toe', board: '---------', lastCell: null, winCells: [], interactive: false, ghost: null, owners: Array(9).fill(null) });
      return;
    }
    const outcome = outcomeOf(p.game, board);
    const over = phase === 'solved' || phase === 'failed';
    const last = line.length ? line[line.length - 1].cell : null;
    boardView.set({
      game: p.game,
      board,
      lastCell: last,
      winCells: outcome ? outcome.cells : [],
      interactive: phase === 'solving',
      ghost: p.game === 'sos' ? sosMark : p.marks[0],
      owners: owners(),
    });
    boardView.element.dataset.phase = phase;

    const glyph = p.game === 'sos' ? (p.turn === 'first' ? '1' : '2') : p.turn === 'first' ? 'X' : 'O';
    status.hidden = over;
    replace(
      status,
      h('span', { class: `mark-badge p${p.turn === 'first' ? 0 : 1}`, text: glyph }),
      h('span', { class: 'status-text' }, phase === 'waiting' ? h('span', { class: 'thinking' }, 'Checking') : goalText(p)),
    );

    banner.hidden = !over;
    if (!over) replace(banner);
    if (over && result) {
      const solved = phase === 'solved';
      const rating = result.player_rating;
      replace(
        banner,
        h(
          'div',
          { class: `result-card is-${solved ? 'win' : 'loss'}`, role: 'status', dataset: { result: phase } },
          h(
            'div',
            { class: 'result-text' },
            h('p', { class: `result-title ${solved ? 'win' : 'loss'}`, text: solved ? 'Solved' : 'Not this time' }),
            h('span', { class: 'result-money', text: solved ? `You found it: ${goalText(p).replace(/^.* to move: /, '')}.` : `The solution: ${lineText(result.solution)}` }),
            rating
              ? h('span', { class: 'result-money puzzle-rating-change', text: `Puzzle rating ${Math.round(rating.after)} (${delta(rating)})` })
              : h('span', { class: 'result-money muted', text: myAddress() ? 'Already rated: only your first attempt at a puzzle counts.' : 'Log in to have your attempts rated.' }),
          ),
          h('div', { class: 'result-actions' }, h('button', { class: 'btn btn-primary', type: 'button', text: 'Next puzzle', onclick: () => next() })),
        ),
      );
    }

    picker.hidden = p.game !== 'sos' || over;
    if (p.game === 'sos') {
      replace(
        picker,
        ...letterPicker(sosMark, (m) => {
          sosMark = m;
          render();
        }),
      );
    }

    const me = myAddress();
    const mine = session.me?.stats.puzzles;
    /** @param {string} label @param {string} value */
    const row = (label, value) => h('div', { class: 'puzzle-fact' }, h('dt', { text: label }), h('dd', { text: value }));
    replace(
      about,
      h(
        'dl',
        { class: 'puzzle-facts' },
        row('Game', gameName(p.game)),
        row('Goal', p.goal === 'win' ? `Win in ${p.moves} move${p.moves === 1 ? '' : 's'}` : `Hold the draw (${p.moves} move${p.moves === 1 ? '' : 's'})`),
        row('Puzzle rating', `${Math.round(p.rating.rating)} · ${p.rating.solved}/${p.rating.attempts} solved`),
        row('Puzzle', p.id),
        me && mine ? row('Your puzzle rating', `${Math.round(mine.rating)} · ${mine.solved}/${mine.attempts} solved`) : null,
      ),
    );
  }

  const stopKeys = pageKeys((cell) => move(cell), (key) => pickKey(key));
  const stopSession = onSession(() => render());

  load();
  return () => {
    generation++;
    stopSession();
    stopKeys();
    boardView.destroy();
  };
}
