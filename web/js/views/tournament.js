// @ts-check
/**
 * A tournament's page (`/tournament/7`): what it is, a countdown (to the start, to an
 * arena's end, to a Swiss event's next round), Join / Leave / Pause for the logged-in
 * player, their own game when one is ready, the live standings (bots badged; Buchholz and
 * Sonneborn–Berger in a Swiss event, a flame for an arena player on a streak), the games
 * being played, and once it has finished the results with the prizes.
 *
 * Live: every event on the `tournament:<id>` topic (its own events, its games' starts and
 * ends, its pool's transfers) refetches the view, once for a burst.
 * @module
 */

import { api, newestOnly, newIdempotencyKey } from '../api.js';
import { every, serverNow, syncClock } from '../clock.js';
import { h, ICONS, icon, replace } from '../dom.js';
import { formatAmount, formatCountdown, formatWhen, gameName } from '../format.js';
import { playerLabel } from '../identity.js';
import { followTopic, myAddress, onSession } from '../session.js';
import { entryText, formatText, moneyText } from './tournaments.js';

/**
 * @typedef {import('./tournaments.js').TournamentSummary} TournamentSummary
 * @typedef {{ address: string, name: string | null, bot: boolean }} EntrantView
 * @typedef {{
 *   rank: number, player: EntrantView, status: 'active' | 'paused' | 'withdrawn', score: number,
 *   on_fire: boolean, wins: number, draws: number, losses: number, byes: number,
 *   buchholz: number, sonneborn_berger: number, playing: boolean,
 * }} StandingView
 * @typedef {TournamentSummary & {
 *   next_at_ms: number | null, now_ms: number, standings: StandingView[],
 *   pairings: { match_id: number, first: EntrantView, second: EntrantView }[],
 *   prizes: { rank: number, player: EntrantView, amount: string }[],
 *   me: { standing: StandingView, match_id: number | null } | null,
 * }} TournamentView
 */

/** Won/drawn/lost, and the byes. @param {StandingView} s */
const record = (s) => `${s.wins}/${s.draws}/${s.losses}${s.byes ? ` +${s.byes} bye${s.byes > 1 ? 's' : ''}` : ''}`;

/** @param {EntrantView} p */
const label = (p) => playerLabel(p.address, { profile: { name: p.name, bot: p.bot } });

/** How long after a failed read the page reads again, in ms. */
const RETRY_MS = 2_000;

/**
 * @param {HTMLElement} root
 * @param {{ params: Record<string, string> }} ctx
 * @returns {() => void}
 */
