// @ts-check
/**
 * The tournaments: upcoming and running ones (a countdown to the start, or to an arena's
 * end; the players; the entry fee and the pool; who may enter) and the recent finished
 * ones with their winner. The owner also gets a form to create one. Live: the
 * `tournaments` topic (created, started, finished, cancelled) refetches the lists.
 * @module
 */

import { api, newestOnly, newIdempotencyKey } from '../api.js';
import { every, serverNow } from '../clock.js';
import { h, ICONS, icon, replace, segmented } from '../dom.js';
import { formatAmount, formatCountdown, formatWhen, gameName, parseAmount } from '../format.js';
import { playerLabel } from '../identity.js';
import { followTopic, onSession, session } from '../session.js';

/**
 * @typedef {{
 *   id: number, name: string, game: string, format: 'arena' | 'swiss', duration_ms: number | null,
 *   rounds: number | null, phase: 'upcoming' | 'running' | 'finished' | 'cancelled',
 *   entry: 'people' | 'bots' | 'everyone', entry_fee: string, pool: string, prizes_bps: number[],
 *   players: number, max_players: number, min_players: number, round: number,
 *   starts_at_ms: number, ends_at_ms: number | null, ended_at_ms: number | null,
 *   organizer: string, winner: string | null,
 * }} TournamentSummary
 */

/** Who may enter, in words. @param {string} entry */
export function entryText(entry) {
  return entry === 'people' ? 'People only' : entry === 'bots' ? 'Bots only' : 'People and bots';
}

/** The format, in words: "Swiss · 3 rounds", "Arena · 30 min". @param {TournamentSummary} t */
export function formatText(t) {
  if (t.format === 'swiss') return `Swiss · ${t.rounds} round${t.rounds === 1 ? '' : 's'}`;
  return `Arena · ${Math.round((t.duration_ms ?? 0) / 60_000)} min`;
}

/**
 * The entry fee and, while it is open, the pool (once over, the pool has gone to the prizes
 * or back to the entrants), in words.
 * @param {TournamentSummary} t
 */
export function moneyText(t) {
  if (t.entry_fee === '0') return 'Free';
  const open = t.phase === 'upcoming' || t.phase === 'running';
  return open ? `Entry ${formatAmount(t.entry_fee)} · pool ${formatAmount(t.pool)}` : `Entry ${formatAmount(t.entry_fee)}`;
}

/**
 * What the countdown counts to, for a tournament not over: its start, or an arena's end.
 * @param {TournamentSummary} t
 * @returns {{ label: string, at: number } | null}
 */
function countdownOf(t) {
  if (t.phase === 'upcoming') return { label: 'Starts in', at: t.starts_at_ms };
  if (t.phase === 'running' && t.ends_at_ms !== null) return { label: 'Ends in', at: t.ends_at_ms };
  return null;
}

/**
 * @param {HTMLElement} root
 * @param {{ navigate: (path: string) => void }} ctx
 * @returns {() => void}
 */
