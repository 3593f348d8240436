// @ts-check
/**
 * The wallet: the address with a copy button, the display name (set, change, clear), the
 * balance and the ledger, withdrawals, exporting and importing the key, logging in and out,
 * connecting a Sui wallet instead (suiwallet.js); and for the owner, deposits, the reserve
 * and collecting it.
 * @module
 */

import { api, ApiError, INSUFFICIENT_BALANCE, newestOnly } from '../api.js';
import { announce, copyButton, h, ICONS, icon, replace, toast } from '../dom.js';
import { formatAmount, isAddress, notEnoughText, parseAmount } from '../format.js';
import { playerLabel, rememberProfile } from '../identity.js';
import { exportKeyFile, readKeyFile } from '../wallet.js';
import { identity, login, logout, onInbox, onSession, refreshMe, session, switchWallet } from '../session.js';
import { suiWalletCard } from './suiwallet.js';

/**
 * @typedef {{ seq: number, amount: string, reason: string, match_id: number | null, at_ms: number }} LedgerEntry
 */

/** A ledger entry's date and time, in the reader's locale and time zone. */
const DAY = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
const DAY_YEAR = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const TIME = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' });

/** @param {number} ms @returns {HTMLElement} a `<time>`: the day (with the year if not this one) over the time. */
function when(ms) {
  const at = new Date(ms);
  const day = at.getFullYear() === new Date().getFullYear() ? DAY : DAY_YEAR;
  return h('time', { datetime: at.toISOString(), title: at.toLocaleString() }, h('span', { text: day.format(at) }), h('span', { class: 'muted', text: TIME.format(at) }));
}

const REASONS = /** @type {Record<string, string>} */ ({
  deposit: 'Deposit',
  withdrawal: 'Withdrawal',
  stake: 'Stake',
  payout: 'Payout',
  refund: 'Refund',
  collect: 'Reserve collected',
  reserve_share: 'House share',
});

/**
 * @param {HTMLElement} root
 * @returns {() => void}
 */
