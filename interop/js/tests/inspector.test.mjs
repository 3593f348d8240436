// The MCP Inspector's CLI mode (pinned in package.json) lists Triad's MCP tools over
// streamable HTTP, logged in with the API's bearer token.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";

import { startServer } from "../harness.mjs";

const run = promisify(execFile);

const TOOLS = [
  "play_computer",
  "challenge",
  "list_challenges",
  "accept_challenge",
  "decline_challenge",
  "join_queue",
  "leave_queue",
  "get_match",
  "legal_moves",
  "make_move",
  "resign",
  "claim_timeout",
  "rematch",
  "wait_for_turn",
  "analyze_position",
  "my_balance",
  "my_stats",
  "list_tournaments",
  "join_tournament",
  "leave_tournament",
  "follow_tournament",
];

/** Runs the Inspector's CLI against `url` with `args`; its JSON answer and its stderr. */
async function inspector(url, token, args) {
  const { stdout, stderr } = await run(
    "npx",
    [
      "--no-install",
      "mcp-inspector",
      "--cli",
      url,
      "--transport",
      "http",
      "--header",
      `Authorization: Bearer ${token}`,
      ...args,
    ],
    { timeout: 60_000 },
  );
  return { answer: JSON.parse(stdout), stderr };
}

test("the MCP Inspector's CLI lists the tools", async () => {
  const server = await startServer({});
  try {
    const player = await server.newPlayer({});
    // --strict: exit status 6 on an error-severity schema portability problem, and each
    // warning in full on stderr.
    const { answer: listed, stderr } = await inspector(
      `${server.url}/mcp`,
      player.token,
      ["--method", "tools/list", "--strict"],
    );
    assert.doesNotMatch(stderr, /Warning:|Error:/, stderr);
    const names = listed.tools.map((tool) => tool.name);
    for (const name of TOOLS) {
      assert.ok(names.includes(name), `${name} is listed: ${names}`);
    }
    for (const tool of listed.tools) {
      assert.equal(tool.inputSchema.type, "object", tool.name);
      assert.ok(tool.description.length > 20, tool.name);
    }
  } finally {
    await server.stop();
  }
});

test("the MCP Inspector's CLI is refused without a login", async () => {
  const server = await startServer({});
  try {
    // A 401: the Inspector asks for a login it cannot get without a terminal.
    await assert.rejects(
      inspector(`${server.url}/mcp`, "not-a-token", ["--method", "tools/list"]),
      (error) => /auth/i.test(`${error.stdout}${error.stderr}`),
    );
  } finally {
    await server.stop();
  }
});
