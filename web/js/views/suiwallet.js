// @ts-check
/**
 * The wallet page's "Connect a Sui wallet" card: the Sui wallets the browser has (found
 * through the Wallet Standard, walletstandard.js), connecting one and logging in with it,
 * and disconnecting. Each outcome is said in plain words: no wallet installed, the user
 * said no (nothing changes), the server refused the signature (its stable code shown).
 * @module
 */

import { ApiError } from '../api.js';
import { announce, h, replace, toast } from '../dom.js';
import { shortAddress } from '../format.js';
import { connectSuiWallet, disconnectSuiWallet, identity, session } from '../session.js';
import { isRejection, onWallets, suiWallets } from '../walletstandard.js';

/** @typedef {import('../walletstandard.js').StandardWallet} StandardWallet */

/**
 * A wallet's icon, when it is an image data URL (as the standard requires): nothing is
 * fetched on a wallet's say-so.
 * @param {StandardWallet} wallet
 */
function walletIcon(wallet) {
  const src = String(wallet.icon ?? '');
  return /^data:image\/(svg\+xml|png|webp|gif|jpeg);/.test(src) ? h('img', { class: 'sui-wallet-icon', src, alt: '', width: '28', height: '28' }) : h('span', { class: 'sui-wallet-icon', 'aria-hidden': 'true' });
}

/**
 * Why connecting did not work, for the player.
 * @param {StandardWallet} wallet
 * @param {unknown} error
 */
export function connectProblem(wallet, error) {
  const who = identity();
  const still = session.status === 'online' && who ? ` Nothing changed: you still play as ${shortAddress(who.address)}.` : ' Nothing changed.';
  if (error instanceof ApiError && error.code >= 0) {
    return `The server refused ${wallet.name}'s login (code ${error.code}, ${error.error}): ${error.message}${still}`;
  }
  if (isRejection(error)) return `${wallet.name}: the request was declined in the wallet.${still}`;
  const message = error instanceof Error ? error.message : String(error);
  return `${wallet.name} could not log you in: ${message}${still}`;
}

/** @returns {{ element: HTMLElement, render: () => void, stop: () => void }} */
export function suiWalletCard() {
  const element = h('section', { class: 'card sui-wallet', 'aria-labelledby': 'sui-wallet-title' });
  const problem = h('p', { class: 'inline-error', id: 'sui-wallet-problem', role: 'alert', hidden: true });
  /** @type {string | null} the wallet being connected */
  let busy = null;
  let key = '';

  /** @param {string | null} text */
  function showProblem(text) {
    problem.hidden = !text;
    problem.textContent = text ?? '';
  }

  /** @param {StandardWallet} wallet */
  async function connect(wallet) {
    if (busy) return;
    busy = wallet.name;
    showProblem(null);
    render(true);
    try {
      await connectSuiWallet(wallet);
      const who = identity();
      const text = `Logged in with ${wallet.name} as ${who ? shortAddress(who.address) : 'its account'}.`;
      announce(text);
      toast(text, { kind: 'success' });
    } catch (e) {
      showProblem(connectProblem(wallet, e));
    } finally {
      busy = null;
      render(true);
    }
  }

  async function disconnect() {
    const name = session.connected?.wallet.name ?? 'The wallet';
    await disconnectSuiWallet();
    const text = `${name} is disconnected: you play with this browser's key again.`;
    announce(text);
    toast(text);
  }

  function render(force = false) {
    const wallets = suiWallets();
    const c = session.connected;
    const k = `${c?.address}|${wallets.map((w) => w.name).join(',')}|${busy}|${session.status}|${session.walletNotice}`;
    const notice = !c && session.walletNotice ? h('p', { class: 'notice', id: 'sui-wallet-notice', role: 'status', text: session.walletNotice }) : null;
    if (k === key && !force) return;
    key = k;
    const head = h('h2', { class: 'card-title', id: 'sui-wallet-title', text: 'Connect a Sui wallet' });
    if (c) {
      replace(
        element,
        head,
        h(
          'div',
          { class: 'sui-wallet-row is-connected' },
          walletIcon(c.wallet),
          h('span', { class: 'sui-wallet-name' }, h('strong', { text: c.wallet.name }), h('span', { class: 'muted small mono', text: shortAddress(c.address) })),
          h('button', { class: 'btn btn-small', type: 'button', text: 'Disconnect', onclick: () => disconnect() }),
        ),
        h('p', { class: 'muted small', id: 'sui-wallet-note', text: `You play as your ${c.wallet.name} account: it signed the server's login message. Moves are not signed by the wallet (it would ask you at every move); the server signs each match's record, as for every move it accepts. A reload or a disconnect returns to this browser's own key.` }),
        problem,
      );
      return;
    }
    if (!wallets.length) {
      replace(
        element,
        head,
        notice,
        h('p', { class: 'muted', id: 'sui-wallet-none', text: 'No Sui wallet was found in this browser. Install a Sui wallet extension (any that follows the Wallet Standard), then reload this page.' }),
        problem,
      );
      return;
    }
    replace(
      element,
      head,
      notice,
      h('p', { class: 'muted small', text: 'Play as your Sui wallet’s account instead of this browser’s key: the wallet asks you to share the account, then to sign a login message. No transaction, no fee.' }),
      h(
        'ul',
        { class: 'list sui-wallet-list' },
        wallets.map((w) =>
          h(
            'li',
            { class: 'sui-wallet-row' },
            walletIcon(w),
            h('span', { class: 'sui-wallet-name' }, h('strong', { text: w.name })),
            h('button', {
              class: 'btn btn-small btn-primary',
              type: 'button',
              disabled: busy !== null || session.status === 'logging-in',
              'aria-label': `Connect ${w.name}`,
              text: busy === w.name ? 'Waiting for the wallet…' : 'Connect',
              onclick: () => connect(w),
            }),
          ),
        ),
      ),
      problem,
    );
  }

  const stops = [onWallets('register', () => render()), onWallets('unregister', () => render())];
  render();
  return { element, render, stop: () => stops.forEach((s) => s()) };
}