export function mount(root, ctx) {
  const id = Number(ctx.params.id);
  /** @type {TournamentView | null} */
  let view = null;
  /** @type {string | null} */
  let error = null;
  /** @type {string | null} */
  let actionError = null;
  let pending = false;
  const title = h('h1', { class: 'page-title', text: `Tournament #${id}` });
  const chips = h('div', { class: 'chips' });
  const countdown = h('p', { class: 'tournament-countdown', id: 'tournament-countdown', role: 'timer' });
  const actions = h('div', { class: 'panel-actions tournament-actions' });
  const problem = h('p', { class: 'inline-error', role: 'alert', hidden: true });
  const body = h('div', { class: 'tournament-body' });

  replace(
    root,
    h(
      'section',
      { class: 'view view-tournament' },
      h('p', { class: 'back-link' }, h('a', { href: '/tournaments', text: '← Tournaments' })),
      h('div', { class: 'page-head' }, title),
      h('div', { class: 'card tournament-head' }, chips, countdown, actions, problem),
      body,
    ),
  );

  let refetchTimer = 0;
  let left = false;
  const read = newestOnly();
  async function load() {
    const me = myAddress();
    const newest = read();
    try {
      /** @type {TournamentView} */
      const v = await api('GET', `/api/tournaments/${id}?limit=200${me ? `&player=${me}` : ''}`, undefined, { auth: false });
      if (!newest()) return;
      syncClock(v.now_ms);
      view = v;
      error = null;
    } catch (e) {
      // A read older than the one drawn failed: what is drawn is newer than that failure.
      if (!newest()) return;
      error = e instanceof Error ? e.message : String(e);
      // The page reads again only on the tournament's next event, and after its last
      // (its end, its prizes) none comes: so a failed read is tried again by itself.
      if (!left) {
        window.clearTimeout(refetchTimer);
        refetchTimer = window.setTimeout(load, RETRY_MS);
      }
    }
    render();
  }

  /**
   * Sends a command (join, leave, pause); the refusal shows inline, in the API's words.
   * @param {string} what
   * @param {unknown} payload
   */
  async function command(what, payload) {
    pending = true;
    actionError = null;
    renderActions();
    try {
      await api('POST', `/api/tournaments/${id}/${what}`, payload, { idempotencyKey: newIdempotencyKey() });
    } catch (e) {
      actionError = e instanceof Error ? e.message : String(e);
    }
    pending = false;
    await load();
  }

  function render() {
    if (error || !view) {
      replace(chips);
      replace(body, error ? h('p', { class: 'inline-error', role: 'alert', text: error }) : h('p', { class: 'muted', text: 'Loading…' }));
      return;
    }
    const v = view;
    title.textContent = v.name;
    document.title = `${v.name} · Triad`;
    replace(
      chips,
      h('span', { class: 'chip', text: gameName(v.game) }),
      h('span', { class: 'chip', text: formatText(v) }),
      h('span', { class: `chip tournament-phase phase-${v.phase}`, text: v.phase }),
      h('span', { class: 'chip', text: entryText(v.entry) }),
      h('span', { class: 'chip', text: moneyText(v) }),
      v.prizes.length ? h('span', { class: 'chip', text: `Prizes ${formatAmount(v.prizes.reduce((sum, p) => sum + BigInt(p.amount), 0n))}` }) : null,
      h('span', { class: 'chip', text: `${v.players}/${v.max_players} players` }),
    );
    renderActions();
    renderClock();
    const swiss = v.format === 'swiss';
    const me = myAddress();
    const winner = v.phase === 'finished' ? v.standings[0] : null;
    replace(
      body,
      v.me?.match_id
        ? h(
            'div',
            { class: 'card active-card your-game', id: 'your-game' },
            h('span', { class: 'pulse', 'aria-hidden': 'true' }),
            h('div', { class: 'active-text' }, h('strong', { text: 'Your game is ready' }), h('span', { class: 'muted', text: `Match #${v.me.match_id}${swiss ? ` · round ${v.round} of ${v.rounds}` : ''}` })),
            h('a', { class: 'btn btn-primary', href: `/match/${v.me.match_id}`, id: 'your-game-play' }, icon(ICONS.play), 'Play'),
          )
        : null,
      winner
        ? h(
            'div',
            { class: 'card tournament-winner-card', id: 'tournament-winner' },
            icon(ICONS.trophy, 'icon winner-icon'),
            h('div', { class: 'active-text' }, h('span', { class: 'muted small', text: 'Winner' }), label(winner.player)),
            h('span', { class: 'winner-score', text: `${winner.score} points` }),
          )
        : null,
      v.prizes.length
        ? h(
            'section',
            { class: 'card', id: 'tournament-prizes' },
            h('h2', { class: 'card-title', text: 'Prizes' }),
            h(
              'ul',
              { class: 'list' },
              v.prizes.map((p) => h('li', { class: 'list-row' }, h('span', { class: 'rank', text: `#${p.rank}` }), h('span', { class: 'row-main' }, label(p.player)), h('strong', { class: 'amount', text: formatAmount(p.amount) }))),
            ),
          )
        : null,
      h(
        'section',
        { class: 'card' },
        h('h2', { class: 'card-title', text: v.phase === 'finished' ? 'Final standings' : 'Standings' }),
        v.standings.length
          ? h(
              'div',
              { class: 'table-wrap' },
              h(
                'table',
                { class: 'table standings', id: 'standings' },
                h(
                  'thead',
                  {},
                  h(
                    'tr',
                    {},
                    h('th', { scope: 'col', text: '#' }),
                    h('th', { scope: 'col', text: 'Player' }),
                    h('th', { scope: 'col', class: 'num', text: 'Score' }),
                    h('th', { scope: 'col', class: 'num col-record', title: 'Won / drawn / lost', text: 'W/D/L' }),
                    swiss ? h('th', { scope: 'col', class: 'num', title: 'Buchholz: the sum of the scores of every opponent met', text: 'Bh' }) : null,
                    swiss ? h('th', { scope: 'col', class: 'num', title: 'Sonneborn–Berger: the scores of the opponents beaten, plus half those drawn', text: 'SB' }) : null,
                  ),
                ),
                h(
                  'tbody',
                  {},
                  v.standings.map((s) =>
                    h(
                      'tr',
                      { class: `${s.player.address === me ? 'is-me' : ''}${v.phase === 'finished' && s.rank <= 3 ? ` medal-${s.rank}` : ''}`, dataset: { address: s.player.address } },
                      h('td', { class: 'rank', text: String(s.rank) }),
                      h(
                        'td',
                        {},
                        label(s.player),
                        s.player.address === me ? h('span', { class: 'tag', text: 'you' }) : null,
                        s.status !== 'active' ? h('span', { class: 'tag tag-muted', text: s.status }) : null,
                        s.playing ? h('span', { class: 'tag tag-live', text: 'playing' }) : null,
                        // On a phone the record goes under the name, not in a column of its own.
                        h('span', { class: 'record-narrow muted', text: `${record(s)} won/drawn/lost` }),
                      ),
                      h('td', { class: 'num' }, s.on_fire ? h('span', { class: 'flame', title: 'On fire: two wins in a row, double points', 'aria-label': 'on fire', text: '🔥' }) : null, h('strong', { text: String(s.score) })),
                      h('td', { class: 'num col-record', text: record(s) }),
                      swiss ? h('td', { class: 'num', text: String(s.buchholz) }) : null,
                      swiss ? h('td', { class: 'num', text: String(s.sonneborn_berger) }) : null,
                    ),
                  ),
                ),
              ),
            )
          : h('p', { class: 'muted empty', text: 'Nobody has entered yet.' }),
        swiss ? h('p', { class: 'muted small tie-breaks', text: 'Ties are broken by Buchholz (Bh: the sum of the scores of every opponent met), then Sonneborn–Berger (SB: the scores of the opponents beaten, plus half those drawn).' }) : null,
      ),
      v.pairings.length
        ? h(
            'section',
            { class: 'card', id: 'pairings' },
            h('h2', { class: 'card-title', text: swiss ? `Round ${v.round}: games in play` : 'Games in play' }),
            h(
              'ul',
              { class: 'list' },
              v.pairings.map((p) =>
                h(
                  'li',
                  { class: 'list-row pairing' },
                  h('a', { class: 'pairing-match', href: `/match/${p.match_id}`, text: `#${p.match_id}` }),
                  h('span', { class: 'pairing-players' }, label(p.first), h('span', { class: 'muted', text: 'vs' }), label(p.second)),
                  h('a', { class: 'btn btn-ghost btn-small', href: `/match/${p.match_id}` }, icon(ICONS.eye), 'Watch'),
                ),
              ),
            ),
          )
        : null,
    );
  }

  function renderActions() {
    const v = view;
    problem.hidden = !actionError;
    problem.textContent = actionError ?? '';
    if (!v || !(v.phase === 'upcoming' || v.phase === 'running')) {
      replace(actions);
      return;
    }
    if (!myAddress()) {
      replace(actions, h('span', { class: 'muted', text: 'Log in (open the Wallet) to enter.' }));
      return;
    }
    const status = v.me?.standing.status;
    const entered = status === 'active' || status === 'paused';
    /** @type {Node[]} */
    const buttons = [];
    if (!entered) {
      const fee = v.entry_fee === '0' ? '' : ` (${formatAmount(v.entry_fee)})`;
      buttons.push(h('button', { class: 'btn btn-primary', type: 'button', id: 'tournament-join', disabled: pending, onclick: () => command('join', {}) }, icon(ICONS.trophy), `Join${fee}`));
    } else {
      buttons.push(h('span', { class: 'entered', text: status === 'paused' ? 'You are in (paused: no new games)' : 'You are in' }));
      buttons.push(
        h('button', { class: 'btn', type: 'button', id: 'tournament-pause', disabled: pending, onclick: () => command('pause', { paused: status !== 'paused' }), text: status === 'paused' ? 'Resume' : 'Pause' }),
        h('button', { class: 'btn btn-ghost', type: 'button', id: 'tournament-leave', disabled: pending, onclick: () => command('leave', {}), text: 'Leave' }),
      );
    }
    replace(actions, ...buttons);
  }

  /** The countdown: to the start, to an arena's end, to a Swiss event's next round. */
  function renderClock() {
    const v = view;
    if (!v) return;
    const now = serverNow();
    /** @param {string} text @param {number} at */
    const until = (text, at) => `${text} ${at > now ? formatCountdown(at - now) : 'any moment now'}`;
    let text = '';
    if (v.phase === 'upcoming') text = until('Starts in', v.starts_at_ms);
    else if (v.phase === 'running' && v.format === 'arena' && v.ends_at_ms !== null) text = until('Ends in', v.ends_at_ms);
    else if (v.phase === 'running' && v.next_at_ms !== null) text = until(v.round < (v.rounds ?? 0) ? `Round ${v.round + 1} of ${v.rounds} starts in` : 'The results come in', v.next_at_ms);
    else if (v.phase === 'running') text = `Round ${v.round} of ${v.rounds}: games in play`;
    else if (v.phase === 'finished') text = `Finished${v.ended_at_ms ? ` ${formatWhen(v.ended_at_ms)}` : ''}`;
    else text = 'Cancelled: every entry fee was refunded';
    countdown.textContent = text;
  }

  const stopTicker = every(renderClock);
  const refetchSoon = () => {
    window.clearTimeout(refetchTimer);
    refetchTimer = window.setTimeout(load, 120);
  };
  const stop = followTopic(`tournament:${id}`, refetchSoon);
  // Who "you" are is known once the login finishes.
  let me = myAddress();
  const stopSession = onSession(() => {
    if (myAddress() !== me) {
      me = myAddress();
      load();
    }
  });
  render();
  load();
  return () => {
    left = true;
    stop();
    stopSession();
    stopTicker();
    window.clearTimeout(refetchTimer);
  };
}
