// @ts-check
/**
 * The leaderboard by Glicko-2 rating, the hall of fame by wins (as the SOS contract keeps it), and
 * the tournament winners by tournaments won (`by=tournaments`). Refreshed
 * when a match ends (the lobby topic), never polled. Ranks are standard competition ranks
 * ("1, 1, 3") of what the table shows (the rounded rating, or the wins): players who tie
 * share the rank and its medal. The hall of fame lists only players who have won, the
 * tournament winners only players who have won a tournament.
 * @module
 */

import { api, newestOnly } from '../api.js';
import { h, replace, segmented } from '../dom.js';
import { competitionRanks } from '../format.js';
import { playerLabel } from '../identity.js';
import { followTopic, myAddress, onSession } from '../session.js';

/** @typedef {import('../session.js').PlayerView} PlayerView */

/**
 * @param {HTMLElement} root
 * @param {{ query: URLSearchParams }} ctx
 * @returns {() => void}
 */
export function mount(root, ctx) {
  const asked = ctx.query.get('by');
  let by = asked === 'wins' || asked === 'tournaments' ? asked : 'rating';
  /** @param {PlayerView} p */
  const titles = (p) => p.tournament_wins ?? 0;
  /** @type {PlayerView[] | null} */
  let players = null;
  /** @type {string | null} */
  let error = null;
  const table = h('div', { class: 'table-wrap' });
  const intro = h('p', { class: 'muted' });

  replace(
    root,
    h(
      'section',
      { class: 'view view-leaderboard' },
      h(
        'div',
        { class: 'page-head' },
        h('h1', { class: 'page-title', text: 'Leaderboard' }),
        segmented('Rank by', [{ value: 'rating', label: 'Rating' }, { value: 'wins', label: 'Hall of fame' }, { value: 'tournaments', label: 'Tournaments' }], by, (value) => {
          by = value;
          history.replaceState(null, '', value === 'rating' ? '/leaderboard' : `/leaderboard?by=${value}`);
          load();
        }),
      ),
      h('div', { class: 'card' }, intro, table),
    ),
  );

  const read = newestOnly();
  async function load() {
    const newest = read();
    try {
      /** @type {{ players: PlayerView[] }} */
      const result = await api('GET', `/api/leaderboard?by=${by}&limit=50`, undefined, { auth: false });
      // A tab clicked, or a live event, since this read was asked: its answer is not the newest.
      if (!newest()) return;
      players = result.players;
      error = null;
    } catch (e) {
      if (!newest()) return;
      error = e instanceof Error ? e.message : String(e);
    }
    render();
  }

  function render() {
    intro.textContent = {
      wins: 'The hall of fame: the most games won.',
      tournaments: 'Tournament winners: the most tournaments won (ranked first at the end).',
    }[by] ?? 'Glicko-2 ratings, as on Lichess: everyone starts at 1500; games between people count.';
    if (error) {
      replace(table, h('p', { class: 'inline-error', role: 'alert', text: error }));
      return;
    }
    if (!players) {
      replace(table, h('p', { class: 'muted', text: 'Loading…' }));
      return;
    }
    const shown = by === 'wins' ? players.filter((p) => p.wins > 0) : by === 'tournaments' ? players.filter((p) => titles(p) > 0) : players;
    if (!shown.length) {
      const empty = { wins: 'No wins yet. Be the first on the board!', tournaments: 'No tournament won yet. Enter one from Tournaments!' }[by] ?? 'No games played yet. Be the first on the board!';
      replace(table, h('p', { class: 'muted empty', text: empty }));
      return;
    }
    const ranks = competitionRanks(shown.map((p) => (by === 'wins' ? p.wins : by === 'tournaments' ? titles(p) : Math.round(p.rating.rating))));
    const me = myAddress();
    // Tournaments won: a narrow screen shows the column only where the ranking is by it.
    const titlesClass = by === 'tournaments' ? 'num' : 'num hide-narrow';
    replace(
      table,
      h(
        'table',
        { class: 'table' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: '#' }), h('th', { scope: 'col', text: 'Player' }), h('th', { scope: 'col', class: 'num', text: 'Rating' }), h('th', { scope: 'col', class: 'num hide-phone', text: 'Won' }), h('th', { scope: 'col', class: 'num hide-phone', text: 'Drawn' }), h('th', { scope: 'col', class: 'num hide-phone', text: 'Lost' }), h('th', { scope: 'col', class: 'num hide-narrow', text: 'Games' }), h('th', { scope: 'col', class: titlesClass, title: 'Tournaments won', text: 'Titles' }))),
        h(
          'tbody',
          {},
          shown.map((p, i) =>
            h(
              'tr',
              { class: `${p.address === me ? 'is-me' : ''}${ranks[i] <= 3 ? ` medal-${ranks[i]}` : ''}` },
              h('td', { class: 'rank', text: i > 0 && ranks[i] === ranks[i - 1] ? `=${ranks[i]}` : String(ranks[i]) }),
              h(
                'td',
                { class: 'player-cell' },
                playerLabel(p.address, { profile: { name: p.name ?? null, bot: p.bot === true } }),
                p.address === me ? h('span', { class: 'tag', text: 'you' }) : null,
                p.active_match ? h('a', { class: 'tag tag-live', href: `/match/${p.active_match}`, text: 'playing' }) : null,
                // A phone has no room for the won, drawn and lost columns: one line instead.
                h('span', { class: 'phone-only muted small', text: `${p.wins} won · ${p.draws} drawn · ${p.games - p.wins - p.draws} lost` }),
              ),
              h('td', { class: 'num' }, h('strong', { text: Math.round(p.rating.rating).toString() }), h('span', { class: 'muted small hide-phone', text: ` ±${Math.round(p.rating.deviation)}` })),
              h('td', { class: 'num hide-phone', text: String(p.wins) }),
              h('td', { class: 'num hide-phone', text: String(p.draws) }),
              h('td', { class: 'num hide-phone', text: String(p.games - p.wins - p.draws) }),
              h('td', { class: 'num hide-narrow', text: String(p.games) }),
              h('td', { class: titlesClass, text: String(titles(p)) }),
            ),
          ),
        ),
      ),
    );
  }

  const stop = followTopic('lobby', load, (event) => event.kind.type === 'game_ended');
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
