// @ts-check
/**
 * A match's record in Triad's notation (`docs/notation.md`): the headers and the moves as
 * plain text, served by `GET /api/matches/{id}/notation`, which `triad play --from` reads.
 * @module
 */

import { h, ICONS, icon } from './dom.js';

/**
 * The "Download" button of a finished match: a link to its record, saved as a file (the
 * server names it in `Content-Disposition`; `download` names it too).
 * @param {{ id: number, game: string }} view the match
 * @returns {HTMLElement}
 */
export function downloadRecord(view) {
  return h(
    'a',
    {
      class: 'btn',
      href: `/api/matches/${view.id}/notation`,
      download: `triad-${view.game}-${view.id}.txt`,
      title: 'Save the match as text, in Triad notation',
    },
    icon(ICONS.download),
    'Download',
  );
}
