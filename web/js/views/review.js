// @ts-check
/**
 * A game's review: step through the moves (buttons, a slider, the arrow keys, Home and
 * End), and see after each one the solver's value of the position, the best moves there,
 * each move's judgement (best, inaccuracy, mistake) and each player's accuracy.
 *
 * Two sources, one screen: a finished match (`/review/7`, from `GET
 * /api/matches/7/review`) or any moves from the empty board (`/review?game=sos&moves=S5,O1`,
 * from `GET /api/review/sos?moves=…`: a local game, or a shared one). `?ply=N` opens it at
 * a move, and the address follows the move shown, so the address is always the share link.
 * A record in Triad's notation (a downloaded match) opens from a file, through
 * `POST /api/review`, and goes to its review by moves.
 * @module
 */

import { api, ApiError } from '../api.js';
import { BoardView } from '../board.js';
import { announce, copyText, h, ICONS, icon, replace, toast } from '../dom.js';
import { gameName, shortAddress } from '../format.js';
import { outcomeOf, ownersOf } from '../rules.js';
import { reviewOf } from '../solver.js';

/**
 * @typedef {import('../rules.js').GameKind} GameKind
 * @typedef {import('../session.js').MatchView} MatchView
 * @typedef {{ verdict: 'win' | 'draw' | 'loss', plies: number, winner: 'first' | 'second' | null }} PositionValue
 * @typedef {{ verdict: 'win' | 'draw' | 'loss', plies: number }} MoveWorth
 * @typedef {{ ply: number, player: 'first' | 'second', cell: number, square: number, mark: string,
 *   judgement: 'best' | 'inaccuracy' | 'mistake', best_value: MoveWorth, played_value: MoveWorth,
 *   best: { cell: number, mark: string }[], board: string, value: PositionValue }} PlyView
 * @typedef {{ moves: number, mistakes: number, inaccuracies: number, percent: number | null }} AccuracyView
 * @typedef {{ game: GameKind, start: PositionValue, plies: PlyView[],
 *   accuracy: { first: AccuracyView, second: AccuracyView }, match?: MatchView }} ReviewView
 */

/** The judgements' signs, as chess annotates moves. */
const SIGN = { best: '', inaccuracy: '?!', mistake: '?' };

/**
 * @param {HTMLElement} root
 * @param {import('../main.js').ViewContext} ctx
 * @returns {() => void}
 */
