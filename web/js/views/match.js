// @ts-check
/**
 * An online match: play it (when you are seated) or watch it, read-only.
 *
 * The match topic (`match:<id>`, from its first event) drives everything: each event
 * triggers one refetch of `GET /api/matches/{id}` (the server's view is the truth; the
 * event is the signal), and a move is drawn at once from the event itself. After a
 * dropped connection the realtime client resubscribes from the last event seen, so the
 * board catches up by itself. The stake's movements (the `transferred` events of the
 * match) give the exact amount won or refunded.
 *
 * The controls follow the rules: resign while the match is on; claim the win once the
 * opponent's time is up (the button appears then, after a countdown), only for the last
 * mover; cancel with full refunds when the first move never came; rematch once it ended.
 * @module
 */

import { api, ApiError } from '../api.js';
import { BoardView } from '../board.js';
import { every, serverNow } from '../clock.js';
import { announce, h, ICONS, icon, letterForKey, letterPicker, pageKeys, replace, toast } from '../dom.js';
import { formatAmount, formatCountdown, gameName, shortAddress } from '../format.js';
import { knownName, playerLabel, profileOf, rememberProfile } from '../identity.js';
import { downloadRecord } from '../notation.js';
import { realtime } from '../realtime.js';
import { outcomeOf, ownersOf } from '../rules.js';
import { headSeq, myAddress, onInbox, onSession, signMove } from '../session.js';

/**
 * @typedef {import('../session.js').MatchView} MatchView
 * @typedef {import('../realtime.js').ServerEvent} ServerEvent
 * @typedef {import('../rules.js').Mark} Mark
 */

const PLAYED = new Set(['win', 'draw', 'forfeit', 'timeout']);

const PHASE_ORDER = { waiting: 0, ready: 1, in_progress: 2, finished: 3 };

/**
 * Whether `answer` shows the match at an earlier point than `shown`. A match only moves
 * forward: its moves, its phase, and its last activity (a command's time, or later when an
 * outage is given back) never go back. Answers can arrive out of order (a read sent before
 * my move may be answered after it), and an older one must not take the place of what is
 * drawn: it would offer a turn already played.
 * @param {MatchView} answer
 * @param {MatchView | null} shown
 */
export function isOlder(answer, shown) {
  if (!shown || answer.id !== shown.id) return false;
  if (answer.seq !== shown.seq) return answer.seq < shown.seq;
  if (answer.phase !== shown.phase) return PHASE_ORDER[answer.phase] < PHASE_ORDER[shown.phase];
  return answer.last_activity_ms < shown.last_activity_ms;
}

/**
 * What the status line says while the connection is down and the countdown is paused.
 * @param {import('../realtime.js').Status} status
 */
function pausedText(status) {
  return status === 'offline' ? 'You are offline: the clock shown is paused until you reconnect' : 'Server unreachable: the clock is paused';
}

/**
 * @param {HTMLElement} root
 * @param {{ params: Record<string, string>, navigate: (path: string) => void, section: (nav: string) => void }} ctx
 * @returns {() => void}
 */
