import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Tapedeck } from "@tapedeck/sdk";
import { startEchoMcpServer, type EchoMcpServer } from "./test-support/echo-mcp-server.js";
import { failure } from "./test-support/failure.js";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * SSRF through MCP server URLs, against a real `tapedeck serve`: a key limited to a namespace
 * cannot make the server connect to a loopback, private or metadata address by registering a
 * toolset whose MCP server is there (nothing is sent); the operator's unlimited key can, and a
 * tenant may run the operator's toolset (the operator vouched for its servers).
 */
let server: ServeChild;
let admin: Tapedeck;
let alice: Tapedeck;
let echo: EchoMcpServer;

before(async () => {
  echo = await startEchoMcpServer();
  server = await startServeChild();
  admin = server.client(server.adminKey!);
  alice = server.client(await createKey(server.dataDir, "--namespace", "alice"));
});

after(async () => {
  await server.stop();
  server.cleanup();
  await echo.close();
});

const SCRIPT = `import { fx } from "tapedeck:tools";\nexport default async () => fx.echo({ text: "reached" });`;

describe("MCP server URLs of a limited key's toolsets", () => {
  it("a key limited to a namespace cannot register an MCP server at a loopback, metadata or private address: 422 saying why, and nothing reaches it", async () => {
    const port = new URL(echo.url).port;
    for (const url of [echo.url, `http://localhost:${port}/mcp`, `http://[::1]:${port}/mcp`, "http://169.254.169.254/latest/mcp", "http://192.168.0.10/mcp"]) {
      const error = await failure(alice.toolsets.create({ mcpServers: { fx: { url } } }));
      assert.equal(error.status, 422, `${url}: ${error.message}`);
      assert.equal(error.code, "invalid_toolset");
      assert.match(
        error.message,
        /^mcpServers\.fx: MCP server fx: .* an address in a range the server does not connect to for tenants \(.+\)\. The toolset was registered with a key limited to a namespace or labels, so its MCP servers are reached only at public addresses\./,
        url,
      );
    }
    assert.equal(echo.requests(), 0, "the loopback MCP server received nothing");
  });

  it("the operator's unlimited key registers the loopback server, and a limited key may run that toolset: the operator vouched for its servers", async () => {
    const { id } = await admin.toolsets.create({ mcpServers: { fx: { url: echo.url } } });
    const started = await alice.runs.start({ toolset: id, source: SCRIPT });
    assert.equal(started.kind, "started");
    if (started.kind !== "started") return;
    const run = await alice.runs.get(started.run.id, { wait: 30 });
    assert.equal(run.status, "completed", JSON.stringify(run));
    assert.equal(run.output, "reached");
    assert.equal(echo.calls(), 1);
  });
});
