import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { failure } from "./test-support/failure.js";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * A misconfigured stdio MCP server, registered through a real `tapedeck serve`: the answer
 * carries the server's own message (its last stderr lines), and so does the server's log.
 */
const FILESYSTEM = fileURLToPath(new URL("../../../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url));

let server: ServeChild;

before(async () => {
  server = await startServeChild();
});

after(async () => {
  await server.stop();
  server.cleanup();
});

/** Resolves once the server's stderr has a line matching `pattern`; fails after `ms` saying what it has. */
async function logLine(pattern: RegExp, ms = 10_000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const line = server.stderr().split("\n").find((l) => pattern.test(l));
    if (line !== undefined) return line;
    if (Date.now() > deadline) assert.fail(`no line matching ${pattern} in the server's stderr within ${ms} ms:\n${server.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("a stdio MCP server that fails to start", () => {
  it("server-filesystem pointed at a missing directory: the 422 and the server's log carry its message, not only 'Connection closed'", async () => {
    const admin = server.client(server.adminKey!);
    const missing = join(server.dataDir, "no-such-directory");
    const error = await failure(admin.toolsets.create({ mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, missing] } } }));
    assert.equal(error.status, 422);
    assert.match(error.message, /cannot list the server's tools: .*Connection closed\. The server's last stderr lines:\n.*\n {2}Error: None of the specified directories are accessible/);
    const line = await logLine(/^tapedeck: .*MCP server fs \(stdio\) stopped\. The server's last stderr lines:$/);
    const after = server.stderr().slice(server.stderr().indexOf(line));
    assert.match(after, /\n {2}Error: None of the specified directories are accessible\n/);
  });
});