export function mount(root, ctx) {
  const id = Number(ctx.params.id);
  /** @type {MatchView | null} */
  let view = null;
  /** The name of the tournament that paired this match: null until asked for. @type {string | null} */
  let tournamentName = null;
  /** @type {string | null} */
  let loadError = null;
  let pending = false;
  /** @type {Mark} */
  let sosMark = 'S';
  let confirmResign = false;
  /** @type {number} */
  let confirmTimer = 0;
  /** The money the match moved, per address (credits minus debits). @type {Map<string, bigint>} */
  const net = new Map();
  let announcedEnd = false;

  const boardView = new BoardView({
    label: `Match ${id} board`,
    onPlay: (cell) => move(cell),
    onRefuse: (_cell, taken) => refusal(taken),
    onKey: (e) => pickKey(e.key),
  });
  const status = h('div', { class: 'status' });
  const banner = h('div', { class: 'result-banner', hidden: true });
  const picker = h('div', { class: 'mark-picker', hidden: true });
  const actions = h('div', { class: 'match-actions' });
  const side = h('aside', { class: 'panel card' });
  const stage = h('div', { class: 'stage' }, status, banner, h('div', { class: 'board-host' }, boardView.element), picker, actions);
  const layout = h('div', { class: 'play-layout' }, stage, side);
  /** Shown instead of the board when the match cannot be loaded. */
  const failed = h('div', { class: 'card not-found', hidden: true });
  replace(root, h('section', { class: 'view view-match' }, layout, failed));

  /** My seat: 0 first, 1 second, or null (watching). */
  const mySeat = () => {
    const me = myAddress();
    if (!view?.players || !me) return null;
    const i = view.players.findIndex((p) => p.address === me);
    return i < 0 ? null : /** @type {0 | 1} */ (i);
  };
  const seatName = (/** @type {0 | 1} */ i) => {
    const seat = view?.players?.[i];
    if (!seat) return i === 0 ? 'First player' : 'Second player';
    if (seat.kind === 'computer') return `Computer (${seat.level})`;
    if (i === mySeat()) return 'You';
    return knownName(seat.address ?? '') ?? shortAddress(seat.address ?? '');
  };
  const glyph = (/** @type {0 | 1} */ i) => (view?.game === 'sos' ? String(i + 1) : i === 0 ? 'X' : 'O');
  const turnSeat = () => (view?.turn === 'first' ? 0 : view?.turn === 'second' ? 1 : null);
  const isMyTurn = () => {
    const mine = mySeat();
    return mine !== null && turnSeat() === mine && (view?.phase === 'ready' || view?.phase === 'in_progress');
  };

  /** @param {string} key */
  function pickKey(key) {
    const letter = view?.game !== 'sos' ? null : letterForKey(key, sosMark);
    if (!letter) return false;
    sosMark = letter;
    announce(`Placing ${sosMark}`);
    render();
    return true;
  }

  let refetchTimer = 0;
  let refetching = false;
  let refetchAgain = false;
  /** The server says there is no such match: nothing more to fetch or follow. */
  let gone = false;
  function refetchSoon() {
    window.clearTimeout(refetchTimer);
    refetchTimer = window.setTimeout(refetch, 30);
  }
  async function refetch() {
    if (gone) return;
    if (refetching) {
      refetchAgain = true;
      return;
    }
    refetching = true;
    try {
      const resuming = resumeOnSync;
      /** @type {MatchView} */
      const latest = await api('GET', `/api/matches/${id}`);
      if (!isOlder(latest, view)) view = latest;
      loadError = null;
      // A tournament's game belongs to the Tournaments section.
      if (view?.tournament) ctx.section('tournaments');
      // Read after the reconnect: the deadline is the server's again, outage given back.
      if (resuming && resumeOnSync) {
        resumeOnSync = false;
        pausedAt = null;
      }
      // The players' names and bot marks come with their seats; kept for every label.
      for (const seat of view?.players ?? []) {
        if (!seat.address) continue;
        if (seat.bot !== undefined) rememberProfile(seat.address, { name: seat.name ?? null, bot: seat.bot });
        else if (knownName(seat.address) === null) profileOf(seat.address).then((p) => p.name && render(), () => {});
      }
    } catch (e) {
      if (!view) loadError = e instanceof Error ? e.message : String(e);
      if (!view && e instanceof ApiError && e.status === 404) {
        gone = true;
        stopTopic();
      }
    } finally {
      refetching = false;
    }
    render();
    if (refetchAgain) {
      refetchAgain = false;
      refetch();
    }
  }

  /** @param {ServerEvent} event @param {{ live: boolean }} info */
  function onEvent(event, info) {
    const kind = event.kind;
    if (kind.type === 'transferred') {
      const t = kind.transfer;
      // A decimal string: exact past 2^53, where a JSON number would already be rounded.
      const amount = BigInt(t.amount);
      if (t.to?.kind === 'player') net.set(t.to.id, (net.get(t.to.id) ?? 0n) + amount);
      if (t.from?.kind === 'player') net.set(t.from.id, (net.get(t.from.id) ?? 0n) - amount);
    }
    if (!info.live) return;
    if (kind.type === 'moved' && view && kind.seq === view.seq + 1) {
      // Draw the move now; the refetch brings the rest (turn, deadline, outcome). A move
      // that ends the game by the rules leaves nobody to move meanwhile: offering the turn
      // there would send a move the server refuses (the game is over).
      const cell = Number(kind.cell);
      const board = view.board.slice(0, cell) + kind.mark + view.board.slice(cell + 1);
      view = {
        ...view,
        board,
        seq: kind.seq,
        moves: [...view.moves, { seq: kind.seq, cell, mark: kind.mark, player: kind.player }],
        turn: outcomeOf(view.game, board) ? null : kind.player === 'first' ? 'second' : 'first',
      };
      const who = seatName(kind.player === 'first' ? 0 : 1);
      announce(`${who === 'You' ? 'You' : who} placed ${kind.mark} in square ${cell + 1}.`);
      render();
    }
    if (kind.type === 'rematch_offered' && view) {
      const by = kind.by === 'first' ? 0 : 1;
      if (by !== mySeat()) {
        const text = `${seatName(by)} offers a rematch.`;
        announce(text);
        if (mySeat() !== null) toast(text);
      }
    }
    refetchSoon();
  }

  // While the realtime connection is down the server may be down too, and an outage of the
  // server costs nobody time: when it comes back it gives the time back to every clock. So
  // the countdown is shown paused at the time left when the connection dropped, rather
  // than running on to 0:00 as if the time were lost; after the reconnect the match is read
  // again, and the countdown goes on from the deadline the server then reports.
  /** @type {number | null} the server's time when the connection dropped, while paused */
  let pausedAt = null;
  let resumeOnSync = false;
  let wasOpen = false;
  const stopStatus = realtime.onStatus((status) => {
    if (status === 'open') {
      wasOpen = true;
      if (pausedAt !== null) resumeOnSync = true;
    } else if (status !== 'connecting' && wasOpen && pausedAt === null) {
      pausedAt = serverNow();
      resumeOnSync = false;
      if (view?.deadline && (view.phase === 'ready' || view.phase === 'in_progress')) announce(pausedText(status));
      renderClock();
    }
  });

  const stopTopic = realtime.subscribe(`match:${id}`, 0, {
    onEvent,
    onSynced: ({ missed }) => {
      // The first sync loads the match (a later one retries a load that failed, unless
      // the match does not exist), then refetches only what was missed, or everything
      // after the connection was down (the deadlines may have moved).
      if (missed || resumeOnSync || (!view && !refetching)) refetch();
    },
  });
  const stopInbox = onInbox((event) => {
    const k = event.kind;
    if (k.type === 'game_started' && k.origin?.kind === 'rematch' && Number(k.origin.of) === id) {
      announce('The rematch has started.');
      ctx.navigate(`/match/${k.match_id}`);
    }
  });
  // A spectator follows the players to their rematch: it starts on the lobby topic (the
  // players learn of it from their inbox). Watched only once this match has ended. The match
  // is read again once the subscription stands, so a rematch that began between the first
  // read and the lobby's head is followed too.
  let stopLobby = () => {};
  let followingRematch = false;
  let followed = false;
  let unmounted = false;
  /** @param {number | string} rematchId */
  function goToRematch(rematchId) {
    if (followed || unmounted || mySeat() !== null) return;
    followed = true;
    announce('The rematch has started.');
    ctx.navigate(`/match/${rematchId}`);
  }
  function followRematch() {
    if (followingRematch) return;
    followingRematch = true;
    headSeq()
      .catch(() => 0)
      .then((since) => {
        if (unmounted) return;
        stopLobby = realtime.subscribe('lobby', since, {
          onEvent: (event) => {
            const k = event.kind;
            if (k.type === 'game_started' && k.origin?.kind === 'rematch' && Number(k.origin.of) === id) goToRematch(k.match_id);
          },
        });
        return api('GET', `/api/matches/${id}`).then((latest) => {
          if (latest.rematch) goToRematch(latest.rematch);
        });
      })
      .catch(() => {});
  }
  const stopSession = onSession(() => render());
  // The countdowns tick in step with the deadline shown (`every`'s anchor); a new
  // deadline (a move, a start) sets the ticker again, so its first second is whole too.
  let tickAnchor = 0;
  let stopTicker = every(() => renderClock(), 1000, () => tickAnchor);
  function alignTicker() {
    const anchor = view?.deadline?.at_ms ?? 0;
    if (anchor === tickAnchor) return;
    tickAnchor = anchor;
    stopTicker();
    stopTicker = every(() => renderClock(), 1000, () => tickAnchor);
  }

  /**
   * Why a square cannot be played now, or null when there is nothing to say.
   * @param {boolean} taken
   */
  function refusal(taken) {
    if (!view) return null;
    if (view.phase === 'finished') return 'The match is over';
    if (mySeat() === null) return 'You are watching this match';
    if (taken) return 'That square is taken';
    if (pending) return 'Sending your move…';
    if (view.phase === 'ready' || view.phase === 'in_progress') return `Wait for your opponent's move`;
    return null;
  }

  /** @param {number} cell */
  async function move(cell) {
    if (!view) return;
    if (pending || !isMyTurn() || view.board[cell] !== '-') {
      boardView.refuse(cell, view.board[cell] !== '-');
      return;
    }
    const mine = mySeat();
    const mark = view.game === 'sos' ? sosMark : mine === 0 ? 'X' : 'O';
    pending = true;
    render();
    try {
      const seq = view.seq + 1;
      // Signed with the wallet's key, so the transcript proves the move was mine.
      const signature = await signMove(id, seq, cell, mark);
      /** @type {{ match: MatchView | null }} */
      const result = await api('POST', `/api/matches/${id}/moves`, { seq, cell, mark, ...(signature ? { signature } : {}) });
      // The opponent's reply may already have come live (and been drawn): an answer older
      // than the view on screen must not take its place.
      if (result.match && !isOlder(result.match, view)) view = result.match;
      // The live event of a winning move may have come first and announced the result:
      // the placement must not take its place.
      if (!announcedEnd) announce(`You placed ${mark} in square ${cell + 1}.`);
    } catch (e) {
      toast(e instanceof Error ? e.message : String(e), { kind: 'error' });
      refetchSoon();
    } finally {
      pending = false;
      render();
    }
  }

  /**
   * Runs a match command and shows the result.
   * @param {string} path
   * @param {string} done what to announce
   */
  async function command(path, done) {
    pending = true;
    render();
    try {
      /** @type {{ match: MatchView | null }} */
      const result = await api('POST', path);
      if (result.match && result.match.id === id && !isOlder(result.match, view)) view = result.match;
      announce(done);
      if (result.match && result.match.id !== id) ctx.navigate(`/match/${result.match.id}`);
    } catch (e) {
      toast(e instanceof Error ? e.message : String(e), { kind: 'error' });
    } finally {
      pending = false;
      render();
    }
  }

  function resultTitle() {
    if (!view?.outcome) return '';
    const o = view.outcome;
    const mine = mySeat();
    const winner = o.winner === 'first' ? 0 : o.winner === 'second' ? 1 : null;
    switch (o.reason) {
      case 'draw':
        return 'Draw';
      case 'win':
      case 'forfeit':
      case 'timeout': {
        if (winner === null) return 'Over';
        const how = o.reason === 'forfeit' ? ' by resignation' : o.reason === 'timeout' ? ' on time' : '';
        if (mine !== null) return winner === mine ? `You won${how}!` : `You lost${how}`;
        return `${view.game === 'sos' ? seatName(winner) : `${glyph(winner)} · ${seatName(winner)}`} won${how}`;
      }
      case 'cancelled':
        return 'Cancelled';
      case 'declined':
        return 'Challenge declined';
      case 'expired':
        return 'Challenge expired';
      case 'aborted':
        return 'Aborted: the first move never came';
      default:
        return 'Over';
    }
  }

  /**
   * How the result reads for whoever looks: `win` or `loss` for a player, `draw`, and
   * `over` for anything else (a spectator's view of a win, a cancelled match).
   * @returns {'win' | 'loss' | 'draw' | 'over'}
   */
  function resultKind() {
    const o = view?.outcome;
    if (!o) return 'over';
    if (o.reason === 'draw') return 'draw';
    const mine = mySeat();
    if (mine === null || !o.winner || !PLAYED.has(o.reason)) return 'over';
    return (o.winner === 'first' ? 0 : 1) === mine ? 'win' : 'loss';
  }

  function moneyLine() {
    const me = myAddress();
    if (!view || !me || view.stake === '0' || mySeat() === null) return null;
    const amount = net.get(me);
    if (amount === undefined || view.phase !== 'finished') return null;
    // The stake went in (-E), then payouts and refunds came back.
    if (amount > 0n) return `+${formatAmount(amount)} for you`;
    if (amount < 0n) return `${formatAmount(amount)} for you`;
    return 'Your stake came back in full';
  }

  /** The viewer's rating change, after a game that moved ratings. */
  function ratingLine() {
    const seat = mySeat();
    const change = seat === null ? undefined : view?.outcome?.ratings?.[seat];
    if (!change) return null;
    const sign = change.change > 0 ? '+' : change.change < 0 ? '−' : '±';
    return h(
      'p',
      { class: `result-rating ${change.change > 0 ? 'is-up' : change.change < 0 ? 'is-down' : ''}` },
      `Rating ${change.before} → ${change.after} `,
      h('strong', { text: `(${sign}${Math.abs(change.change)})` }),
    );
  }

  function render() {
    layout.hidden = !view && !!loadError;
    failed.hidden = !layout.hidden;
    if (!view && loadError) {
      // One error, in place of the board: an empty board would say there is a match.
      replace(
        failed,
        h('h1', { class: 'page-title', text: `Match #${id}` }),
        h('p', { class: 'inline-error', role: 'alert', text: loadError }),
        h('p', {}, h('a', { href: '/online', text: 'See the matches being played' }), ' or ', h('a', { href: '/', text: 'play a game' }), '.'),
      );
      return;
    }
    if (!view) {
      replace(status, h('span', { class: 'status-text' }, `Loading match #${id}…`));
      replace(side, h('h1', { class: 'panel-title', text: `Match #${id}` }), h('p', { class: 'muted', text: 'Loading…' }));
      return;
    }
    const mine = mySeat();
    const turn = turnSeat();
    const finished = view.phase === 'finished';
    const live = view.phase === 'ready' || view.phase === 'in_progress';
    const interactive = live && isMyTurn() && !pending;
    const owners = ownersOf(view.moves.map((m) => m.cell));
    boardView.set({
      game: view.game,
      board: view.board,
      lastCell: view.moves.length ? view.moves[view.moves.length - 1].cell : null,
      winCells: view.outcome?.cells ?? [],
      interactive,
      ghost: view.game === 'sos' ? sosMark : mine === 0 ? 'X' : 'O',
      owners,
    });

    if (finished && mine === null && !view.rematch && view.outcome && PLAYED.has(view.outcome.reason)) followRematch();
    if (finished && !announcedEnd) {
      announcedEnd = true;
      if (view.moves.length || view.outcome?.reason !== 'cancelled') announce(`${resultTitle()}.`);
    }

    // The result takes the place of the turn line, above the board.
    status.hidden = finished;
    banner.hidden = !finished;
    if (finished) {
      const money = moneyLine();
      const kind = resultKind();
      replace(
        banner,
        h(
          'div',
          { class: `result-card is-${kind}`, role: 'status' },
          h(
            'div',
            { class: 'result-text' },
            h('p', { class: `result-title ${kind}`, text: resultTitle() }),
            money ? h('p', { class: 'result-money', text: money }) : null,
            ratingLine(),
          ),
          // The match's actions, then its record to download.
          h('div', { class: 'result-actions' }, rematchControls(), downloadRecord(view)),
        ),
      );
    }

    // The letter picker, for my turn in SOS.
    picker.hidden = !(view.game === 'sos' && mine !== null && live);
    if (!picker.hidden) {
      replace(picker, ...letterPicker(sosMark, (m) => pickKey(m), true));
    }

    renderSide(mine, turn);
    alignTicker();
    renderClock();
  }

  /** A link to the finished match's review, when it has moves to review. */
  function reviewLink() {
    return view && view.phase === 'finished' && view.moves.length ? h('a', { class: 'btn', href: `/review/${id}`, text: 'Review' }) : null;
  }

  function rematchControls() {
    if (view?.tournament) {
      // A tournament's game: the tournament pairs the next one.
      return h('div', { class: 'result-actions' }, h('a', { class: `btn${mySeat() === null ? '' : ' btn-primary'}`, href: `/tournament/${view.tournament}`, id: 'back-to-tournament', text: 'Back to the tournament' }), reviewLink());
    }
    if (view && mySeat() === null) {
      // A spectator cannot play this one again; the page follows the players' rematch.
      return h('div', { class: 'result-actions' }, view.rematch ? h('a', { class: 'btn', href: `/match/${view.rematch}`, text: 'Watch the rematch' }) : null, reviewLink());
    }
    if (!view || !view.outcome || !PLAYED.has(view.outcome.reason)) {
      return h('div', { class: 'result-actions' }, h('a', { class: 'btn btn-primary', href: '/online', text: 'Play again' }));
    }
    if (view.rematch) {
      return h('div', { class: 'result-actions' }, h('a', { class: 'btn btn-primary', href: `/match/${view.rematch}`, text: `Go to the rematch` }), reviewLink());
    }
    const mine = mySeat();
    const offeredBy = view.rematch_offer === 'first' ? 0 : view.rematch_offer === 'second' ? 1 : null;
    const rematch =
      offeredBy === mine
        ? h('button', { class: 'btn', type: 'button', disabled: true, text: 'Rematch offered…' })
        : h('button', {
            class: 'btn btn-primary',
            type: 'button',
            disabled: pending,
            text: offeredBy === null ? 'Rematch' : 'Accept rematch',
            onclick: () => command(`/api/matches/${id}/rematch`, offeredBy === null ? 'Rematch offered.' : 'Rematch accepted.'),
          });
    return h('div', { class: 'result-actions' }, rematch, reviewLink(), h('a', { class: 'btn', href: '/online', text: 'New opponent' }));
  }

  /**
   * "Round 2 of Thursday Swiss": the tournament's name is asked for once.
   * @param {number} tournament
   * @param {number} round
   */
  function tournamentText(tournament, round) {
    if (tournamentName === null) {
      tournamentName = '';
      api('GET', `/api/tournaments/${tournament}?limit=1`, undefined, { auth: false }).then(
        (/** @type {{ name: string }} */ t) => {
          tournamentName = t.name;
          if (!unmounted) render();
        },
        () => {},
      );
    }
    return `Round ${round} of ${tournamentName || `tournament #${tournament}`}`;
  }

  /** @param {0 | 1 | null} mine @param {0 | 1 | null} turn */
  function renderSide(mine, turn) {
    if (!view) return;
    const v = view;
    const stake = v.stake === '0' ? 'Free' : `Stake ${formatAmount(v.stake)}`;
    const players = [0, 1].map((n) => {
      const i = /** @type {0 | 1} */ (n);
      const seat = v.players?.[i];
      const toMove = turn === i && (v.phase === 'in_progress' || v.phase === 'ready');
      const won = v.outcome?.winner === (i === 0 ? 'first' : 'second');
      const who = seat?.address
        ? playerLabel(seat.address)
        : h('span', { text: seatName(i) });
      return h(
        'li',
        { class: `player-row${toMove ? ' to-move' : ''}${won ? ' won' : ''}` },
        h('span', { class: `mark-badge p${i}`, text: glyph(i), 'aria-hidden': 'true' }),
        h('span', { class: 'player-name' }, who, i === mine ? h('span', { class: 'tag', text: 'you' }) : null),
        h('span', { class: 'player-state', text: won ? 'Winner' : toMove ? 'To move' : '' }),
      );
    });
    replace(
      side,
      h('div', { class: 'panel-head' }, h('h1', { class: 'panel-title', text: `Match #${v.id}` }), mine === null ? h('span', { class: 'chip chip-watch' }, icon(ICONS.eye), 'Watching') : null),
      h(
        'div',
        { class: 'chips' },
        h('span', { class: 'chip', text: gameName(v.game) }),
        h('span', { class: 'chip', text: stake }),
        v.stake !== '0' ? h('span', { class: 'chip', text: `Pot ${formatAmount(BigInt(v.stake) * 2n)}` }) : null,
        v.origin === 'rematch' ? h('span', { class: 'chip', text: 'Rematch' }) : null,
        v.tournament ? h('a', { class: 'chip chip-link', href: `/tournament/${v.tournament}`, id: 'match-tournament' }, icon(ICONS.bracket), tournamentText(v.tournament, v.round ?? 0)) : null,
      ),
      h('ul', { class: 'players', 'aria-label': 'Players' }, players),
      v.phase === 'waiting'
        ? h('p', { class: 'muted' }, 'This match has not started yet. ', h('a', { href: '/online', text: 'Go to Online' }))
        : null,
      h('h2', { class: 'section-title', text: 'Moves' }),
      h(
        'ol',
        { class: 'move-list', 'aria-label': 'Moves' },
        v.moves.length
          ? v.moves.map((m) => h('li', { class: `move p${m.player === 'first' ? 0 : 1}` }, h('span', { class: 'move-mark', text: m.mark }), ` square ${m.cell + 1}`))
          : h('li', { class: 'muted empty', text: 'No moves yet' }),
      ),
    );
  }

  /** The countdowns and the buttons that depend on time. */
  function renderClock() {
    if (!view) return;
    const mine = mySeat();
    const turn = turnSeat();
    // Paused while the connection is down: the time left when it dropped.
    const now = pausedAt ?? serverNow();
    const deadline = view.deadline;
    const left = deadline ? deadline.at_ms - now : 0;
    const live = view.phase === 'ready' || view.phase === 'in_progress';
    const timed = deadline !== null && view.players?.every((p) => p.kind === 'human');

    // The status line: whose turn, my mark, the time left.
    /** @type {(Node | string | null)[]} */
    let parts = [];
    if (live && turn !== null) {
      const myTurn = turn === mine;
      const text = mine === null ? `${seatName(turn)} to move` : myTurn ? (pending ? 'Sending your move…' : 'Your move') : `Waiting for ${seatName(turn)}`;
      parts = [
        h('span', { class: `mark-badge p${turn}`, text: glyph(turn) }),
        h('span', { class: 'status-text', text }),
        mine !== null ? h('span', { class: 'status-mark', text: view.game === 'sos' ? `you are player ${mine + 1}` : `you are ${glyph(mine)}` }) : null,
        timed
          ? h(
              'span',
              { class: `countdown${pausedAt !== null ? ' paused' : left <= 10_000 ? ' urgent' : ''}`, 'aria-label': `${formatCountdown(left)} left${pausedAt !== null ? ', paused' : ''}` },
              icon(ICONS.clock),
              formatCountdown(left),
            )
          : null,
        timed && pausedAt !== null ? h('span', { class: 'clock-paused', text: pausedText(realtime.status) }) : null,
      ];
    } else if (view.phase === 'finished') {
      parts = [h('span', { class: 'status-text', text: resultTitle() })];
    } else if (view.phase === 'waiting') {
      parts = [h('span', { class: 'status-text', text: 'Waiting for an opponent' })];
    }
    replace(status, ...parts);
    status.dataset.state = view.phase;

    // Buttons that depend on the time.
    /** @type {Node[]} */
    const buttons = [];
    if (live && mine !== null) {
      if (deadline?.kind === 'timeout' && turn !== mine) {
        if (left <= 0) {
          buttons.push(h('button', { class: 'btn btn-primary', type: 'button', disabled: pending, onclick: () => command(`/api/matches/${id}/claim-timeout`, 'You claimed the win on time.') }, icon(ICONS.flag), 'Claim the win'));
        } else {
          buttons.push(h('span', { class: 'hint' }, icon(ICONS.clock), `If they do not move, you can claim the win in ${formatCountdown(left)}`));
        }
      }
      if (deadline?.kind === 'timeout' && turn === mine && left <= 0) {
        // Past the move clock a move is refused (127): say so, and what comes next.
        buttons.push(h('span', { class: 'hint urgent', role: 'status' }, icon(ICONS.clock), 'Your time ran out: your opponent may now claim the win.'));
      }
      if (deadline?.kind === 'abort' && left <= 0) {
        buttons.push(h('button', { class: 'btn', type: 'button', disabled: pending, text: 'Cancel the match (full refund)', onclick: () => command(`/api/matches/${id}/claim-timeout`, 'The match was cancelled and the stakes refunded.') }));
      }
      if (confirmResign) {
        buttons.push(
          h('button', { class: 'btn btn-danger', type: 'button', disabled: pending, text: 'Yes, resign', onclick: () => { confirmResign = false; command(`/api/matches/${id}/forfeit`, 'You resigned.'); } }),
          h('button', { class: 'btn', type: 'button', text: 'Keep playing', onclick: () => { confirmResign = false; render(); } }),
        );
      } else {
        buttons.push(
          h('button', {
            class: 'btn btn-ghost',
            type: 'button',
            disabled: pending,
            text: 'Resign',
            onclick: () => {
              confirmResign = true;
              window.clearTimeout(confirmTimer);
              confirmTimer = window.setTimeout(() => {
                confirmResign = false;
                render();
              }, 6000);
              render();
            },
          }),
        );
      }
    }
    if (live && mine === null && timed && deadline?.kind === 'timeout' && turn !== null && left <= 0) {
      // A spectator's 0:00 says what it means, as the players' does.
      buttons.push(h('span', { class: 'hint', role: 'status' }, icon(ICONS.clock), `Time is up for ${seatName(turn)}: the other player may now claim the win.`));
    }
    // Rebuild only when the set of buttons changes, so a focused button keeps its focus
    // while the countdown ticks.
    const key = buttons.map((b) => (b instanceof HTMLButtonElement ? `${b.textContent}:${b.disabled}` : 'hint')).join('|');
    if (actions.dataset.key !== key) {
      actions.dataset.key = key;
      replace(actions, ...buttons);
    } else {
      // Only the countdown text changed: update it in place so focus stays put.
      const hint = actions.querySelector('.hint');
      const fresh = buttons.find((b) => b instanceof HTMLElement && b.classList.contains('hint'));
      if (hint && fresh) hint.replaceWith(fresh);
    }
  }

  const stopKeys = pageKeys((cell) => move(cell), (key) => pickKey(key));

  render();
  return () => {
    unmounted = true;
    stopTopic();
    stopLobby();
    stopInbox();
    stopSession();
    stopStatus();
    stopTicker();
    window.clearTimeout(refetchTimer);
    window.clearTimeout(confirmTimer);
    stopKeys();
    boardView.destroy();
  };
}
