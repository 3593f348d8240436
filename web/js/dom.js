// @ts-check
/**
 * A tiny element builder, the screen-reader announcer and toasts. Everything is built
 * with DOM calls, never `innerHTML`, so text from the network (addresses, messages) can
 * never become markup, and the page runs under a strict Content-Security-Policy.
 * @module
 */

/**
 * @typedef {string | number | Node | null | undefined | false} Child
 * @typedef {Record<string, unknown>} Props
 */

/**
 * Creates an element. Props: `class`, `text`, `on<event>` listeners, booleans for
 * attributes present or absent, `dataset`, and any other attribute as a string.
 *
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props | null} [props]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) applyProps(el, props);
  append(el, children);
  return el;
}

/**
 * @param {Element} el
 * @param {Props} props
 */
function applyProps(el, props) {
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.setAttribute('class', String(value));
    else if (key === 'text') el.textContent = String(value);
    else if (key === 'dataset') Object.assign(/** @type {HTMLElement} */ (el).dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    } else if (key === 'value' && 'value' in el) {
      /** @type {HTMLInputElement} */ (el).value = String(value);
    } else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
}

/**
 * @param {Node} el
 * @param {(Child | Child[])[]} children
 */
function append(el, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/**
 * Replaces an element's children.
 * @param {Element} el
 * @param {...(Child | Child[])} children
 */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

const SVG = 'http://www.w3.org/2000/svg';

/**
 * An inline icon from a 24×24 path list, drawn with the current colour.
 * @param {string[]} paths `d` attributes
 * @param {string} [className]
 */
export function icon(paths, className = 'icon') {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('class', className);
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  for (const d of paths) {
    const path = document.createElementNS(SVG, 'path');
    path.setAttribute('d', d);
    svg.appendChild(path);
  }
  return svg;
}

/** The icons the app uses. */
export const ICONS = {
  play: ['M4 4h4v4H4zM10 4h4v4h-4zM16 4h4v4h-4zM4 10h4v4H4zM10 10h4v4h-4zM16 10h4v4h-4zM4 16h4v4H4zM10 16h4v4h-4zM16 16h4v4h-4z'],
  online: ['M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18z', 'M3.6 9h16.8M3.6 15h16.8', 'M12 3c2.5 2.6 3.8 5.6 3.8 9s-1.3 6.4-3.8 9c-2.5-2.6-3.8-5.6-3.8-9S9.5 5.6 12 3z'],
  puzzle: ['M4 4h6v3a2 2 0 1 0 4 0V4h6v6h-3a2 2 0 1 0 0 4h3v6H4z'],
  trophy: ['M8 21h8M12 17v4', 'M7 4h10v5a5 5 0 0 1-10 0z', 'M7 6H4a3 3 0 0 0 3 4M17 6h3a3 3 0 0 1-3 4'],
  wallet: ['M3 7a2 2 0 0 1 2-2h13v4', 'M3 7v10a2 2 0 0 0 2 2h15V9H5a2 2 0 0 1-2-2z', 'M16 14h.01'],
  copy: ['M9 9h10v10H9z', 'M5 15V5h10'],
  check: ['M5 12l5 5 9-10'],
  eye: ['M2 12s3.5-7 10-7 10 7 10 7-3.5 7-10 7S2 12 2 12z', 'M12 9a3 3 0 1 0 0 6 3 3 0 0 0 0-6z'],
  flag: ['M5 21V4', 'M5 4h11l-2 4 2 4H5'],
  clock: ['M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18z', 'M12 7v5l3 2'],
  refresh: ['M20 11a8 8 0 1 0-2.3 5.7', 'M20 4v7h-7'],
  download: ['M12 4v11M7 10l5 5 5-5', 'M5 20h14'],
  upload: ['M12 20V9M7 14l5-5 5 5', 'M5 4h14'],
  bracket: ['M3 5h6v4h5', 'M3 19h6v-4h5', 'M14 8v8', 'M14 12h7'],
  swords: ['M4 4l9 9M4 4h4M4 4v4', 'M20 4l-9 9M20 4h-4M20 4v4', 'M7 17l-3 3M17 17l3 3', 'M6 14l4 4M18 14l-4 4'],
};

/** The screen-reader live region. */
let live = /** @type {HTMLElement | null} */ (null);
let liveTimer = 0;

/**
 * Says something to screen readers (polite): moves, results, what changed. The same text
 * twice is announced twice.
 * @param {string} text
 */
export function announce(text) {
  live ??= document.getElementById('live');
  if (!live) return;
  const region = live;
  region.textContent = '';
  window.clearTimeout(liveTimer);
  liveTimer = window.setTimeout(() => {
    region.textContent = text;
  }, 30);
}

/**
 * Shows a short message in the corner; errors stay longer. `action` adds a button.
 * @param {string} text
 * @param {{ kind?: 'info' | 'error' | 'success', action?: { label: string, run: () => void } }} [options]
 */
export function toast(text, options = {}) {
  const host = document.getElementById('toasts');
  if (!host) return;
  const kind = options.kind ?? 'info';
  const close = () => {
    item.classList.add('leaving');
    window.setTimeout(() => item.remove(), 200);
  };
  const item = h(
    'div',
    { class: `toast toast-${kind}`, role: kind === 'error' ? 'alert' : 'status' },
    h('span', { class: 'toast-text', text }),
    options.action
      ? h('button', {
          class: 'btn btn-small',
          text: options.action.label,
          onclick: () => {
            options.action?.run();
            close();
          },
        })
      : null,
    h('button', { class: 'toast-close', 'aria-label': 'Dismiss', text: '\u00d7', onclick: close }),
  );
  host.appendChild(item);
  while (host.children.length > 4) host.firstElementChild?.remove();
  window.setTimeout(close, kind === 'error' ? 9000 : 5000);
}

/**
 * Copies text to the clipboard, with a fallback for contexts without the async API.
 * @param {string} text
 * @returns {Promise<boolean>}
 */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h('textarea', { class: 'visually-hidden', readonly: true });
    area.value = text;
    document.body.appendChild(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}

/**
 * A copy button for a value: shows a check mark for a moment once copied.
 * @param {() => string} value
 * @param {string} label what is copied, for screen readers
 */
export function copyButton(value, label) {
  const button = h('button', { class: 'icon-btn', type: 'button', title: `Copy ${label}`, 'aria-label': `Copy ${label}` }, icon(ICONS.copy));
  button.addEventListener('click', async () => {
    const ok = await copyText(value());
    replace(button, icon(ok ? ICONS.check : ICONS.copy));
    announce(ok ? `${label} copied` : `Could not copy the ${label}`);
    if (ok) toast(`${label[0].toUpperCase()}${label.slice(1)} copied`, { kind: 'success' });
    window.setTimeout(() => replace(button, icon(ICONS.copy)), 1500);
  });
  return button;
}

/**
 * A labelled segmented control (radio group) with arrow-key support.
 * @template {string} T
 * @param {string} label
 * @param {{ value: T, label: string, hint?: string }[]} options
 * @param {T} selected
 * @param {(value: T) => void} onChange
 * @param {string} [name]
 */
export function segmented(label, options, selected, onChange, name = label.toLowerCase().replace(/\W+/g, '-')) {
  const group = h('div', { class: 'segmented', role: 'radiogroup', 'aria-label': label });
  /** @type {HTMLButtonElement[]} */
  const buttons = [];
  /** @param {T} value */
  const select = (value) => {
    for (const b of buttons) {
      const on = b.dataset.value === value;
      b.setAttribute('aria-checked', String(on));
      b.tabIndex = on ? 0 : -1;
    }
  };
  for (const option of options) {
    const b = h('button', {
      type: 'button',
      role: 'radio',
      class: 'segment',
      title: option.hint,
      dataset: { value: option.value, name },
      text: option.label,
      onclick: () => {
        select(option.value);
        onChange(option.value);
      },
    });
    buttons.push(b);
    group.appendChild(b);
  }
  group.addEventListener('keydown', (event) => {
    const e = /** @type {KeyboardEvent} */ (event);
    const i = buttons.findIndex((b) => b === document.activeElement);
    if (i < 0) return;
    const step = e.key === 'ArrowRight' || e.key === 'ArrowDown' ? 1 : e.key === 'ArrowLeft' || e.key === 'ArrowUp' ? -1 : 0;
    if (!step) return;
    e.preventDefault();
    const next = buttons[(i + step + buttons.length) % buttons.length];
    next.focus();
    next.click();
  });
  select(selected);
  return h('div', { class: 'field' }, h('span', { class: 'field-label', 'aria-hidden': 'true', text: label }), group);
}

/**
 * The SOS letter picker's contents, for every view that places letters: its label, an S
 * and an O button (the chosen one pressed) and, where the view has the keys, their hint.
 * @param {string} selected the letter chosen now
 * @param {(mark: 'S' | 'O') => void} onPick
 * @param {boolean} [keys] whether S, O and T work on this view
 * @returns {HTMLElement[]}
 */
export function letterPicker(selected, onPick, keys = false) {
  return [
    h('span', { class: 'picker-label', text: 'Letter' }),
    ...(/** @type {('S' | 'O')[]} */ (['S', 'O'])).map((m) =>
      h('button', {
        type: 'button',
        class: `letter-btn${selected === m ? ' is-on' : ''}`,
        'aria-pressed': String(selected === m),
        'aria-label': `Place ${m}`,
        text: m,
        onclick: () => onPick(m),
      }),
    ),
    ...(keys ? [h('span', { class: 'picker-hint', text: 'S / O keys, T toggles' })] : []),
  ];
}

/**
 * The letter a key picks in SOS: S or O, or T for the other one than `current`; null for
 * any other key.
 * @param {string} key a `KeyboardEvent.key`
 * @param {string} current the letter chosen now
 * @returns {'S' | 'O' | null}
 */
export function letterForKey(key, current) {
  const k = key.toLowerCase();
  if (k === 's') return 'S';
  if (k === 'o') return 'O';
  if (k === 't') return current === 'S' ? 'O' : 'S';
  return null;
}

/**
 * The board's keys from anywhere on the page, not only with the board focused: 1-9 play a
 * square, and any other key goes to `onKey`, which says whether it used it. Keys typed in a
 * form field, with a modifier, or on the board (which reads its own) are left alone.
 * Returns the function that stops listening.
 * @param {(cell: number) => void} onSquare
 * @param {(key: string) => boolean} onKey
 * @returns {() => void}
 */
export function pageKeys(onSquare, onKey) {
  /** @param {KeyboardEvent} e */
  const listener = (e) => {
    const target = /** @type {HTMLElement} */ (e.target);
    if (e.altKey || e.ctrlKey || e.metaKey || target.closest('input, textarea, select, .board')) return;
    if (/^[1-9]$/.test(e.key)) {
      e.preventDefault();
      onSquare(Number(e.key) - 1);
    } else if (onKey(e.key)) e.preventDefault();
  };
  document.addEventListener('keydown', listener);
  return () => document.removeEventListener('keydown', listener);
}