export function mount(root) {
  /** @type {LedgerEntry[] | null} */
  let entries = null;
  /** @type {number | null} */
  let nextBefore = null;
  /** @type {{ reserve: string, deposited: string, withdrawn: string } | null} */
  let reserve = null;

  const identityCard = h('div', { class: 'card wallet-identity' });
  const profile = h('div', { class: 'card wallet-name' });
  const money = h('div', { class: 'card' });
  const ledger = h('div', { class: 'card' });
  const keys = h('div', { class: 'card' });
  const owner = h('div', { class: 'card', hidden: true });
  const sui = suiWalletCard();
  replace(
    root,
    h(
      'section',
      { class: 'view view-wallet' },
      h('div', { class: 'page-head' }, h('h1', { class: 'page-title', text: 'Wallet' })),
      h('div', { class: 'wallet-grid' }, h('div', { class: 'column' }, identityCard, sui.element, profile, money, owner), h('div', { class: 'column' }, ledger, keys)),
    ),
  );

  let identityKey = '';
  function renderIdentity() {
    const w = identity();
    const connected = session.connected;
    // Rebuilt only when it changes, so a focused button keeps its focus.
    const key = `${w?.address}|${session.status}|${session.created}|${session.problem}`;
    if (key === identityKey) return;
    identityKey = key;
    if (!w) {
      replace(identityCard, h('h2', { class: 'card-title', text: 'Your address' }), h('p', { class: 'inline-error', role: 'alert', text: session.problem ?? 'Loading your wallet…' }));
      return;
    }
    const statusText = {
      starting: 'Starting…',
      unsupported: session.problem ?? '',
      anonymous: 'Logged out on this browser.',
      'logging-in': 'Signing in…',
      online: connected ? `Logged in: ${connected.wallet.name} signed the server’s challenge.` : 'Logged in: your key signed the server’s challenge.',
      error: session.problem ?? 'Not logged in.',
    }[session.status];
    replace(
      identityCard,
      h(
        'div',
        { class: 'card-title-row' },
        h('h2', { class: 'card-title', text: 'Your address' }),
        session.status === 'online' ? h('a', { class: 'btn btn-small btn-ghost', href: `/player/${w.address}`, text: 'My page →' }) : null,
      ),
      h('div', { class: 'address-line' }, h('code', { class: 'mono address-full', id: 'wallet-address', text: w.address }), copyButton(() => w.address, 'address')),
      h('p', { class: 'muted small', text: connected ? `Your address is your ${connected.wallet.name} account’s. Share it so others can challenge you.` : 'Your address is your Ed25519 public key’s Sui address. Share it so others can challenge you.' }),
      session.created && !connected ? h('p', { class: 'notice', text: 'A new key was made for you in this browser. Export it to keep your balance safe.' }) : null,
      h(
        'div',
        { class: 'login-line' },
        h('span', { class: 'login-status' }, h('span', { class: `dot ${session.status === 'online' ? 'ok' : 'off'}`, 'aria-hidden': 'true' }), h('span', { class: 'muted', text: statusText })),
        session.status === 'online'
          ? h('button', { class: 'btn btn-small', type: 'button', text: 'Log out', onclick: () => logout() })
          : session.status !== 'logging-in' && session.status !== 'unsupported'
            ? h('button', { class: 'btn btn-small btn-primary', type: 'button', text: 'Log in', onclick: () => login() })
            : null,
      ),
    );
  }

  let profileKey = '';
  function renderProfile() {
    const me = session.me;
    // Rebuilt only when the name changes, so typing keeps its focus.
    const key = me ? `${me.address}|${me.stats.name ?? ''}|${me.stats.bot}` : '';
    if (key === profileKey) return;
    profileKey = key;
    if (!me) {
      replace(profile, h('h2', { class: 'card-title', text: 'Display name' }), h('p', { class: 'muted', text: 'Log in to choose a display name.' }));
      return;
    }
    const current = me.stats.name ?? null;
    rememberProfile(me.address, { name: current, bot: me.stats.bot === true });
    const input = h('input', { class: 'input', id: 'display-name', type: 'text', value: current ?? '', placeholder: 'e.g. ada_l', autocomplete: 'nickname', spellcheck: 'false', maxlength: '20', 'aria-describedby': 'display-name-rules display-name-error' });
    const error = h('p', { class: 'inline-error', id: 'display-name-error', role: 'alert', hidden: true });
    /** @param {string | null} name */
    const save = async (name) => {
      error.hidden = true;
      input.removeAttribute('aria-invalid');
      try {
        /** @type {{ name: string | null, bot: boolean }} */
        const saved = await api('PUT', '/api/me/name', { name });
        rememberProfile(me.address, saved);
        const said = saved.name ? `Your display name is now ${saved.name}.` : 'Your display name is cleared.';
        announce(said);
        toast(said, { kind: 'success' });
        await refreshMe();
      } catch (err) {
        error.hidden = false;
        error.textContent = err instanceof Error ? err.message : String(err);
        input.setAttribute('aria-invalid', 'true');
        input.focus();
      }
    };
    replace(
      profile,
      h('h2', { class: 'card-title', text: 'Display name' }),
      h('p', { class: 'profile-preview' }, playerLabel(me.address, { profile: { name: current, bot: me.stats.bot === true }, link: false, size: 32 })),
      h(
        'form',
        {
          class: 'inline-form',
          onsubmit: (/** @type {Event} */ e) => {
            e.preventDefault();
            const name = input.value.trim();
            save(name === '' ? null : name);
          },
        },
        h('label', { class: 'field-label', for: 'display-name', text: 'Name shown beside your address' }),
        h(
          'div',
          { class: 'input-row' },
          input,
          h('button', { class: 'btn btn-primary', type: 'submit', text: 'Save' }),
          current ? h('button', { class: 'btn', type: 'button', text: 'Clear', onclick: () => save(null) }) : null,
        ),
        error,
        h('p', { class: 'muted small', id: 'display-name-rules', text: '3 to 20 letters, digits, _ or -. Names that look alike (O and 0, l and 1, rn and m…) count as the same. Your address stays your identity.' }),
      ),
    );
  }

  function renderMoney() {
    const me = session.me;
    if (!me) {
      replace(money, h('h2', { class: 'card-title', text: 'Balance' }), h('p', { class: 'muted', text: 'Log in to see your balance.' }));
      return;
    }
    const amountInput = h('input', { class: 'input', id: 'withdraw-amount', type: 'text', inputmode: 'decimal', placeholder: '0.00', autocomplete: 'off' });
    const error = h('p', { class: 'inline-error', role: 'alert', hidden: true });
    replace(
      money,
      h('h2', { class: 'card-title', text: 'Balance' }),
      h('p', { class: 'big-balance', id: 'wallet-balance', text: formatAmount(me.balance) }),
      h('p', { class: 'muted small', text: 'Play money, in coins of a million units. The operator credits deposits; stakes are held in escrow until a match ends.' }),
      h(
        'form',
        {
          class: 'inline-form',
          onsubmit: async (/** @type {Event} */ e) => {
            e.preventDefault();
            error.hidden = true;
            try {
              const amount = parseAmount(amountInput.value);
              if (amount === 0n) throw new Error('Type how much to withdraw.');
              await api('POST', '/api/ledger/withdraw', { amount: amount.toString() });
              amountInput.value = '';
              announce(`Withdrew ${formatAmount(amount)}.`);
              toast(`Withdrew ${formatAmount(amount)}`, { kind: 'success' });
              await Promise.all([refreshMe(), loadLedger()]);
            } catch (err) {
              error.hidden = false;
              error.textContent = err instanceof Error ? err.message : String(err);
              if (err instanceof ApiError && err.code === INSUFFICIENT_BALANCE) {
                error.textContent = notEnoughText(parseAmount(amountInput.value), session.me ? BigInt(session.me.balance) : null);
              }
            }
          },
        },
        h('label', { class: 'field-label', for: 'withdraw-amount', text: 'Withdraw' }),
        h('div', { class: 'input-row' }, amountInput, h('button', { class: 'btn', type: 'submit', text: 'Withdraw' })),
        error,
      ),
    );
  }

  function renderLedger() {
    const rows = entries ?? [];
    replace(
      ledger,
      h('h2', { class: 'card-title', text: 'Ledger' }),
      !session.me
        ? h('p', { class: 'muted', text: 'Log in to see your ledger.' })
        : entries === null
          ? h('p', { class: 'muted', text: 'Loading…' })
          : rows.length
            ? h(
                'div',
                { class: 'table-wrap' },
                h(
                  'table',
                  { class: 'table ledger-table' },
                  h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'When' }), h('th', { scope: 'col', text: 'What' }), h('th', { scope: 'col', text: 'Match' }), h('th', { scope: 'col', class: 'num', text: 'Amount' }))),
                  h(
                    'tbody',
                    {},
                    rows.map((e) =>
                      h(
                        'tr',
                        {},
                        h('td', { class: 'when' }, when(e.at_ms)),
                        h('td', { text: REASONS[e.reason] ?? e.reason }),
                        h('td', {}, e.match_id ? h('a', { href: `/match/${e.match_id}`, text: `#${e.match_id}` }) : '—'),
                        h('td', { class: `num amount ${e.amount.startsWith('-') ? 'debit' : 'credit'}`, text: formatAmount(e.amount, { sign: true }) }),
                      ),
                    ),
                  ),
                ),
              )
            : h('p', { class: 'muted empty', text: 'Nothing yet. Deposits, stakes and payouts appear here.' }),
      nextBefore ? h('button', { class: 'btn btn-small btn-ghost', type: 'button', text: 'Older entries', onclick: () => loadLedger(true) }) : null,
    );
  }

  function renderKeys() {
    const w = session.wallet;
    const fileInput = h('input', { type: 'file', accept: 'application/json,.json,.txt', class: 'visually-hidden', id: 'key-file' });
    const paste = h('textarea', { class: 'input mono', id: 'key-paste', rows: '3', placeholder: 'Paste a key file or a 64-digit secret key', spellcheck: 'false' });
    const error = h('p', { class: 'inline-error', role: 'alert', hidden: true });
    const doImport = async (/** @type {string} */ text) => {
      error.hidden = true;
      try {
        const wallet = await readKeyFile(text);
        if (wallet.address === session.wallet?.address) {
          toast('This is already your key.');
          return;
        }
        await switchWallet(wallet);
        paste.value = '';
        announce('Key imported. You are now playing as the imported address.');
        toast('Key imported', { kind: 'success' });
      } catch (e) {
        error.hidden = false;
        error.textContent = e instanceof Error ? e.message : String(e);
      }
    };
    fileInput.addEventListener('change', async () => {
      const file = fileInput.files?.[0];
      if (file) await doImport(await file.text());
      fileInput.value = '';
    });
    replace(
      keys,
      h('h2', { class: 'card-title', text: session.connected ? 'This browser’s key' : 'Your key' }),
      session.connected ? h('p', { class: 'notice', text: `You play with ${session.connected.wallet.name} now; this is the key this browser plays with when it is disconnected. Your wallet keeps its own key.` }) : null,
      h('p', { class: 'muted small' }, 'The key lives only in this browser. The export is the same file ', h('code', { text: 'triad keygen' }), ' writes, so the terminal can use it too. Whoever has it controls your balance.'),
      h(
        'div',
        { class: 'button-row' },
        h(
          'button',
          {
            class: 'btn',
            type: 'button',
            disabled: !w,
            onclick: async () => {
              if (!w) return;
              const text = await exportKeyFile(w);
              const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
              const a = h('a', { href: url, download: 'triad-key.json' });
              document.body.appendChild(a);
              a.click();
              a.remove();
              setTimeout(() => URL.revokeObjectURL(url), 1000);
              announce('Key file downloaded.');
            },
          },
          icon(ICONS.download),
          'Export key file',
        ),
        // The input first: its focus shows on the label that follows it (app.css).
        fileInput,
        h('label', { class: 'btn', for: 'key-file' }, icon(ICONS.upload), 'Import key file'),
      ),
      h('label', { class: 'field-label', for: 'key-paste', text: 'Or paste a key' }),
      paste,
      h('div', { class: 'button-row' }, h('button', { class: 'btn', type: 'button', text: 'Import pasted key', onclick: () => doImport(paste.value) })),
      h('p', { class: 'muted small', text: 'Importing replaces the key in this browser. Export the current one first if it holds a balance.' }),
      error,
    );
  }

  function renderOwner() {
    owner.hidden = !session.me?.owner;
    if (owner.hidden) return;
    const to = h('input', { class: 'input mono', id: 'deposit-to', placeholder: '0x…', autocomplete: 'off', spellcheck: 'false' });
    const amount = h('input', { class: 'input', id: 'deposit-amount', inputmode: 'decimal', placeholder: '10', autocomplete: 'off' });
    const error = h('p', { class: 'inline-error', role: 'alert', hidden: true });
    replace(
      owner,
      h('h2', { class: 'card-title', text: 'Operator' }),
      reserve
        ? h('p', { class: 'muted small', text: `Reserve ${formatAmount(reserve.reserve)} · deposited ${formatAmount(reserve.deposited)} · withdrawn ${formatAmount(reserve.withdrawn)}` })
        : null,
      h(
        'form',
        {
          onsubmit: async (/** @type {Event} */ e) => {
            e.preventDefault();
            error.hidden = true;
            try {
              if (!isAddress(to.value)) throw new Error('Paste the address: 0x followed by 64 hexadecimal digits.');
              const value = parseAmount(amount.value);
              if (value === 0n) throw new Error('Type how much to deposit.');
              await api('POST', '/api/ledger/deposit', { to: to.value.trim().toLowerCase(), amount: value.toString() });
              toast(`Deposited ${formatAmount(value)}`, { kind: 'success' });
              amount.value = '';
              loadReserve();
            } catch (err) {
              error.hidden = false;
              error.textContent = err instanceof Error ? err.message : String(err);
            }
          },
        },
        h('label', { class: 'field-label', for: 'deposit-to', text: 'Deposit to' }),
        to,
        h('label', { class: 'field-label', for: 'deposit-amount', text: 'Amount' }),
        h('div', { class: 'input-row' }, amount, h('button', { class: 'btn', type: 'submit', text: 'Deposit' })),
        error,
      ),
      h(
        'button',
        {
          class: 'btn btn-ghost',
          type: 'button',
          onclick: async () => {
            try {
              await api('POST', '/api/ledger/collect');
              toast('Reserve collected', { kind: 'success' });
              await Promise.all([refreshMe(), loadReserve(), loadLedger()]);
            } catch (err) {
              toast(err instanceof Error ? err.message : String(err), { kind: 'error' });
            }
          },
        },
        'Collect the reserve',
      ),
    );
  }

  const ledgerRead = newestOnly();
  async function loadLedger(more = false) {
    if (!session.me) return;
    const newest = ledgerRead();
    try {
      /** @type {{ balance: string, entries: LedgerEntry[], next_before: number | null }} */
      const page = await api('GET', `/api/ledger?limit=25${more && nextBefore ? `&before=${nextBefore}` : ''}`);
      // A read asked before another one (a live event, a click on "more") was drawn: drawing
      // it now would bring back the older page.
      if (!newest()) return;
      entries = more && entries ? [...entries, ...page.entries] : page.entries;
      nextBefore = page.next_before;
    } catch (e) {
      if (!newest()) return;
      toast(e instanceof Error ? e.message : String(e), { kind: 'error' });
    }
    renderLedger();
  }

  async function loadReserve() {
    if (!session.me?.owner) return;
    try {
      reserve = await api('GET', '/api/ledger/reserve');
    } catch {
      reserve = null;
    }
    renderOwner();
  }

  let lastStatus = '';
  let lastBalance = '';
  const stopSession = onSession(() => {
    renderIdentity();
    sui.render();
    renderProfile();
    const balance = session.me?.balance ?? '';
    if (balance !== lastBalance) {
      lastBalance = balance;
      renderMoney();
      if (session.me) loadLedger();
    }
    if (session.status !== lastStatus) {
      lastStatus = session.status;
      renderMoney();
      renderKeys();
      renderOwner();
      renderLedger();
      if (session.me) {
        loadLedger();
        loadReserve();
      }
    }
  });
  const stopInbox = onInbox((event, info) => {
    if (info.live && event.kind.type === 'transferred') loadReserve();
  });

  renderIdentity();
  renderProfile();
  renderMoney();
  renderLedger();
  renderKeys();
  renderOwner();
  lastStatus = session.status;
  lastBalance = session.me?.balance ?? '';
  if (session.me) {
    loadLedger();
    loadReserve();
  }
  return () => {
    stopSession();
    stopInbox();
    sui.stop();
  };
}
