// @ts-check
/**
 * Online: find an opponent in the queue (as the SOS contract pairs players, with the stake shown), challenge an
 * address (as the Sui contract does), answer challenges, and watch live matches (small
 * boards that move live, liveboards.js).
 *
 * Everything updates from the WebSocket: the inbox (challenges to and from you, your
 * match starting, money) and the lobby (waits and matches starting and ending). When your
 * match starts, the page goes to it.
 * @module
 */

import { api, ApiError, INSUFFICIENT_BALANCE, newestOnly } from '../api.js';
import { every, serverNow } from '../clock.js';
import { announce, h, ICONS, icon, replace, segmented, toast } from '../dom.js';
import { formatAmount, formatCountdown, gameName, isAddress, notEnoughText, parseAmount, shortAddress } from '../format.js';
import { playerLabel } from '../identity.js';
import { LiveBoards } from '../liveboards.js';
import { realtime } from '../realtime.js';
import { headSeq, login, myAddress, onInbox, onSession, refreshMe, session } from '../session.js';

/**
 * @typedef {import('../session.js').MatchView} MatchView
 */

const STAKE_PRESETS = ['0', '0.1', '1', '5'];

/**
 * @param {HTMLElement} root
 * @param {{ navigate: (path: string) => void, query: URLSearchParams }} ctx
 * @returns {() => void}
 */
