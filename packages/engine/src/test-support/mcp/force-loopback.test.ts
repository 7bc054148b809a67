import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import { connectHttp, FORCE_LOOPBACK } from "./fixture-clients.js";
import { READY_PREFIX } from "./force-loopback.js";

/** `server-everything` binds all interfaces; the preload keeps it on 127.0.0.1. */

const EVERYTHING = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js");

/** Whether a TCP connection to host:port is accepted. */
async function accepts(host: string, port: number): Promise<boolean> {
  const socket = connect({ host, port });
  try {
    await once(socket, "connect");
    return true;
  } catch {
    return false;
  } finally {
    socket.destroy();
  }
}

describe("force-loopback", () => {
  it("makes server-everything listen on 127.0.0.1 only", async () => {
    const child = spawn(process.execPath, ["--import", FORCE_LOOPBACK, EVERYTHING, "streamableHttp"], {
      env: { ...process.env, PORT: "0" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const exited = once(child, "exit");
    try {
      let ready: string | undefined;
      for await (const line of createInterface({ input: child.stderr })) {
        if (line.startsWith(READY_PREFIX)) {
          ready = line.slice(READY_PREFIX.length);
          break;
        }
      }
      assert.ok(ready !== undefined, "server-everything exited before listening");
      const origin = new URL(ready);
      assert.equal(origin.hostname, "127.0.0.1");
      const port = Number(origin.port);
      const external = Object.values(networkInterfaces())
        .flat()
        .find((nic) => nic !== undefined && !nic.internal && nic.family === "IPv4");
      if (external !== undefined) assert.equal(await accepts(external.address, port), false, `reachable on ${external.address}`);

      const c = await connectHttp(new URL("/mcp", origin).href);
      const { tools } = await c.client.listTools();
      assert.ok(tools.some((tool) => tool.name === "echo"));
      await c.close();
    } finally {
      child.kill("SIGKILL");
      await exited;
    }
  });
});
