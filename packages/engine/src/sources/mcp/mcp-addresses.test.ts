import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { EngineError } from "../../errors.js";
import type { HostResolver } from "../http/resolver.js";
import { testEngine, testSandboxes } from "../../test-support/engines.js";
import { startHttpFixture } from "../../test-support/mcp/http-fixture.js";
import { McpToolSource } from "./mcp-tool-source.js";

/**
 * A toolset registered on a tenant's behalf (`mcpAddresses: "public"`) reaches its Streamable
 * HTTP servers only at public addresses: each connection resolves the host once, checks every
 * answer, and connects to the checked address, registration's connection included. A name that
 * answers a public address first and a private one later (DNS rebinding) is refused at the next
 * connection, before anything is sent. The operator's toolsets reach any address.
 */
after(() => testSandboxes().close());

const REBINDING_HOST = "mcp.rebind.test";

/** Plays DNS for `REBINDING_HOST`: loopback (which the test switch lets through) until `rebind()`, then the cloud metadata address. */
function rebindingResolver() {
  let answer = "127.0.0.1";
  const asked: string[] = [];
  const resolver: HostResolver = (host) => {
    asked.push(host);
    return host === REBINDING_HOST ? Promise.resolve([answer]) : Promise.reject(new Error(`no such host ${host}`));
  };
  return { resolver, asked, rebind: () => void (answer = "169.254.169.254") };
}

const script = `import { fx, ToolError } from "tapedeck:tools";
export default async () => { try { return await fx.echo({ text: "x" }); } catch (e) { return { code: (e as ToolError).code, message: (e as ToolError).message }; } };`;

describe("MCP server addresses of a tenant's toolset", () => {
  it("connects to the address it checked (the name resolves nowhere else); a name rebound to a metadata address is refused at the next connection, and nothing is sent", async () => {
    const fixture = await startHttpFixture();
    const dns = rebindingResolver();
    const t = await testEngine({ mcp: new McpToolSource({ resolver: dns.resolver, unsafeAllowLoopbackForTests: true }) });
    try {
      const url = fixture.url.replace("127.0.0.1", REBINDING_HOST);
      const { id, toolset } = await t.engine.registerToolset({ mcpServers: { fx: { url } } }, { mcpAddresses: "public" });
      assert.deepEqual(Object.values(toolset.servers ?? {}), [{ url, addresses: "public" }]);
      const started = await t.engine.start({ toolset: id, source: script });
      if (started.kind !== "started") throw new Error("refused");
      assert.deepEqual(await started.end, { status: "completed", output: { text: "x" } });
      assert.deepEqual(dns.asked, [REBINDING_HOST], "resolved once for the connection, not per request");
      await t.engine.close();

      dns.rebind();
      const before = fixture.requests;
      const engine = await t.reopen({ mcp: new McpToolSource({ resolver: dns.resolver, unsafeAllowLoopbackForTests: true }) });
      try {
        const again = await engine.start({ toolset: id, source: script });
        if (again.kind !== "started") throw new Error("refused");
        const end = await again.end;
        assert.equal(end.status, "completed");
        const output = end.status === "completed" ? (end.output as { code: string; message: string }) : { code: "", message: "" };
        assert.equal(output.code, "refused");
        assert.match(
          output.message,
          /^MCP server fx: mcp\.rebind\.test resolves to 169\.254\.169\.254, an address in a range the server does not connect to for tenants \(cloud metadata/,
        );
        assert.equal(fixture.requests, before, "nothing reached the server after the name was rebound");
      } finally {
        await engine.close();
      }
    } finally {
      await t.cleanup();
      await fixture.close();
    }
  });

  it("a tenant's registration refuses loopback, private and metadata addresses, by name or by address, before sending anything", async () => {
    const fixture = await startHttpFixture();
    const t = await testEngine({ mcp: new McpToolSource() });
    const port = new URL(fixture.url).port;
    try {
      for (const [url, range] of [
        [fixture.url, /127\.0\.0\.1 is an address in a range the server does not connect to for tenants \(loopback\)/],
        [
          `http://localhost:${port}/mcp`,
          /localhost resolves to (127\.0\.0\.1|::1), an address in a range the server does not connect to for tenants \(loopback\)/,
        ],
        [`http://[::ffff:127.0.0.1]:${port}/mcp`, /::ffff:7f00:1 is an address in a range .*carrying 127\.0\.0\.1, which is loopback/],
        ["http://169.254.169.254/mcp", /cloud metadata/],
        ["http://10.1.2.3:8080/mcp", /private \(RFC 1918\)/],
      ] as const) {
        const error = await t.engine.registerToolset({ mcpServers: { fx: { url } } }, { mcpAddresses: "public" }).then(
          () => assert.fail(`${url} was registered`),
          (e: unknown) => e,
        );
        assert.ok(error instanceof EngineError && error.code === "invalid_toolset", String(error));
        assert.match(error.message, /^mcpServers\.fx: MCP server fx: /);
        assert.match(error.message, range);
        assert.match(error.message, /have the operator register the toolset with an unlimited key\.$/);
      }
      assert.equal(fixture.requests, 0, "no request reached the loopback server");
      const operator = await t.engine.registerToolset({ mcpServers: { fx: { url: fixture.url } } });
      assert.deepEqual(Object.values(operator.toolset.servers ?? {}), [{ url: fixture.url }], "the operator's toolset reaches any address");
    } finally {
      await t.cleanup();
      await fixture.close();
    }
  });
});
