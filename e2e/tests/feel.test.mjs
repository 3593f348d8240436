// How the app feels to a player: an outcome has its own colour (a win is good news, with a
// small celebration; a loss is quiet; neither is the red of an error).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { clickCell, launchBrowser, newPage, openLoggedIn, PHONE, screenshot, startServer, waitForBoard } from '../lib/harness.mjs';

const NARROW = { width: 320, height: 640 };

let server;
let browser;
before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

/** The computed text colour of the first element `selector` matches. */
async function colourOf(page, selector) {
  // A view re-renders on live events: read again if the element was just replaced.
  for (let i = 0; i < 40; i++) {
    const colour = await page.locator(selector).first().evaluate((el) => getComputedStyle(el).color);
    if (colour) return colour;
    await page.waitForTimeout(25);
  }
  return '';
}

/** The red of an error, as the app draws it. */
function errorColour(page) {
  return page.evaluate(() => {
    const el = document.createElement('p');
    el.className = 'inline-error';
    document.body.append(el);
    const colour = getComputedStyle(el).color;
    el.remove();
    return colour;
  });
}

test('a win, a loss and an error each have their own colour; a win celebrates', async () => {
  // A win: two players on one device, X takes the top row.
  const page = await newPage(browser, server);
  await page.goto('/?player=human');
  await page.locator('.board-canvas').waitFor();
  const cells = [0, 3, 1, 4, 2];
  for (let i = 0; i < cells.length; i++) {
    await clickCell(page, cells[i]);
    await waitForBoard(page, (b) => b[cells[i]] !== '-');
  }
  await page.locator('.result-card.is-win .result-title.win', { hasText: 'X wins!' }).waitFor();
  const win = await colourOf(page, '.result-title.win');
  const error = await errorColour(page);
  for (const [name, viewport] of [['1280', { width: 1280, height: 800 }], ['390', PHONE], ['320', NARROW]]) {
    await page.setViewportSize(viewport);
    await screenshot(page, `feel-${name}-win`);
  }

  // A loss: a match against the computer, resigned, on the match page.
  const player = await newPage(browser, server);
  await openLoggedIn(player, '/wallet');
  const id = await player.evaluate(async () => {
    const { api } = await import('/js/api.js');
    const result = await api('POST', '/api/computer', { game: 'tic-tac-toe', level: 'perfect', side: 'first' });
    return result.match.id;
  });
  await player.goto(`/match/${id}`);
  await player.getByRole('button', { name: 'Resign' }).click();
  await player.getByRole('button', { name: 'Yes, resign' }).click();
  await player.locator('.result-title.loss', { hasText: 'You lost by resignation' }).waitFor();
  assert.equal(await player.locator('.result-card.is-win').count(), 0, 'a loss does not celebrate');
  const loss = await colourOf(player, '.result-title.loss');
  // The computer's row says Winner, in the win's colour, not the error's.
  const winnerTag = await colourOf(player, '.player-row.won .player-state');
  for (const [name, viewport] of [['1280', { width: 1280, height: 800 }], ['390', PHONE], ['320', NARROW]]) {
    await player.setViewportSize(viewport);
    await screenshot(player, `feel-${name}-loss`);
  }

  assert.notEqual(win, loss, 'a win and a loss look different');
  assert.notEqual(win, error, 'a win is not the red of an error');
  assert.notEqual(loss, error, 'a loss is not the red of an error');
  assert.equal(winnerTag, win, 'the WINNER tag has the win colour');
  assert.deepEqual([...page.errors, ...player.errors], []);
  await page.context().close();
  await player.context().close();
});
