// @ts-check
/**
 * The board, drawn on a canvas (as the HTML5 canvas game drew it), for every game view: local and online play and
 * spectating.
 *
 * - Crisp on any screen: the canvas's backing store follows its CSS size times
 *   `devicePixelRatio`, redrawn when either changes (resize, zoom, a move to another
 *   screen), and when the colour scheme changes (colours come from CSS variables).
 * - Mouse, pen and touch through pointer events; a hover shows a faint preview of the mark.
 * - Keyboard and screen readers: the canvas holds nine real buttons as fallback content
 *   (focusable, announced, invisible), one per square, with a roving tab stop. Arrows move,
 *   Enter or Space plays, 1-9 play a square directly. Each button says its square, what is
 *   on it, and whether it is the last move or part of the winning line, so the board never
 *   relies on colour: marks are shapes (X, O, S), the last move has a corner dot, and a win
 *   has a line drawn through it as well as the canvas game's red squares.
 * @module
 */

import { announce } from './dom.js';
import { LINES } from './rules.js';

/**
 * @typedef {import('./rules.js').GameKind} GameKind
 * @typedef {object} BoardState
 * @property {GameKind} game
 * @property {string} board 9 characters, `-` empty
 * @property {number | null} lastCell the last move's cell
 * @property {number[]} winCells every cell of every winning line
 * @property {boolean} interactive whether the viewer may place a mark now
 * @property {string | null} ghost the mark a hover would place
 * @property {(0 | 1 | null)[]} owners who placed each cell (colours SOS letters)
 */

const ANIMATION_MS = 220;

export class BoardView {
  /**
   * @param {{ label: string, onPlay: (cell: number) => void, onKey?: (event: KeyboardEvent) => boolean, onRefuse?: (cell: number, taken: boolean) => string | null }} options
   *   onKey handles other keys (S, O, T in SOS) and says whether it did; onRefuse says why
   *   a square cannot be played now (taken: it holds a mark), or null to stay silent
   */
  constructor(options) {
    this.options = options;
    /** @type {BoardState} */
    this.state = { game: 'tic-tac-toe', board: '---------', lastCell: null, winCells: [], interactive: false, ghost: null, owners: Array(9).fill(null) };
    this.hover = -1;
    this.focused = 4;
    this.focusVisible = false;
    /** @type {Map<number, number>} cell → animation start */
    this.appearing = new Map();
    this.winSince = 0;
    this.frame = 0;
    this.shown = false;
    this.reducedMotion = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    /** The square a refused play flashes, and since when. */
    this.refusedCell = -1;
    this.refusedAt = 0;
    this.noteTimer = 0;

    this.element = document.createElement('div');
    this.element.className = 'board';
    this.element.setAttribute('role', 'group');
    this.element.setAttribute('aria-label', options.label);
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'board-canvas';
    this.element.appendChild(this.canvas);
    // Why a play was refused, shown briefly over the board (the live region says it aloud).
    this.note = document.createElement('p');
    this.note.className = 'board-note';
    this.note.setAttribute('aria-hidden', 'true');
    this.note.hidden = true;
    this.element.appendChild(this.note);
    /** @type {HTMLButtonElement[]} */
    this.buttons = [];
    for (let cell = 0; cell < 9; cell++) {
      const b = document.createElement('button');
      b.type = 'button';
      b.tabIndex = cell === this.focused ? 0 : -1;
      b.dataset.cell = String(cell);
      b.addEventListener('focus', () => {
        this.focused = cell;
        this.focusVisible = true;
        this.syncTabStops();
        this.draw();
      });
      b.addEventListener('blur', () => {
        queueMicrotask(() => {
          if (!this.element.contains(document.activeElement)) {
            this.focusVisible = false;
            this.draw();
          }
        });
      });
      b.addEventListener('click', (e) => {
        // Real clicks land on the canvas (the buttons are not laid out); this is a
        // keyboard or assistive-technology activation.
        e.preventDefault();
        this.tryPlay(cell);
      });
      this.buttons.push(b);
      this.canvas.appendChild(b);
    }
    const ctx = this.canvas.getContext('2d');
    if (!ctx) throw new Error('this browser cannot draw on a canvas');
    this.ctx = ctx;

    this.canvas.addEventListener('pointermove', (e) => this.setHover(this.cellAt(e)));
    this.canvas.addEventListener('pointerleave', () => this.setHover(-1));
    this.canvas.addEventListener('pointerdown', (e) => {
      if (e.pointerType !== 'mouse') this.setHover(-1);
    });
    this.canvas.addEventListener('click', (e) => {
      const cell = this.cellAt(e);
      if (cell >= 0) {
        this.focused = cell;
        this.syncTabStops();
        this.tryPlay(cell);
      }
    });
    this.element.addEventListener('keydown', (e) => this.onKeyDown(e));

    this.resizeObserver = new ResizeObserver(() => this.draw());
    this.resizeObserver.observe(this.element);
    this.schemeQuery = window.matchMedia('(prefers-color-scheme: dark)');
    this.onScheme = () => this.draw();
    this.schemeQuery.addEventListener('change', this.onScheme);
    window.addEventListener('resize', this.onScheme);
  }