export function mount(root, ctx) {
  /** @type {{ incoming: MatchView[], outgoing: MatchView[] }} */
  let challenges = { incoming: [], outgoing: [] };
  /** @type {MatchView[]} */
  let liveMatches = [];
  /** @type {MatchView[]} */
  let waits = [];
  let busy = false;

  const queueForm = { game: /** @type {'tic-tac-toe' | 'sos'} */ ('tic-tac-toe'), stake: '0' };
  const challengeForm = { opponent: ctx.query.get('challenge') ?? '', game: /** @type {'tic-tac-toe' | 'sos'} */ ('tic-tac-toe'), stake: '0', first: 'challenger' };

  const account = h('div', { class: 'online-account' });
  const activeBox = h('div', { class: 'active-box' });
  const incomingBox = h('div');
  const outgoingBox = h('div');
  const liveBox = h('div');
  const liveBoards = new LiveBoards();
  const queueError = h('p', { class: 'inline-error', role: 'alert', hidden: true });
  const challengeError = h('p', { class: 'inline-error', role: 'alert', hidden: true });
  const queueSummary = h('p', { class: 'stake-summary' });
  const challengeSummary = h('p', { class: 'stake-summary' });

  // The quick match form.
  const queueStake = stakeInput('queue-stake', queueForm.stake, (v) => {
    queueForm.stake = v;
    renderForms();
  });
  const queueButton = h('button', { class: 'btn btn-primary btn-block', type: 'submit', text: 'Find an opponent' });
  const queueCard = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'queue-title',
      onsubmit: (/** @type {Event} */ e) => {
        e.preventDefault();
        joinQueue();
      },
    },
    h('div', { class: 'card-head' }, icon(ICONS.swords), h('h2', { id: 'queue-title', class: 'card-title', text: 'Quick match' })),
    h('p', { class: 'muted', text: 'Meet the first player waiting for the same game and stake, or wait for one.' }),
    segmented('Game', [{ value: 'tic-tac-toe', label: 'Tic-tac-toe' }, { value: 'sos', label: 'SOS' }], queueForm.game, (g) => {
      queueForm.game = /** @type {'tic-tac-toe' | 'sos'} */ (g);
    }, 'queue-game'),
    queueStake.field,
    queueSummary,
    queueError,
    queueButton,
  );

  // The challenge form.
  const opponentInput = h('input', {
    id: 'challenge-opponent',
    class: 'input mono',
    type: 'text',
    inputmode: 'text',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: '0x… (64 hex digits)',
    value: challengeForm.opponent,
    oninput: (/** @type {Event} */ e) => {
      challengeForm.opponent = /** @type {HTMLInputElement} */ (e.target).value.trim();
    },
  });
  const challengeStake = stakeInput('challenge-stake', challengeForm.stake, (v) => {
    challengeForm.stake = v;
    renderForms();
  });
  const challengeButton = h('button', { class: 'btn btn-primary btn-block', type: 'submit', text: 'Send challenge' });
  const challengeCard = h(
    'form',
    {
      class: 'card',
      'aria-labelledby': 'challenge-title',
      onsubmit: (/** @type {Event} */ e) => {
        e.preventDefault();
        sendChallenge();
      },
    },
    h('div', { class: 'card-head' }, icon(ICONS.online), h('h2', { id: 'challenge-title', class: 'card-title', text: 'Challenge a player' })),
    h('p', { class: 'muted', text: 'They see it at once and can accept or decline.' }),
    h('div', { class: 'field' }, h('label', { class: 'field-label', for: 'challenge-opponent', text: 'Their address' }), opponentInput),
    segmented('Game', [{ value: 'tic-tac-toe', label: 'Tic-tac-toe' }, { value: 'sos', label: 'SOS' }], challengeForm.game, (g) => {
      challengeForm.game = /** @type {'tic-tac-toe' | 'sos'} */ (g);
    }, 'challenge-game'),
    challengeStake.field,
    segmented('Who starts', [{ value: 'challenger', label: 'Me' }, { value: 'opponent', label: 'Them' }, { value: 'random', label: 'Random' }], challengeForm.first, (f) => {
      challengeForm.first = f;
    }, 'challenge-first'),
    challengeSummary,
    challengeError,
    challengeButton,
  );

  const challengesCard = h(
    'section',
    { class: 'card', 'aria-labelledby': 'challenges-title' },
    h('div', { class: 'card-head' }, icon(ICONS.flag), h('h2', { id: 'challenges-title', class: 'card-title', text: 'Challenges' })),
    h('h3', { class: 'section-title', text: 'For you' }),
    incomingBox,
    h('h3', { class: 'section-title', text: 'Sent' }),
    outgoingBox,
  );
  const liveCard = h(
    'section',
    { class: 'card', 'aria-labelledby': 'live-title' },
    h('div', { class: 'card-head' }, icon(ICONS.eye), h('h2', { id: 'live-title', class: 'card-title', text: 'Live now' })),
    liveBox,
  );

  replace(
    root,
    h(
      'section',
      { class: 'view view-online' },
      h('div', { class: 'page-head' }, h('h1', { class: 'page-title', text: 'Online' }), account),
      activeBox,
      h('div', { class: 'online-grid' }, h('div', { class: 'column' }, queueCard, challengeCard), h('div', { class: 'column' }, challengesCard, liveCard)),
    ),
  );

  /**
   * A stake field with presets; the value is coins as typed.
   * @param {string} id
   * @param {string} initial
   * @param {(value: string) => void} onChange
   */
  function stakeInput(id, initial, onChange) {
    const input = h('input', {
      id,
      class: 'input',
      type: 'text',
      inputmode: 'decimal',
      autocomplete: 'off',
      value: initial,
      'aria-describedby': `${id}-help`,
      oninput: () => {
        onChange(input.value);
        sync();
      },
    });
    const chips = STAKE_PRESETS.map((p) =>
      h('button', {
        type: 'button',
        class: 'chip chip-button',
        text: p === '0' ? 'Free' : formatAmount(parseAmount(p)),
        onclick: () => {
          input.value = p;
          onChange(p);
          sync();
        },
      }),
    );
    const sync = () => chips.forEach((c, i) => c.classList.toggle('is-on', safeParse(input.value) === parseAmount(STAKE_PRESETS[i])));
    sync();
    const field = h(
      'div',
      { class: 'field' },
      h('label', { class: 'field-label', for: id, text: 'Stake (each)' }),
      h('div', { class: 'stake-row' }, input, h('div', { class: 'chips', id: `${id}-help` }, chips)),
    );
    return { field, input };
  }

  /** @param {string} text */
  function safeParse(text) {
    try {
      return parseAmount(text);
    } catch {
      return -1n;
    }
  }

  /** @param {string} text @param {HTMLElement} out */
  function summary(text, out) {
    const stake = safeParse(text);
    if (stake < 0n) {
      out.textContent = 'Type an amount such as 1 or 0.25.';
      out.classList.add('bad');
      return;
    }
    out.classList.remove('bad');
    const balance = session.me ? BigInt(session.me.balance) : null;
    if (stake === 0n) {
      out.textContent = 'Free play: no money moves. It still counts for your rating.';
      return;
    }
    const afford = balance === null || balance >= stake;
    out.textContent = afford
      ? `Stake ${formatAmount(stake)} each · pot ${formatAmount(stake * 2n)}${balance === null ? '' : ` · your balance ${formatAmount(balance)}`}`
      : notEnoughText(stake, balance);
    out.classList.toggle('bad', !afford);
  }

  /**
   * Whether a stake typed as `text` can be sent: it reads as an amount and the balance
   * covers it. When not, the form's summary says why, and the button waits.
   * @param {string} text
   */
  function sendable(text) {
    const stake = safeParse(text);
    if (stake < 0n) return false;
    return !session.me || BigInt(session.me.balance) >= stake;
  }

  /** The stakes' summaries, and the buttons, which wait while a stake cannot be sent. */
  function renderForms() {
    summary(queueForm.stake, queueSummary);
    summary(challengeForm.stake, challengeSummary);
    const blocked = busy || session.status !== 'online' || !session.me || !!session.me.active_match;
    queueButton.disabled = blocked || !sendable(queueForm.stake);
    challengeButton.disabled = blocked || !sendable(challengeForm.stake);
  }

  /** @param {HTMLElement} box @param {string | null} message */
  function showError(box, message) {
    box.hidden = !message;
    box.textContent = message ?? '';
  }

  async function joinQueue() {
    showError(queueError, null);
    if (!sendable(queueForm.stake)) {
      queueStake.input.focus();
      return;
    }
    const stake = parseAmount(queueForm.stake);
    await run(queueError, async () => {
      /** @type {{ match: MatchView | null }} */
      const result = await api('POST', '/api/queue', { game: queueForm.game, stake: stake.toString() });
      await refreshMe();
      if (result.match && result.match.phase !== 'waiting') {
        announce('An opponent was waiting: the match starts.');
        ctx.navigate(`/match/${result.match.id}`);
      } else {
        announce(`You are waiting for an opponent for ${gameName(queueForm.game)}.`);
      }
    }, stake);
  }

  async function sendChallenge() {
    showError(challengeError, null);
    if (!isAddress(challengeForm.opponent)) {
      showError(challengeError, 'Paste their address: 0x followed by 64 hexadecimal digits.');
      return;
    }
    if (!sendable(challengeForm.stake)) {
      challengeStake.input.focus();
      return;
    }
    const stake = parseAmount(challengeForm.stake);
    await run(challengeError, async () => {
      await api('POST', '/api/challenges', { opponent: challengeForm.opponent.toLowerCase(), game: challengeForm.game, stake: stake.toString(), first: challengeForm.first });
      announce(`Challenge sent to ${shortAddress(challengeForm.opponent)}.`);
      toast('Challenge sent. You will be taken to the match when they accept.', { kind: 'success' });
      await Promise.all([loadChallenges(), refreshMe()]);
    }, stake);
  }

  /**
   * Runs an action with the buttons disabled; its error is shown in `box` (or a toast).
   * @param {HTMLElement | null} box
   * @param {() => Promise<void>} action
   * @param {bigint} [stake] what the action puts at stake, for a refusal in coins
   */
  async function run(box, action, stake) {
    if (busy) return;
    busy = true;
    renderDynamic();
    try {
      await action();
    } catch (e) {
      let message = e instanceof Error ? e.message : String(e);
      if (e instanceof ApiError && e.code === INSUFFICIENT_BALANCE) {
        // The balance changed since it was shown: with the new one, a form's summary
        // says what is short (and its button waits); elsewhere, say it in coins.
        await refreshMe().catch(() => {});
        const balance = session.me ? BigInt(session.me.balance) : null;
        const said = box !== null && balance !== null && stake !== undefined && balance < stake;
        if (stake !== undefined) message = said ? '' : notEnoughText(stake, balance);
      }
      if (box) showError(box, message || null);
      else toast(message, { kind: 'error' });
    } finally {
      busy = false;
      renderDynamic();
    }
  }

  const challengesRead = newestOnly();
  async function loadChallenges() {
    if (!myAddress()) return;
    const newest = challengesRead();
    try {
      /** @type {{ incoming: MatchView[], outgoing: MatchView[] }} */
      const answer = await api('GET', '/api/challenges');
      if (!newest()) return;
      challenges = answer;
    } catch (e) {
      // A read older than the list drawn failed: the list is newer than that failure.
      if (!newest()) return;
      if (!stopped) toast(e instanceof Error ? e.message : String(e), { kind: 'error' });
    }
    if (stopped) return;
    renderDynamic();
  }

  const lobbyRead = newestOnly();
  async function loadLobby() {
    const newest = lobbyRead();
    try {
      /** @type {[{ matches: MatchView[] }, { matches: MatchView[] }, { matches: MatchView[] }]} */
      const [playing, ready, waiting] = await Promise.all([
        api('GET', '/api/matches?status=in_progress&limit=12', undefined, { auth: false }),
        api('GET', '/api/matches?status=ready&limit=12', undefined, { auth: false }),
        api('GET', '/api/matches?status=waiting&limit=12', undefined, { auth: false }),
      ]);
      // Left meanwhile: drawing the boards now would follow their matches again.
      if (stopped || !newest()) return;
      liveMatches = [...ready.matches, ...playing.matches].filter((m) => m.origin !== 'computer').sort((a, b) => b.id - a.id);
      waits = waiting.matches.filter((m) => m.origin === 'queue');
      liveBoards.show(liveMatches);
    } catch {
      /* the lobby is a convenience; its next event retries */
    }
    if (!stopped) renderDynamic();
  }

  function renderAccount() {
    const s = session.status;
    if (s === 'online' && session.me) {
      replace(account, h('span', { class: 'muted', text: 'Play people: meet someone in the queue, or challenge them by address.' }));
      return;
    }
    if (s === 'logging-in' || s === 'starting') {
      replace(account, h('span', { class: 'muted', text: 'Signing in with your wallet…' }));
      return;
    }
    replace(
      account,
      h('span', { class: 'muted', text: session.problem ?? 'You are logged out.' }),
      s !== 'unsupported' ? h('button', { class: 'btn btn-small btn-primary', type: 'button', text: 'Log in', onclick: () => login() }) : null,
    );
  }

  function renderDynamic() {
    const online = session.status === 'online' && !!session.me;
    const me = session.me;
    const active = me?.active_match ?? null;
    renderAccount();
    renderForms();

    queueButton.textContent = busy ? 'Working…' : 'Find an opponent';

    // My active match or wait.
    if (!online || !active) {
      replace(activeBox);
    } else if (active.phase === 'waiting' && active.origin === 'queue') {
      const cancelAt = active.cancel_allowed_at_ms ?? 0;
      const left = cancelAt - serverNow();
      replace(
        activeBox,
        h(
          'div',
          { class: 'card active-card waiting', role: 'status' },
          h('div', { class: 'pulse', 'aria-hidden': 'true' }),
          h('div', { class: 'active-text' }, h('strong', { text: 'Waiting for an opponent' }), h('span', { class: 'muted', text: `${gameName(active.game)} · ${active.stake === '0' ? 'free' : `stake ${formatAmount(active.stake)}`}` })),
          left > 0
            ? h('span', { class: 'hint cancel-hint' }, icon(ICONS.clock), `You can cancel in ${formatCountdown(left)}`)
            : h('button', { class: 'btn', type: 'button', disabled: busy, text: 'Cancel', onclick: () => cancelQueue() }),
        ),
      );
    } else if (active.phase === 'waiting') {
      replace(activeBox);
    } else {
      replace(
        activeBox,
        h(
          'div',
          { class: 'card active-card' },
          h('div', { class: 'active-text' }, h('strong', { text: `Your match #${active.id} is on` }), h('span', { class: 'muted', text: `${gameName(active.game)} · ${active.stake === '0' ? 'free' : `stake ${formatAmount(active.stake)}`}` })),
          h('a', { class: 'btn btn-primary', href: `/match/${active.id}`, text: 'Resume' }),
        ),
      );
    }

    // Challenges.
    if (!online) {
      replace(incomingBox, h('p', { class: 'muted empty', text: 'Log in to see your challenges.' }));
      replace(outgoingBox);
    } else {
      replace(
        incomingBox,
        challenges.incoming.length
          ? h('ul', { class: 'list' }, challenges.incoming.map((m) => challengeRow(m, true)))
          : h('p', { class: 'muted empty', text: 'No challenges for you right now.' }),
      );
      replace(
        outgoingBox,
        challenges.outgoing.length
          ? h('ul', { class: 'list' }, challenges.outgoing.map((m) => challengeRow(m, false)))
          : h('p', { class: 'muted empty', text: 'None.' }),
      );
    }

    // The lobby: the waits, as rows, and the matches under way, as boards that move.
    replace(
      liveBox,
      waits.length
        ? h(
            'ul',
            { class: 'list' },
            waits.map((m) =>
              h(
                'li',
                { class: 'list-row' },
                h(
                  'span',
                  { class: 'row-main' },
                  h('span', {}, h('strong', { text: gameName(m.game) }), h('span', { class: 'muted', text: ` · ${m.stake === '0' ? 'free' : `stake ${formatAmount(m.stake)}`}` })),
                  h('span', { class: 'muted small' }, playerLabel(m.host, { size: 16 }), ' is waiting'),
                ),
                m.host !== myAddress() && online && !active
                  ? h('button', {
                      class: 'btn btn-small',
                      type: 'button',
                      disabled: busy,
                      text: 'Play',
                      onclick: () => {
                        queueForm.game = m.game;
                        queueForm.stake = formatAmount(m.stake).replace(/,/g, '');
                        joinQueue();
                      },
                    })
                  : null,
              ),
            ),
          )
        : null,
      liveMatches.length ? liveBoards.element : null,
      liveBoards.more,
      liveMatches.length || waits.length ? null : h('p', { class: 'muted empty', text: 'Nobody is playing right now. Start a match!' }),
    );
  }

  /** @param {MatchView} m @param {boolean} incoming */
  function challengeRow(m, incoming) {
    const c = m.challenge;
    if (!c) return h('li');
    const other = incoming ? c.challenger : c.opponent;
    const expires = c.expires_at_ms - serverNow();
    const first = c.first === 'random' ? 'random start' : (c.first === 'challenger') === incoming ? 'they start' : 'you start';
    const terms = `${gameName(m.game)} · ${m.stake === '0' ? 'free' : `stake ${formatAmount(m.stake)}`} · ${first}`;
    /** @type {(Node | null)[]} */
    let buttons;
    if (incoming) {
      buttons = [
        h('button', {
          class: 'btn btn-small btn-primary',
          type: 'button',
          disabled: busy,
          text: 'Accept',
          onclick: () =>
            run(null, async () => {
              // The terms shown above: the server refuses the acceptance if the
              // challenge's are not exactly these.
              await api('POST', `/api/challenges/${m.id}/accept`, { stake: m.stake, game: m.game, challenger: c.challenger, first: c.first });
              announce('Challenge accepted: the match starts.');
              ctx.navigate(`/match/${m.id}`);
            }, BigInt(m.stake)),
        }),
        h('button', {
          class: 'btn btn-small',
          type: 'button',
          disabled: busy,
          text: 'Decline',
          onclick: () =>
            run(null, async () => {
              await api('POST', `/api/challenges/${m.id}/decline`);
              announce('Challenge declined.');
              await loadChallenges();
            }),
        }),
      ];
    } else {
      const cancelLeft = (m.cancel_allowed_at_ms ?? 0) - serverNow();
      buttons = [
        cancelLeft > 0
          ? h('span', { class: 'hint', text: `withdraw in ${formatCountdown(cancelLeft)}` })
          : h('button', {
              class: 'btn btn-small',
              type: 'button',
              disabled: busy,
              text: 'Withdraw',
              onclick: () =>
                run(null, async () => {
                  await api('POST', `/api/challenges/${m.id}/withdraw`);
                  announce('Challenge withdrawn.');
                  await Promise.all([loadChallenges(), refreshMe()]);
                }),
            }),
      ];
    }
    return h(
      'li',
      { class: 'list-row challenge-row', dataset: { match: String(m.id) } },
      h(
        'span',
        { class: 'row-main' },
        h('span', {}, incoming ? 'From ' : 'To ', playerLabel(other, { size: 16 })),
        h('span', { class: 'muted small', text: `${terms} · expires in ${formatCountdown(expires)}` }),
      ),
      h('span', { class: 'row-actions' }, buttons),
    );
  }

  async function cancelQueue() {
    await run(null, async () => {
      await api('DELETE', '/api/queue');
      announce('You left the queue; your stake is back.');
      await refreshMe();
    });
  }

  // Live updates.
  /** @type {() => void} */
  let stopLobby = () => {};
  let stopped = false;
  headSeq()
    .catch(() => 0)
    .then((since) => {
      if (stopped) return;
      stopLobby = realtime.subscribe('lobby', since, {
        onEvent: (_e, info) => {
          if (info.live) lobbySoon();
        },
        onSynced: () => lobbySoon(),
      });
    });
  let lobbyTimer = 0;
  const lobbySoon = () => {
    window.clearTimeout(lobbyTimer);
    lobbyTimer = window.setTimeout(loadLobby, 50);
  };

  const stopInbox = onInbox((event, info) => {
    const k = event.kind;
    const me = myAddress();
    if (k.type === 'challenge_issued' && info.live && k.opponent === me) {
      const text = `New challenge from ${shortAddress(k.challenger)}: ${gameName(k.game)}${Number(k.stake) ? `, stake ${formatAmount(String(k.stake))}` : ''}.`;
      announce(text);
    }
    if (k.type === 'game_started' && (k.seats ?? []).some((/** @type {any} */ s) => s.human === me)) {
      announce('Your match starts.');
      ctx.navigate(`/match/${k.match_id}`);
      return;
    }
    if (k.type === 'challenge_declined' && info.live) toast('Your challenge was declined.');
    challengesSoon();
  });
  let challengesTimer = 0;
  const challengesSoon = () => {
    window.clearTimeout(challengesTimer);
    challengesTimer = window.setTimeout(loadChallenges, 50);
  };
  let wasOnline = false;
  const stopSession = onSession(() => {
    const online = session.status === 'online';
    if (online && !wasOnline) loadChallenges();
    wasOnline = online;
    renderDynamic();
  });
  // The countdowns (expiry, when a wait may be cancelled), once a second.
  let lastKey = '';
  const stopTicker = every(() => {
    const active = session.me?.active_match;
    const key = `${active?.id}:${active && (active.cancel_allowed_at_ms ?? 0) <= serverNow()}`;
    // Rebuilding every second would steal focus from the buttons; the countdown texts
    // are updated in place instead, and the whole rebuilt only when a button appears.
    if (key !== lastKey) {
      lastKey = key;
      renderDynamic();
    } else {
      refreshCountdowns();
    }
  });

  function refreshCountdowns() {
    const active = session.me?.active_match;
    const hint = activeBox.querySelector('.cancel-hint');
    if (active && hint) {
      replace(hint, icon(ICONS.clock), `You can cancel in ${formatCountdown((active.cancel_allowed_at_ms ?? 0) - serverNow())}`);
    }
    for (const row of root.querySelectorAll('.challenge-row')) {
      const id = Number(/** @type {HTMLElement} */ (row).dataset.match);
      const m = [...challenges.incoming, ...challenges.outgoing].find((c) => c.id === id);
      const small = row.querySelector('.small');
      if (m?.challenge && small) small.textContent = small.textContent?.replace(/expires in .*$/, `expires in ${formatCountdown(m.challenge.expires_at_ms - serverNow())}`) ?? '';
      const withdrawHint = row.querySelector('.row-actions .hint');
      if (m && withdrawHint) {
        const left = (m.cancel_allowed_at_ms ?? 0) - serverNow();
        if (left <= 0) renderDynamic();
        else withdrawHint.textContent = `withdraw in ${formatCountdown(left)}`;
      }
    }
  }

  wasOnline = session.status === 'online';
  renderDynamic();
  if (wasOnline) loadChallenges();
  loadLobby();
  return () => {
    stopped = true;
    stopLobby();
    liveBoards.stop();
    stopInbox();
    stopSession();
    stopTicker();
    window.clearTimeout(lobbyTimer);
    window.clearTimeout(challengesTimer);
  };
}
