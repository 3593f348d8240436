// @ts-check
/**
 * A player's page by address (the Sui contract's "board by address"): stats, rating, puzzle
 * rating, the active match to watch, and recent matches. Refreshed when one of their matches ends.
 * @module
 */

import { api, newestOnly } from '../api.js';
import { copyButton, h, ICONS, icon, replace } from '../dom.js';
import { formatAmount, formatWhen, gameName, isAddress, shortAddress } from '../format.js';
import { botBadge, identicon, rememberProfile } from '../identity.js';
import { followTopic, myAddress, onSession } from '../session.js';

/**
 * @typedef {import('../session.js').PlayerView} PlayerView
 * @typedef {import('../session.js').MatchView} MatchView
 */

/**
 * @param {HTMLElement} root
 * @param {{ params: Record<string, string> }} ctx
 * @returns {() => void}
 */
export function mount(root, ctx) {
  const address = ctx.params.address.toLowerCase();
  /** @type {PlayerView | null} */
  let player = null;
  /** @type {MatchView[]} */
  let recent = [];
  /** @type {string | null} */
  let error = isAddress(address) ? null : 'This is not an address: an address is 0x followed by 64 hexadecimal digits.';
  const body = h('div', { class: 'player-body' });
  const title = h('h1', { class: 'page-title' });
  const badge = h('span', { class: 'player-title-badge' });

  replace(
    root,
    h(
      'section',
      { class: 'view view-player' },
      h('div', { class: 'page-head player-head' }, isAddress(address) ? identicon(address, 48) : null, title, badge),
      h('div', { class: 'card address-card' }, h('span', { class: 'mono address-full', text: address }), copyButton(() => address, 'address')),
      body,
    ),
  );

  const read = newestOnly();
  async function load() {
    if (!isAddress(address)) return render();
    const newest = read();
    try {
      /** @type {[PlayerView, { matches: MatchView[] }]} */
      const [p, page] = await Promise.all([
        api('GET', `/api/players/${address}`, undefined, { auth: false }),
        api('GET', `/api/matches?player=${address}&limit=10`, undefined, { auth: false }),
      ]);
      if (!newest()) return;
      player = p;
      rememberProfile(address, { name: p.name ?? null, bot: p.bot === true });
      recent = page.matches;
      error = null;
    } catch (e) {
      if (!newest()) return;
      error = e instanceof Error ? e.message : String(e);
    }
    render();
  }

  /** @param {string} label @param {string} value @param {string} [hint] */
  const stat = (label, value, hint) =>
    h('div', { class: 'stat' }, h('span', { class: 'stat-value', text: value }), h('span', { class: 'stat-label', text: label }), hint ? h('span', { class: 'stat-hint', text: hint }) : null);

  /** @param {MatchView} m */
  function resultFor(m) {
    if (m.phase !== 'finished' || !m.outcome) return m.phase === 'waiting' ? 'waiting' : 'playing';
    const o = m.outcome;
    if (o.reason === 'draw') return 'draw';
    if (!['win', 'forfeit', 'timeout'].includes(o.reason)) return o.reason;
    return o.winner_address === address ? 'won' : 'lost';
  }

  function render() {
    const name = player?.name;
    const mine = address === myAddress();
    title.textContent = name ? (mine ? `${name} (you)` : name) : mine ? 'Your page' : `Player ${shortAddress(address)}`;
    badge.replaceChildren(...(player?.bot ? [botBadge()] : []));
    if (error) {
      replace(body, h('p', { class: 'inline-error', role: 'alert', text: error }));
      return;
    }
    if (!player) {
      replace(body, h('p', { class: 'muted', text: 'Loading…' }));
      return;
    }
    const p = player;
    const losses = p.games - p.wins - p.draws;
    const rate = p.games ? `${Math.round((p.wins / p.games) * 100)}% won` : 'no games yet';
    const me = myAddress();
    replace(
      body,
      h(
        'div',
        { class: 'stats-grid' },
        stat('Rating', String(Math.round(p.rating.rating)), `±${Math.round(p.rating.deviation)}`),
        stat('Games', String(p.games), rate),
        stat('Won', String(p.wins)),
        stat('Drawn', String(p.draws)),
        stat('Lost', String(losses)),
        p.puzzles ? stat('Puzzle rating', String(Math.round(p.puzzles.rating)), `${p.puzzles.solved}/${p.puzzles.attempts} puzzles solved`) : null,
      ),
      p.active_match
        ? h(
            'div',
            { class: 'card active-card' },
            h('div', { class: 'active-text' }, h('strong', { text: `Playing match #${p.active_match}` }), h('span', { class: 'muted', text: 'Watch it live, read-only.' })),
            h('a', { class: 'btn btn-primary', href: `/match/${p.active_match}` }, icon(ICONS.eye), 'Watch'),
          )
        : null,
      me && me !== address
        ? h('div', { class: 'panel-actions' }, h('a', { class: 'btn', href: `/online?challenge=${address}` }, icon(ICONS.swords), 'Challenge'))
        : null,
      h(
        'section',
        { class: 'card' },
        h('h2', { class: 'card-title', text: 'Recent matches' }),
        recent.length
          ? h(
              'ul',
              { class: 'list' },
              recent.map((m) => {
                const result = resultFor(m);
                const others = (m.players ?? []).filter((s) => s.address !== address).map((s) => (s.address ? shortAddress(s.address) : `computer (${s.level})`));
                // When it ended, or its last move while it runs.
                const when = m.outcome?.ended_ms ?? m.last_activity_ms;
                return h(
                  'li',
                  { class: 'list-row' },
                  h('span', { class: `result-pill ${result}`, text: result }),
                  h('span', { class: 'row-main' }, h('a', { href: `/match/${m.id}`, text: `#${m.id} ${gameName(m.game)}` }), h('span', { class: 'muted', text: `${others.length ? ` vs ${others.join(', ')}` : ''}${m.stake !== '0' ? ` · stake ${formatAmount(m.stake)}` : ''}` }), h('time', { class: 'row-when muted small', datetime: new Date(when).toISOString(), text: formatWhen(when) })),
                );
              }),
            )
          : h('p', { class: 'muted empty', text: 'No matches yet.' }),
      ),
    );
  }

  const stop = followTopic('lobby', load, (event) => event.kind.type === 'game_ended' || event.kind.type === 'game_started');
  // Who "you" are is known once the login finishes.
  let me = myAddress();
  const stopSession = onSession(() => {
    if (myAddress() !== me) {
      me = myAddress();
      render();
    }
  });
  render();
  load();
  return () => {
    stop();
    stopSession();
  };
}