  /**
   * Shows a new state; marks that just appeared and a new win are animated.
   * @param {BoardState} state
   */
  set(state) {
    const before = this.state;
    const now = performance.now();
    // The first state shown (a match opened midway) appears at once; later marks grow in.
    if (!this.reducedMotion && this.shown) {
      for (let cell = 0; cell < 9; cell++) {
        if (before.board[cell] === '-' && state.board[cell] !== '-') this.appearing.set(cell, now);
      }
      if (state.winCells.length && !before.winCells.length) this.winSince = now;
    }
    this.shown = true;
    if (!state.winCells.length) this.winSince = 0;
    this.state = state;
    this.element.dataset.board = state.board;
    this.element.dataset.win = state.winCells.join(',');
    this.element.dataset.last = state.lastCell === null ? '' : String(state.lastCell);
    this.element.classList.toggle('is-interactive', state.interactive);
    this.updateLabels();
    this.draw();
  }

  /** Moves keyboard focus to the board. */
  focus() {
    this.buttons[this.focused]?.focus();
  }

  destroy() {
    cancelAnimationFrame(this.frame);
    window.clearTimeout(this.noteTimer);
    this.resizeObserver.disconnect();
    this.schemeQuery.removeEventListener('change', this.onScheme);
    window.removeEventListener('resize', this.onScheme);
  }

  /** @param {number} cell */
  tryPlay(cell) {
    const taken = this.state.board[cell] !== '-';
    if (this.state.interactive && !taken) this.options.onPlay(cell);
    else this.refuse(cell, taken);
  }

  /**
   * Says why a square cannot be played: the square flashes, the board shakes (unless the
   * user asked for less motion), a short note shows over the board and the live region
   * reads it.
   * @param {number} cell
   * @param {boolean} taken
   */
  refuse(cell, taken) {
    const text = this.options.onRefuse?.(cell, taken) ?? null;
    if (!text) return;
    this.refusedCell = cell;
    this.refusedAt = performance.now();
    this.element.classList.remove('is-refused');
    void this.element.offsetWidth; // restarts the shake
    this.element.classList.add('is-refused');
    this.element.dataset.refused = String(cell);
    this.note.textContent = text;
    this.note.hidden = false;
    window.clearTimeout(this.noteTimer);
    this.noteTimer = window.setTimeout(() => {
      this.note.hidden = true;
      this.element.classList.remove('is-refused');
    }, 1800);
    announce(text);
    this.draw();
  }