export function mount(root, ctx) {
  /** @type {TournamentSummary[] | null} */
  let open = null;
  /** @type {TournamentSummary[]} */
  let finished = [];
  /** @type {string | null} */
  let error = null;
  let showForm = false;
  const openBox = h('div', { class: 'tournament-list', id: 'tournaments-open' });
  const finishedBox = h('div', { class: 'tournament-list', id: 'tournaments-finished' });
  const createHost = h('div', { class: 'create-host' });
  const headActions = h('div', { class: 'head-actions' });

  replace(
    root,
    h(
      'section',
      { class: 'view view-tournaments' },
      h('div', { class: 'page-head' }, h('h1', { class: 'page-title', text: 'Tournaments' }), headActions),
      createHost,
      h('section', { class: 'card' }, h('h2', { class: 'card-title', text: 'Upcoming and running' }), openBox),
      h('section', { class: 'card' }, h('h2', { class: 'card-title', text: 'Finished' }), finishedBox),
    ),
  );

  const read = newestOnly();
  async function load() {
    const newest = read();
    try {
      /** @type {[{ tournaments: TournamentSummary[] }, { tournaments: TournamentSummary[] }]} */
      const [o, f] = await Promise.all([
        api('GET', '/api/tournaments?phase=open&limit=50', undefined, { auth: false }),
        api('GET', '/api/tournaments?phase=finished&limit=10', undefined, { auth: false }),
      ]);
      if (!newest()) return;
      open = o.tournaments;
      finished = f.tournaments;
      error = null;
    } catch (e) {
      if (!newest()) return;
      error = e instanceof Error ? e.message : String(e);
    }
    render();
  }

  function renderHead() {
    const owner = session.me?.owner === true;
    if (!owner) showForm = false;
    replace(
      headActions,
      owner
        ? h('button', { class: `btn${showForm ? '' : ' btn-primary'}`, type: 'button', id: 'tournament-create-toggle', onclick: () => { showForm = !showForm; renderHead(); } }, icon(ICONS.trophy), showForm ? 'Close the form' : 'Create')
        : null,
    );
    if (!showForm) replace(createHost);
    else if (!createHost.firstChild) replace(createHost, createForm((id) => ctx.navigate(`/tournament/${id}`)));
  }

  function render() {
    renderHead();
    if (error) {
      replace(openBox, h('p', { class: 'inline-error', role: 'alert', text: error }));
      return;
    }
    if (!open) {
      replace(openBox, h('p', { class: 'muted', text: 'Loading…' }));
      return;
    }
    replace(
      openBox,
      open.length
        ? h('ul', { class: 'list' }, open.map(openRow))
        : h('p', { class: 'muted empty', text: 'No tournament is open now. New ones appear here as soon as they are announced.' }),
    );
    replace(
      finishedBox,
      finished.length ? h('ul', { class: 'list' }, finished.map(finishedRow)) : h('p', { class: 'muted empty', text: 'None has finished yet.' }),
    );
    tick();
  }

  /** @param {TournamentSummary} t */
  function openRow(t) {
    const c = countdownOf(t);
    const when = c
      ? h('span', { class: 'tournament-when', dataset: { at: String(c.at), label: c.label } })
      : h('span', { class: 'tournament-when', text: `Round ${t.round} of ${t.rounds}` });
    return h(
      'li',
      { class: 'list-row tournament-row', dataset: { id: String(t.id) } },
      h(
        'span',
        { class: 'row-main' },
        h('a', { class: 'tournament-name', href: `/tournament/${t.id}`, text: t.name }),
        h('span', { class: 'muted small', text: `${gameName(t.game)} · ${formatText(t)} · ${entryText(t.entry)}` }),
        h('span', { class: 'muted small', text: `${t.players}/${t.max_players} players · ${moneyText(t)}` }),
      ),
      h('span', { class: 'tournament-side' }, h('span', { class: `tag${t.phase === 'running' ? ' tag-live' : ''}`, text: t.phase }), when),
    );
  }

  /** @param {TournamentSummary} t */
  function finishedRow(t) {
    return h(
      'li',
      { class: 'list-row tournament-row', dataset: { id: String(t.id) } },
      h(
        'span',
        { class: 'row-main' },
        h('a', { class: 'tournament-name', href: `/tournament/${t.id}`, text: t.name }),
        h('span', { class: 'muted small', text: `${gameName(t.game)} · ${formatText(t)} · ${t.players} players${t.ended_at_ms ? ` · ${formatWhen(t.ended_at_ms)}` : ''}` }),
      ),
      h(
        'span',
        { class: 'tournament-side' },
        t.phase === 'cancelled'
          ? h('span', { class: 'tag', text: 'cancelled' })
          : t.winner
            ? h('span', { class: 'tournament-winner' }, icon(ICONS.trophy), playerLabel(t.winner))
            : null,
      ),
    );
  }

  /** Redraws the countdowns in place. */
  function tick() {
    const now = serverNow();
    for (const el of root.querySelectorAll('.tournament-when[data-at]')) {
      const e = /** @type {HTMLElement} */ (el);
      const left = Number(e.dataset.at) - now;
      e.textContent = left > 0 ? `${e.dataset.label} ${formatCountdown(left)}` : 'any moment now';
    }
  }

  const stopTicker = every(tick);
  let refetchTimer = 0;
  const refetchSoon = () => {
    window.clearTimeout(refetchTimer);
    refetchTimer = window.setTimeout(load, 150);
  };
  const stop = followTopic('tournaments', refetchSoon);
  const stopSession = onSession(() => renderHead());
  render();
  load();
  return () => {
    stop();
    stopSession();
    stopTicker();
    window.clearTimeout(refetchTimer);
  };
}

/**
 * The owner's form for a new tournament. Calls `created` with its id.
 * @param {(id: number) => void} created
 */