export function mount(root, ctx) {
  const matchId = ctx.params.id ?? null;
  /** @type {ReviewView | null} */
  let review = null;
  let ply = 0;

  const title = h('h1', { class: 'page-title', text: 'Review' });
  const subtitle = h('p', { class: 'page-sub' });
  const boardView = new BoardView({ label: 'Review board', onPlay: () => {} });
  const verdict = h('p', { class: 'review-verdict', role: 'status' });
  const bestLine = h('p', { class: 'review-best' });
  const slider = /** @type {HTMLInputElement} */ (
    h('input', { type: 'range', class: 'review-slider', min: '0', max: '0', step: '1', value: '0', 'aria-label': 'Move' })
  );
  slider.addEventListener('input', () => show(Number(slider.value)));
  /** @param {string} label @param {string[]} paths @param {() => number} target */
  const stepButton = (label, paths, target) =>
    h('button', { class: 'icon-btn', type: 'button', title: label, 'aria-label': label, onclick: () => show(target()) }, icon(paths));
  const controls = h(
    'div',
    { class: 'review-controls' },
    stepButton('First position', ['M6 5v14', 'M18 6l-8 6 8 6z'], () => 0),
    stepButton('Previous move', ['M15 6l-6 6 6 6'], () => ply - 1),
    slider,
    stepButton('Next move', ['M9 6l6 6-6 6'], () => ply + 1),
    stepButton('Last move', ['M18 5v14', 'M6 6l8 6-8 6z'], () => review?.plies.length ?? 0),
  );
  const moveList = h('ol', { class: 'review-moves', 'aria-label': 'Moves' });
  const accuracy = h('div', { class: 'review-accuracy' });
  const share = h('button', { class: 'btn', type: 'button', onclick: () => shareLink() }, icon(ICONS.copy), 'Copy link to this move');
  const errorBox = h('div', { class: 'card not-found', hidden: true });
  // Open a record in Triad's notation (a downloaded match, `triad export`): the server
  // reads it, and the page goes to its review by moves, which is its share link.
  const importError = h('p', { class: 'inline-error', role: 'alert', hidden: true });
  const fileInput = /** @type {HTMLInputElement} */ (
    h('input', { type: 'file', id: 'review-file', class: 'visually-hidden', accept: '.txt,.tnt,text/plain', onchange: () => openRecord() })
  );
  const importControl = h(
    'div',
    { class: 'review-import' },
    fileInput,
    h('label', { class: 'btn', for: 'review-file' }, icon(ICONS.upload), 'Open a record…'),
    importError,
  );
  const stage = h('div', { class: 'stage' }, verdict, h('div', { class: 'board-host' }, boardView.element), controls, bestLine);
  const side = h('aside', { class: 'panel card review-panel' }, h('h2', { class: 'panel-title', text: 'Moves' }), moveList, accuracy, h('div', { class: 'result-actions' }, share), importControl);
  const layout = h('div', { class: 'play-layout' }, stage, side);
  replace(root, h('section', { class: 'view view-review' }, h('div', { class: 'page-head' }, title, subtitle), layout, errorBox));

  /** @param {KeyboardEvent} e */
  function onKey(e) {
    if (!review || e.altKey || e.ctrlKey || e.metaKey) return;
    const target = /** @type {HTMLElement | null} */ (e.target);
    if (target && target !== slider && /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) return;
    const to = { ArrowLeft: ply - 1, ArrowRight: ply + 1, Home: 0, End: review.plies.length }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    show(to);
  }
  document.addEventListener('keydown', onKey);

  /** The side's name: X and O in tic-tac-toe, the player in SOS. @param {'first' | 'second' | null} who */
  function sideName(who) {
    if (!review || who === null) return '';
    const seat = review.match?.players?.[who === 'first' ? 0 : 1];
    const person = seat?.kind === 'computer' ? 'the computer' : seat?.address ? shortAddress(seat.address) : null;
    if (review.game === 'tic-tac-toe') return who === 'first' ? 'X' : 'O';
    return person ?? (who === 'first' ? 'First player' : 'Second player');
  }

  /** The value in words: who wins with best play, and how soon. @param {PositionValue} v @param {boolean} over */
  function valueText(v, over) {
    if (over) return v.winner ? `${sideName(v.winner)} won.` : 'Drawn: the board is full.';
    if (!v.winner) return `Draw with best play (${v.plies} marks to go).`;
    const moves = Math.ceil(v.plies / 2);
    return `${sideName(v.winner)} wins with best play, in ${moves} move${moves === 1 ? '' : 's'} (${v.plies} ${v.plies === 1 ? 'mark' : 'marks'}).`;
  }

  /** Who wins, in one or two characters. @param {'first' | 'second' | null} who */
  function chipText(who) {
    if (who === null) return '=';
    if (review?.game === 'tic-tac-toe') return who === 'first' ? 'X' : 'O';
    return who === 'first' ? '1st' : '2nd';
  }

  /** How a match ended off the board (a forfeit, a timeout, …). @param {import('../session.js').OutcomeView} o */
  function matchEnd(o) {
    return o.winner ? `${sideName(o.winner)} won by ${o.reason}.` : `The match ended: ${o.reason}.`;
  }

  /** @param {number} to */
  function show(to) {
    if (!review) return;
    const r = review;
    ply = Math.max(0, Math.min(r.plies.length, to));
    const current = ply ? r.plies[ply - 1] : null;
    const board = current ? current.board : '---------';
    const outcome = outcomeOf(r.game, board);
    boardView.set({
      game: r.game,
      board,
      lastCell: current ? current.cell : null,
      winCells: outcome?.cells ?? [],
      interactive: false,
      ghost: null,
      owners: ownersOf(r.plies.slice(0, ply).map((p) => p.cell)),
    });
    slider.value = String(ply);
    slider.setAttribute('aria-valuetext', current ? `Move ${ply} of ${r.plies.length}` : 'The empty board');
    const value = current ? current.value : r.start;
    replace(
      verdict,
      h('span', { class: `verdict-chip is-${value.winner ?? 'draw'}`, 'aria-hidden': 'true', text: chipText(value.winner) }),
      ' ',
      ply === r.plies.length && outcome === null && r.match?.outcome ? matchEnd(r.match.outcome) : valueText(value, outcome !== null),
    );
    // What the next move should be, and what the move shown was worth.
    const next = r.plies[ply];
    const parts = [];
    if (current) {
      const worth = current.judgement === 'best' ? 'the best move' : current.judgement === 'mistake' ? 'a mistake' : 'an inaccuracy';
      parts.push(h('span', { class: `judgement is-${current.judgement}`, text: `${current.mark}${current.square} was ${worth}.` }));
      if (current.judgement !== 'best') parts.push(` Best was ${bestText(current.best)}.`);
    }
    if (next) parts.push(` Best now: ${bestText(next.best)}.`);
    replace(bestLine, ...parts);
    for (const item of moveList.querySelectorAll('[aria-current]')) item.removeAttribute('aria-current');
    moveList.querySelector(`[data-ply="${ply}"]`)?.setAttribute('aria-current', 'step');
    history.replaceState(null, '', linkTo(ply));
    announce(current ? `Move ${ply}: ${current.mark} on square ${current.square}, ${current.judgement}. ${valueText(value, outcome !== null)}` : 'The empty board.');
  }

  /** @param {{ cell: number, mark: string }[]} moves */
  function bestText(moves) {
    const items = moves.map((m) => `${m.mark}${m.cell + 1}`);
    return items.length > 4 ? `${items.slice(0, 4).join(', ')} or ${items.length - 4} more` : items.join(' or ');
  }

  /** This page's address at a move. @param {number} at */
  function linkTo(at) {
    const query = new URLSearchParams(matchId ? {} : { game: review?.game ?? 'tic-tac-toe', moves: (review?.plies ?? []).map((p) => `${p.mark}${p.square}`).join(',') });
    query.set('ply', String(at));
    return `${matchId ? `/review/${matchId}` : '/review'}?${query}`;
  }

  async function shareLink() {
    const ok = await copyText(new URL(linkTo(ply), location.origin).href);
    toast(ok ? 'Link copied: it opens the review at this move.' : 'Could not copy the link.', { kind: ok ? 'success' : 'error' });
  }

  function render() {
    if (!review) return;
    const r = review;
    title.textContent = matchId ? `Review of match ${matchId}` : 'Review';
    subtitle.textContent = `${gameName(r.game)} · ${r.plies.length} move${r.plies.length === 1 ? '' : 's'}`;
    slider.max = String(r.plies.length);
    replace(
      moveList,
      h('li', { 'data-ply': '0' }, h('button', { type: 'button', class: 'move-btn', onclick: () => show(0), text: 'Start' })),
      ...r.plies.map((p) =>
        h(
          'li',
          { 'data-ply': String(p.ply) },
          h(
            'button',
            // The name starts with the text on the button, so speech input finds it, and
            // spells out the judgement its sign stands for.
            {
              type: 'button',
              class: `move-btn is-${p.judgement}`,
              onclick: () => show(p.ply),
              'aria-label': `${p.ply}. ${p.mark}${p.square}${SIGN[p.judgement] ?? ''}, ${p.judgement}`,
              title: `Move ${p.ply}: ${p.mark} on square ${p.square}, ${p.judgement}`,
            },
            h('span', { class: 'move-no', text: `${p.ply}.` }),
            ` ${p.mark}${p.square}`,
            SIGN[p.judgement] ? h('span', { class: 'move-sign', text: SIGN[p.judgement] }) : null,
          ),
        ),
      ),
    );
    /** @param {'first' | 'second'} who */
    const card = (who) => {
      const a = r.accuracy[who];
      return h(
        'div',
        { class: 'stat', 'data-side': who },
        h('span', { class: 'stat-value', text: a.percent === null ? '–' : `${a.percent}%` }),
        h('span', { class: 'stat-label', text: `${sideName(who)} accuracy` }),
        h('span', { class: 'stat-hint', text: `${a.mistakes} mistake${a.mistakes === 1 ? '' : 's'}, ${a.inaccuracies} inaccurac${a.inaccuracies === 1 ? 'y' : 'ies'}` }),
      );
    };
    replace(accuracy, card('first'), card('second'));
    const wanted = Number(ctx.query.get('ply'));
    show(ctx.query.has('ply') && Number.isInteger(wanted) ? wanted : r.plies.length);
  }

  /**
   * The review of `X5,O1,…` by the solver in the page.
   * @param {string} game
   * @param {string} moves
   * @returns {ReviewView}
   */
  function localReview(game, moves) {
    if (game !== 'tic-tac-toe' && game !== 'sos') throw new Error('The game is tic-tac-toe or sos.');
    const list = moves
      ? moves.split(',').map((item, i) => {
          const mark = item.trim().charAt(0).toUpperCase();
          const square = Number(item.trim().slice(1));
          if (!['X', 'O', 'S'].includes(mark) || !Number.isInteger(square) || square < 1 || square > 9) {
            throw new Error(`Move ${i + 1} (${item}) is not a mark and a square 1-9, such as X5 or S1.`);
          }
          return { cell: square - 1, mark: /** @type {import('../rules.js').Mark} */ (mark) };
        })
      : [];
    return reviewOf(game, list);
  }

  async function openRecord() {
    const file = fileInput.files?.[0];
    if (!file) return;
    importError.hidden = true;
    try {
      if (file.size > 64 * 1024) throw new Error('This file is too large to be a record of one game.');
      /** @type {ReviewView} */
      const imported = await api('POST', '/api/review', { notation: await file.text() }, { auth: false });
      const moves = imported.plies.map((p) => `${p.mark}${p.square}`).join(',');
      ctx.navigate(`/review?${new URLSearchParams({ game: imported.game, moves })}`);
      announce(`Opened ${file.name}.`);
    } catch (e) {
      importError.textContent = `${file.name}: ${e instanceof Error ? e.message : String(e)}`;
      importError.hidden = false;
    } finally {
      fileInput.value = '';
    }
  }

  /** @param {string} message */
  function fail(message) {
    layout.hidden = true;
    errorBox.hidden = false;
    replace(errorBox, h('h2', { text: 'No review' }), h('p', { text: message }), h('a', { class: 'btn', href: matchId ? `/match/${matchId}` : '/', text: matchId ? 'Open the match' : 'Play a game' }));
  }

  (async () => {
    try {
      if (matchId) {
        review = await api('GET', `/api/matches/${matchId}/review`, undefined, { auth: false });
      } else {
        const game = ctx.query.get('game') ?? 'tic-tac-toe';
        const moves = ctx.query.get('moves') ?? '';
        try {
          review = await api('GET', `/api/review/${encodeURIComponent(game)}?moves=${encodeURIComponent(moves)}`, undefined, { auth: false });
        } catch (e) {
          // With no server (offline), the solver in the page reviews the game alike.
          if (!(e instanceof ApiError && e.error === 'network')) throw e;
          review = localReview(game, moves);
        }
      }
      render();
    } catch (e) {
      fail(e instanceof Error ? e.message : String(e));
    }
  })();

  return () => {
    document.removeEventListener('keydown', onKey);
    boardView.destroy();
  };
}
