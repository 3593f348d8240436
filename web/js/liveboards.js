// @ts-check
/**
 * "Live now" as small boards that move live: one tile per live match (its board, its two
 * players, whose move it is), each a link that opens the match as a spectator.
 *
 * A tile follows its match's topic (`match:<id>`) from the start of the match: the catch-up
 * replays the moves the list's copy already has (skipped by their `seq`) and any made since
 * it was read, then live moves land as they are made, so no move falls between the read and
 * the subscription. The lobby's list decides which tiles exist; a tile that leaves it (its
 * match ended) stops following, and so do all of them when the view is left.
 *
 * At most {@link MAX_LIVE_BOARDS} tiles follow at once: each subscription's catch-up is
 * charged to the address's replay budget (`TRIAD_REPLAY_EVENTS_PER_IP`, a match's
 * catch-up counts as 32 events), and a page that follows a bounded number of matches stays
 * far inside it. Further matches are counted, not drawn.
 *
 * The boards are SVG, drawn as board.js draws the big one (the same tiles, marks, player
 * colours, last-move dot and won squares, from the same CSS variables), but without its
 * canvas, pointer and keyboard machinery: a tile is one link, one tab stop.
 * @module
 */

import { h } from './dom.js';
import { formatAmount, gameName } from './format.js';
import { playerLabel } from './identity.js';
import { realtime } from './realtime.js';

/**
 * @typedef {import('./session.js').MatchView} MatchView
 * @typedef {import('./realtime.js').ServerEvent} ServerEvent
 */

/** The most live matches drawn (and followed) at once. */
export const MAX_LIVE_BOARDS = 8;

const SVG = 'http://www.w3.org/2000/svg';
/** The board's geometry in viewBox units: three tiles of 30 with gaps of 3. */
const TILE = 30;
const GAP = 3;
const SIZE = 3 * TILE + 2 * GAP;

/** @param {number} cell */
const origin = (cell) => ({ x: (cell % 3) * (TILE + GAP), y: Math.floor(cell / 3) * (TILE + GAP) });

/**
 * @param {string} name
 * @param {Record<string, string | number>} attributes
 */
function svg(name, attributes) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attributes)) el.setAttribute(k, String(v));
  return el;
}

/**
 * The cells of a `CellSet` (a 9-bit mask, as events carry it) or of a list.
 * @param {number | number[] | undefined} cells
 * @returns {number[]}
 */
function cellsOf(cells) {
  if (Array.isArray(cells)) return cells.map(Number);
  const bits = Number(cells ?? 0);
  return [...Array(9).keys()].filter((c) => (bits >> c) & 1);
}

/**
 * A small board as SVG: `board` is 9 characters (`-` empty); `owners` says which player
 * placed each mark (SOS letters take their colour); the last move has a dot, won squares
 * are filled.
 * @param {{ game: 'tic-tac-toe' | 'sos', board: string, owners: (0 | 1 | null)[], lastCell: number | null, winCells: number[] }} state
 * @returns {SVGSVGElement}
 */
export function miniBoard(state) {
  const root = /** @type {SVGSVGElement} */ (svg('svg', { viewBox: `0 0 ${SIZE} ${SIZE}`, class: 'mini-board', 'aria-hidden': 'true', focusable: 'false' }));
  root.dataset.board = state.board;
  const win = new Set(state.winCells);
  for (let cell = 0; cell < 9; cell++) {
    const { x, y } = origin(cell);
    root.appendChild(svg('rect', { x, y, width: TILE, height: TILE, rx: 5, class: win.has(cell) ? 'mini-tile is-win' : 'mini-tile' }));
    const mark = state.board[cell];
    if (mark === '-') continue;
    const cx = x + TILE / 2;
    const cy = y + TILE / 2;
    // Colours as board.js's: SOS letters by who placed them, X and O by mark.
    const player = state.game === 'sos' ? (state.owners[cell] === 1 ? 'p2' : 'p1') : mark === 'X' ? 'p1' : 'p2';
    const cls = `mini-mark mini-${win.has(cell) ? 'on-win' : player}`;
    if (state.game === 'tic-tac-toe' && mark === 'X') {
      const r = TILE * 0.25;
      root.appendChild(svg('path', { d: `M${cx - r} ${cy - r}L${cx + r} ${cy + r}M${cx + r} ${cy - r}L${cx - r} ${cy + r}`, class: cls }));
    } else if (state.game === 'tic-tac-toe') {
      root.appendChild(svg('circle', { cx, cy, r: TILE * 0.26, class: cls }));
    } else {
      const text = svg('text', { x: cx, y: cy + TILE * 0.035, class: `${cls} mini-letter`, 'font-size': Math.round(TILE * 0.6) });
      text.textContent = mark;
      root.appendChild(text);
    }
    if (cell === state.lastCell) {
      root.appendChild(svg('circle', { cx: x + TILE * 0.86, cy: y + TILE * 0.14, r: TILE * 0.06, class: win.has(cell) ? 'mini-last mini-on-win' : 'mini-last' }));
    }
  }
  return root;
}