  /** @param {KeyboardEvent} e */
  onKeyDown(e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    const step = /** @type {Record<string, number[]>} */ (moves)[e.key];
    if (step) {
      e.preventDefault();
      const row = Math.min(2, Math.max(0, Math.floor(this.focused / 3) + step[0]));
      const col = Math.min(2, Math.max(0, (this.focused % 3) + step[1]));
      this.focused = row * 3 + col;
      this.syncTabStops();
      this.buttons[this.focused].focus();
      return;
    }
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.tryPlay(this.focused);
      return;
    }
    if (/^[1-9]$/.test(e.key)) {
      e.preventDefault();
      this.focused = Number(e.key) - 1;
      this.syncTabStops();
      this.buttons[this.focused].focus();
      this.tryPlay(this.focused);
      return;
    }
    if (this.options.onKey?.(e)) e.preventDefault();
  }

  syncTabStops() {
    this.buttons.forEach((b, i) => {
      b.tabIndex = i === this.focused ? 0 : -1;
    });
  }

  updateLabels() {
    const { board, lastCell, winCells, interactive, game, owners } = this.state;
    this.buttons.forEach((b, cell) => {
      const mark = board[cell];
      const parts = [`Square ${cell + 1}`];
      if (mark === '-') parts.push('empty');
      else {
        parts.push(mark);
        if (game === 'sos' && owners[cell] !== null) parts.push(`placed by ${owners[cell] === 0 ? 'the first player' : 'the second player'}`);
      }
      if (cell === lastCell) parts.push('last move');
      if (winCells.includes(cell)) parts.push('winning line');
      b.setAttribute('aria-label', parts.join(', '));
      b.setAttribute('aria-disabled', String(!interactive || mark !== '-'));
    });
  }

  /**
   * The square under a pointer, or -1.
   * @param {MouseEvent} e
   */
  cellAt(e) {
    const rect = this.canvas.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    const { pad, span } = this.geometry(rect.width);
    const col = Math.floor((x - pad) / (span / 3));
    const row = Math.floor((y - pad) / (span / 3));
    if (col < 0 || col > 2 || row < 0 || row > 2) return -1;
    return row * 3 + col;
  }

  /** @param {number} cell */
  setHover(cell) {
    if (cell === this.hover) return;
    this.hover = cell;
    const playable = cell >= 0 && this.state.interactive && this.state.board[cell] === '-';
    this.canvas.style.cursor = playable ? 'pointer' : 'default';
    this.draw();
  }

  /** @param {number} size CSS pixels */
  geometry(size) {
    const pad = size * 0.02;
    const gap = size * 0.028;
    const span = size - 2 * pad;
    const tile = (span - 2 * gap) / 3;
    return { pad, gap, span, tile };
  }

  /** @param {number} cell @param {number} size */
  tileRect(cell, size) {
    const { pad, gap, tile } = this.geometry(size);
    const x = pad + (cell % 3) * (tile + gap);
    const y = pad + Math.floor(cell / 3) * (tile + gap);
    return { x, y, w: tile, cx: x + tile / 2, cy: y + tile / 2 };
  }

  draw() {
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => this.paint());
  }

  paint() {
    const size = this.element.clientWidth;
    if (!size) return;
    const dpr = window.devicePixelRatio || 1;
    const pixels = Math.round(size * dpr);
    if (this.canvas.width !== pixels || this.canvas.height !== pixels) {
      this.canvas.width = pixels;
      this.canvas.height = pixels;
    }
    const ctx = this.ctx;
    ctx.setTransform(pixels / size, 0, 0, pixels / size, 0, 0);
    ctx.clearRect(0, 0, size, size);
    const css = getComputedStyle(this.element);
    const color = (/** @type {string} */ name) => css.getPropertyValue(name).trim() || '#888';
    const now = performance.now();
    let animating = false;
    const { board, winCells, lastCell, interactive, ghost, owners, game } = this.state;
    const win = new Set(winCells);
    const winProgress = this.winSince ? Math.min(1, (now - this.winSince) / 320) : 1;
    if (winProgress < 1) animating = true;

    // A won line's squares are joined into one red shape, under the tiles: the win shows
    // by shape as well as by colour.
    if (winCells.length && winProgress > 0) this.drawWinBands(size, winProgress, color('--win'));
    for (let cell = 0; cell < 9; cell++) {
      const r = this.tileRect(cell, size);
      const radius = r.w * 0.16;
      ctx.beginPath();
      ctx.roundRect(r.x, r.y, r.w, r.w, radius);
      const hovered = interactive && cell === this.hover && board[cell] === '-';
      // A won square, once shown, is red alone: a light tile under it would fringe its edge.
      if (!win.has(cell) || winProgress < 1) {
        ctx.fillStyle = color(hovered ? '--tile-hover' : '--tile');
        ctx.fill();
      }
      if (win.has(cell)) {
        ctx.save();
        ctx.globalAlpha = winProgress;
        ctx.fillStyle = color('--win');
        ctx.fill();
        ctx.restore();
      }
      if (cell === lastCell && !win.has(cell)) {
        ctx.save();
        ctx.lineWidth = Math.max(2, r.w * 0.025);
        ctx.strokeStyle = color('--last');
        ctx.globalAlpha = 0.55;
        ctx.beginPath();
        ctx.roundRect(r.x + ctx.lineWidth / 2, r.y + ctx.lineWidth / 2, r.w - ctx.lineWidth, r.w - ctx.lineWidth, radius);
        ctx.stroke();
        ctx.restore();
      }
      if (cell === lastCell) {
        ctx.beginPath();
        ctx.arc(r.x + r.w * 0.86, r.y + r.w * 0.14, r.w * 0.045, 0, Math.PI * 2);
        ctx.fillStyle = win.has(cell) ? color('--on-win') : color('--last');
        ctx.fill();
      }
      const mark = board[cell];
      if (mark !== '-') {
        const started = this.appearing.get(cell);
        let t = 1;
        if (started !== undefined) {
          t = Math.min(1, (now - started) / ANIMATION_MS);
          if (t >= 1) this.appearing.delete(cell);
          else animating = true;
        }
        const markColor = win.has(cell) && winProgress > 0.5 ? color('--on-win') : this.markColor(game, mark, owners[cell], color);
        this.drawMark(mark, game, r.cx, r.cy, r.w, markColor, easeOutBack(t), Math.min(1, t * 1.6));
      } else if (hovered && ghost) {
        this.drawMark(ghost, game, r.cx, r.cy, r.w, this.markColor(game, ghost, null, color), 1, 0.22);
      }
      const refused = now - this.refusedAt;
      if (cell === this.refusedCell && refused < 700) {
        // A refused play: the square's outline flashes twice in the warning colour.
        ctx.save();
        ctx.lineWidth = 4;
        ctx.globalAlpha = Math.abs(Math.sin((refused / 700) * Math.PI * 2));
        ctx.strokeStyle = color('--warn');
        ctx.beginPath();
        ctx.roundRect(r.x + 2, r.y + 2, r.w - 4, r.w - 4, radius * 0.9);
        ctx.stroke();
        ctx.restore();
        animating = true;
      }
      if (this.focusVisible && cell === this.focused) {
        ctx.save();
        ctx.lineWidth = 3;
        ctx.setLineDash([6, 4]);
        ctx.strokeStyle = color('--focus');
        ctx.beginPath();
        ctx.roundRect(r.x + 3, r.y + 3, r.w - 6, r.w - 6, radius * 0.8);
        ctx.stroke();
        ctx.restore();
      }
    }
    if (animating) this.frame = requestAnimationFrame(() => this.paint());
  }

  /**
   * @param {GameKind} game
   * @param {string} mark
   * @param {0 | 1 | null} owner
   * @param {(name: string) => string} color
   */
  markColor(game, mark, owner, color) {
    if (game === 'sos') return owner === 1 ? color('--p2') : color('--p1');
    return mark === 'X' ? color('--p1') : color('--p2');
  }

  /**
   * @param {string} mark
   * @param {GameKind} game
   * @param {number} cx @param {number} cy @param {number} w
   * @param {string} fill
   * @param {number} scale @param {number} alpha
   */
  drawMark(mark, game, cx, cy, w, fill, scale, alpha) {
    const ctx = this.ctx;
    ctx.save();
    ctx.globalAlpha = alpha;
    ctx.translate(cx, cy);
    ctx.scale(scale, scale);
    ctx.strokeStyle = fill;
    ctx.fillStyle = fill;
    ctx.lineCap = 'round';
    ctx.lineWidth = w * 0.1;
    if (game === 'tic-tac-toe' && mark === 'X') {
      const r = w * 0.25;
      ctx.beginPath();
      ctx.moveTo(-r, -r);
      ctx.lineTo(r, r);
      ctx.moveTo(r, -r);
      ctx.lineTo(-r, r);
      ctx.stroke();
    } else if (game === 'tic-tac-toe') {
      ctx.beginPath();
      ctx.arc(0, 0, w * 0.26, 0, Math.PI * 2);
      ctx.stroke();
    } else {
      ctx.font = `750 ${Math.round(w * 0.6)}px "Inter Variable", "Inter", system-ui, sans-serif`;
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText(mark, 0, w * 0.035);
    }
    ctx.restore();
  }

  /**
   * A band joining the squares of each winning line (the lines whose three squares all
   * won), drawn before the tiles so that it shows in the gaps between them.
   * @param {number} size @param {number} progress @param {string} fill
   */
  drawWinBands(size, progress, fill) {
    const ctx = this.ctx;
    const win = new Set(this.state.winCells);
    const { board, game } = this.state;
    for (const [a, b, c] of LINES) {
      if (!win.has(a) || !win.has(b) || !win.has(c)) continue;
      const formed = game === 'sos'
        ? board[a] === 'S' && board[b] === 'O' && board[c] === 'S'
        : board[a] !== '-' && board[a] === board[b] && board[b] === board[c];
      if (!formed) continue;
      const p = this.tileRect(a, size);
      const q = this.tileRect(c, size);
      ctx.save();
      ctx.globalAlpha = progress;
      ctx.strokeStyle = fill;
      ctx.lineCap = 'round';
      ctx.lineWidth = p.w * 0.46;
      ctx.beginPath();
      ctx.moveTo(p.cx, p.cy);
      ctx.lineTo(p.cx + (q.cx - p.cx) * progress, p.cy + (q.cy - p.cy) * progress);
      ctx.stroke();
      ctx.restore();
    }
  }
}

/** @param {number} t 0..1 */
function easeOutBack(t) {
  const c = 1.4;
  return 1 + (c + 1) * Math.pow(t - 1, 3) + c * Math.pow(t - 1, 2);
}
