import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { cli } from "./cli.js";
import { capture, withDir } from "./test-support/in-process.js";

/**
 * `tapedeck credentials set` renews what a call waits for: a run whose MCP server refused the
 * vault's token parked (`credentials.expired`, `tapedeck run --detach` returned); setting a
 * new token sends the call again (same idempotency key) and follows the run to its end.
 */

const OLD = "renewal_old_token_5a1c";
const NEW = "renewal_new_token_e72d";

/** A Streamable HTTP MCP server with one tool, `charge`, that takes only the bearers `valid` lists and records each call's key. */
async function bearerServer(valid: () => readonly string[]) {
  const keys: string[] = [];
  const http = createServer((request, response) => {
    if (!valid().some((token) => request.headers.authorization === `Bearer ${token}`)) return void response.writeHead(401).end();
    const server = new McpServer({ name: "billing", version: "1.0.0" });
    server.registerTool("charge", { description: "Charges once per idempotency key." }, (extra) => {
      keys.push(String(extra._meta?.["dev.tapedeck/idempotency-key"]));
      return { content: [{ type: "text", text: "charged" }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on("close", () => void server.close());
    server
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    keys,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe("tapedeck credentials set renews parked calls", () => {
  it("a call parked on a refused token is sent again by credentials set, once, and the run ends", async () => {
    // The recipe's token registers the toolset (`run --toolset` lists the tools again); calls carry the vault's.
    let valid = ["registration"];
    const billing = await bearerServer(() => valid);
    process.env.TAPEDECK_TEST_BILLING = "registration";
    try {
      await withDir(async (dir) => {
        const data = join(dir, "data");
        writeFileSync(
          join(dir, "toolset.json"),
          JSON.stringify({
            mcpServers: { billing: { url: billing.url, headers: { Authorization: "Bearer ${TAPEDECK_TEST_BILLING}" }, credential: "BILLING" } },
          }),
        );
        writeFileSync(join(dir, "script.ts"), `import { billing } from "tapedeck:tools";\nexport default async () => billing.charge({});`);
        const registered = capture();
        assert.equal(await cli(["toolset", "register", join(dir, "toolset.json"), "--data", data], registered), 0, registered.err.join("\n"));
        const toolset = registered.out[0]!.split(/\s/)[0]!;
        assert.match(toolset, /^ts_/);
        const set = async (token: string) => {
          const io = { ...capture(), readStdin: () => Promise.resolve(`${token}\n`) };
          const code = await cli(["credentials", "set", "BILLING", "--kind", "bearer", "--host", "127.0.0.1", "--toolset", toolset, "--data", data], io);
          return { code, out: io.out, err: io.err.join("\n") };
        };
        assert.equal((await set(OLD)).code, 0);
        valid = ["registration", NEW];
        const run = capture();
        assert.equal(
          await cli(["run", join(dir, "script.ts"), "--toolset", join(dir, "toolset.json"), "--detach", "--data", data], run),
          0,
          run.err.join("\n"),
        );
        assert.match(run.err.join("\n"), /credentials\.expired|answered 401 Unauthorized to the credential "BILLING"/);
        assert.deepEqual(billing.keys, [], "the refused call never reached the tool");

        const renewed = await set(NEW);
        assert.equal(renewed.code, 0, renewed.err);
        assert.match(renewed.err, /a call that waited for this credential was sent again/);
        assert.deepEqual(renewed.out, ['"charged"']);
        assert.equal(billing.keys.length, 1);
        assert.match(billing.keys[0]!, /^run_.+\/1$/);
        for (const token of [OLD, NEW]) assert.ok(![...run.out, ...run.err, ...renewed.out, renewed.err].join("\n").includes(token), "no token printed");
      });
    } finally {
      delete process.env.TAPEDECK_TEST_BILLING;
      await billing.close();
    }
  });
});