function createForm(created) {
  let game = 'tic-tac-toe';
  /** @type {'swiss' | 'arena'} */
  let format = 'swiss';
  let entry = 'everyone';
  const key = newIdempotencyKey();
  /** @param {string} id @param {string} value @param {Record<string, string>} [more] */
  const input = (id, value, more = {}) => h('input', { class: 'input', id, type: 'text', value, autocomplete: 'off', ...more });
  /** @param {string} id @param {string} label @param {HTMLElement} el */
  const field = (id, label, el) => h('div', { class: 'field' }, h('label', { class: 'field-label', for: id, text: label }), el);
  const name = input('t-name', '', { maxlength: '60', placeholder: 'e.g. Thursday Swiss' });
  const length = input('t-length', '3', { inputmode: 'numeric' });
  const lengthLabel = h('label', { class: 'field-label', for: 't-length', text: 'Rounds' });
  const starts = input('t-starts', '5', { inputmode: 'numeric' });
  const fee = input('t-fee', '0', { inputmode: 'decimal' });
  const prizes = input('t-prizes', '', { placeholder: 'e.g. 60, 30' });
  const max = input('t-max', '500', { inputmode: 'numeric' });
  const problem = h('p', { class: 'inline-error', role: 'alert', hidden: true });
  const submit = h('button', { class: 'btn btn-primary', type: 'submit' }, icon(ICONS.trophy), 'Create the tournament');

  /** @param {string} text @param {string} what @param {number} lo @param {number} hi */
  const whole = (text, what, lo, hi) => {
    const n = Number(text.trim());
    if (!Number.isInteger(n) || n < lo || n > hi) throw new Error(`${what} is a whole number from ${lo} to ${hi}.`);
    return n;
  };

  /** @param {SubmitEvent} e */
  async function send(e) {
    e.preventDefault();
    problem.hidden = true;
    /** @type {Record<string, unknown>} */
    let body;
    try {
      const n = whole(length.value, format === 'swiss' ? 'Rounds' : 'Minutes', 1, format === 'swiss' ? 30 : 1440);
      const shares = prizes.value.split(',').map((s) => s.trim()).filter(Boolean).map((s) => {
        const p = Number(s);
        if (!(p > 0 && p <= 100)) throw new Error('Prizes are percentages of the pool, such as 60, 30.');
        return Math.round(p * 100);
      });
      body = {
        name: name.value.trim(),
        game,
        format,
        ...(format === 'swiss' ? { rounds: n } : { minutes: n }),
        starts_in_seconds: whole(starts.value, 'The start', 0, 100_000) * 60,
        entry,
        entry_fee: parseAmount(fee.value).toString(),
        prizes_bps: shares,
        max_players: whole(max.value, 'The most players', 2, 10_000),
      };
    } catch (err) {
      problem.textContent = err instanceof Error ? err.message : String(err);
      problem.hidden = false;
      return;
    }
    submit.disabled = true;
    try {
      /** @type {{ tournament: { id: number } }} */
      const receipt = await api('POST', '/api/tournaments', body, { idempotencyKey: key });
      created(receipt.tournament.id);
    } catch (err) {
      problem.textContent = err instanceof Error ? err.message : String(err);
      problem.hidden = false;
    } finally {
      submit.disabled = false;
    }
  }

  return h(
    'form',
    { class: 'card tournament-form', id: 'tournament-create', onsubmit: send },
    h('h2', { class: 'card-title', text: 'A new tournament' }),
    h(
      'div',
      { class: 'form-grid' },
      field('t-name', 'Name', name),
      segmented('Game', [{ value: 'tic-tac-toe', label: 'Tic-tac-toe' }, { value: 'sos', label: 'SOS' }], game, (v) => { game = v; }),
      segmented('Format', [{ value: 'swiss', label: 'Swiss' }, { value: 'arena', label: 'Arena' }], format, (v) => {
        format = /** @type {'swiss' | 'arena'} */ (v);
        lengthLabel.textContent = format === 'swiss' ? 'Rounds' : 'Minutes';
        length.value = format === 'swiss' ? '3' : '30';
      }),
      h('div', { class: 'field' }, lengthLabel, length),
      segmented('Who may enter', [{ value: 'everyone', label: 'Everyone' }, { value: 'people', label: 'People' }, { value: 'bots', label: 'Bots' }], entry, (v) => { entry = v; }),
      field('t-starts', 'Starts in (minutes)', starts),
      field('t-fee', 'Entry fee (0 for free)', fee),
      field('t-prizes', 'Prizes (% of the pool by rank)', prizes),
      field('t-max', 'Most players', max),
    ),
    problem,
    h('div', { class: 'panel-actions' }, submit),
  );
}