/** One live match's tile: its board and players, following the match's topic. */
class Tile {
  /** @param {MatchView} match */
  constructor(match) {
    this.match = match;
    /** @type {(0 | 1 | null)[]} */
    this.owners = Array(9).fill(null);
    for (const m of match.moves ?? []) this.owners[m.cell] = m.player === 'second' ? 1 : 0;
    /** @type {number | null} */
    this.lastCell = match.moves?.length ? match.moves[match.moves.length - 1].cell : null;
    /** @type {number[]} */
    this.winCells = [];
    this.ended = false;

    this.boardBox = h('span', { class: 'live-board-board' });
    this.seats = (match.players ?? []).map((seat, i) =>
      h(
        'span',
        { class: `live-seat live-seat-${i ? 'p2' : 'p1'}` },
        h('span', { class: 'live-seat-mark', 'aria-hidden': 'true', text: match.game === 'sos' ? '●' : i ? 'O' : 'X' }),
        seat.address ? playerLabel(seat.address, { link: false, size: 16 }) : h('span', { text: `computer (${seat.level})` }),
      ),
    );
    this.title = h('span', { class: 'live-board-title' });
    // The link's name is the text on the tile, framed by words only a screen reader says
    // ("Watch … , 2 marks played"), so what is seen is what speech input can say.
    this.state = h('span', { class: 'visually-hidden' });
    this.link = h(
      'a',
      { class: 'live-board', href: `/match/${match.id}` },
      h('span', { class: 'visually-hidden', text: 'Watch ' }),
      this.title,
      this.boardBox,
      h('span', { class: 'live-board-seats' }, this.seats),
      this.state,
    );
    this.element = h('li', { class: 'live-board-item', dataset: { match: String(match.id) } }, this.link);
    this.render();
    this.stop = realtime.subscribe(`match:${match.id}`, 0, { onEvent: (event) => this.onEvent(event) });
  }

  /**
   * A newer copy from the lobby's list (one that moved further than the events so far).
   * @param {MatchView} match
   */
  update(match) {
    if (match.seq <= this.match.seq) return;
    this.match = match;
    for (const m of match.moves ?? []) this.owners[m.cell] = m.player === 'second' ? 1 : 0;
    this.lastCell = match.moves?.length ? match.moves[match.moves.length - 1].cell : null;
    this.render();
  }

  /** @param {ServerEvent} event */
  onEvent(event) {
    const k = event.kind;
    const m = this.match;
    if (k.type === 'moved' && k.seq === m.seq + 1) {
      const cell = Number(k.cell);
      this.owners[cell] = k.player === 'second' ? 1 : 0;
      this.lastCell = cell;
      this.match = {
        ...m,
        board: m.board.slice(0, cell) + k.mark + m.board.slice(cell + 1),
        seq: k.seq,
        phase: /** @type {const} */ ('in_progress'),
        turn: k.player === 'first' ? /** @type {const} */ ('second') : /** @type {const} */ ('first'),
      };
      this.render();
    } else if (k.type === 'game_ended' && !this.ended) {
      // Shown until the lobby's list drops the match (at once, in practice).
      this.ended = true;
      this.winCells = cellsOf(k.cells);
      this.match = { ...m, turn: null };
      this.render();
    }
  }

  render() {
    const m = this.match;
    this.boardBox.replaceChildren(miniBoard({ game: m.game, board: m.board, owners: this.owners, lastCell: this.lastCell, winCells: this.winCells }));
    this.title.replaceChildren(
      h('span', { class: 'live-dot', 'aria-hidden': 'true' }),
      h('strong', { text: gameName(m.game) }),
      h('span', { class: 'muted', text: ` #${m.id}${m.stake !== '0' ? ` · ${formatAmount(m.stake)}` : ''}` }),
    );
    const toMove = this.ended ? -1 : m.turn === 'second' ? 1 : m.turn === 'first' ? 0 : -1;
    this.seats.forEach((seat, i) => seat.classList.toggle('to-move', i === toMove));
    this.state.textContent = `, ${this.describeState()}`;
  }

  /** How far the match is, for a screen reader (sighted players see the board). */
  describeState() {
    const marks = [...this.match.board].filter((c) => c !== '-').length;
    return this.ended ? 'finished' : marks ? `${marks} ${marks === 1 ? 'mark' : 'marks'} played` : 'no moves yet';
  }
}

/**
 * The live boards of the lobby: `show` with the lobby's live matches (newest first) after
 * each change of the list; `stop` when the view is left.
 */
export class LiveBoards {
  constructor() {
    this.element = h('ul', { class: 'live-boards', 'aria-label': 'Live matches' });
    this.more = h('p', { class: 'muted small live-more', hidden: true });
    /** @type {Map<number, Tile>} */
    this.tiles = new Map();
  }

  /** @param {MatchView[]} matches */
  show(matches) {
    const shown = matches.slice(0, MAX_LIVE_BOARDS);
    const ids = new Set(shown.map((m) => m.id));
    for (const [id, tile] of this.tiles) {
      if (!ids.has(id)) {
        tile.stop();
        this.tiles.delete(id);
      }
    }
    const tiles = shown.map((m) => {
      let tile = this.tiles.get(m.id);
      if (tile) tile.update(m);
      else {
        tile = new Tile(m);
        this.tiles.set(m.id, tile);
      }
      return tile.element;
    });
    // Tiles kept are moved, not rebuilt: their subscriptions and drawings stay.
    this.element.replaceChildren(...tiles);
    const extra = matches.length - shown.length;
    this.more.hidden = extra <= 0;
    this.more.textContent = extra > 0 ? `and ${extra} more ${extra === 1 ? 'match' : 'matches'} under way` : '';
  }

  /** Stops following every match. */
  stop() {
    for (const tile of this.tiles.values()) tile.stop();
    this.tiles.clear();
  }
}
