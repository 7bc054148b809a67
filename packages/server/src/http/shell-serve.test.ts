import assert from "node:assert/strict";
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Tapedeck } from "@tapedeck/sdk";
import { startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * The library shell through a real `tapedeck serve` (as root in CI): a script's command is not
 * the host's root, cannot write kernel settings, and is stopped by its memory and file-size
 * limits with notes naming them; the server answers /health afterwards.
 */

// CI installs bubblewrap (.ci/run) and sets CI=true: there these never skip.
const skip = !existsSync("/usr/bin/bwrap") && process.env.CI !== "true" && "needs Debian's bubblewrap (apt-get install -y bubblewrap)";
let server: ServeChild;
let td: Tapedeck;

before(async () => {
  if (skip !== false) return;
  server = await startServeChild();
  td = server.client(server.adminKey!);
});
after(async () => {
  if (skip !== false) return;
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

// A type, not an interface: the run's output is JSON, which only a type alias can be narrowed to.
type Ran = { readonly exitCode: number | null; readonly stdout: string; readonly stderr: string; readonly note?: string };

void describe("shell.run through tapedeck serve", { skip }, () => {
  it("runs as an unprivileged uid, cannot write /proc/sys, and is stopped by its memory and file-size limits, with notes naming them", async () => {
    const toolset = await td.toolsets.create({ library: { shell: {} }, policies: { "shell.run": { approval: false } } });
    const started = await td.runs.start({
      toolset: toolset.id,
      namespace: "acme",
      source: `import { shell } from "tapedeck:tools";
        export default async () => ({
          who: await shell.run({ command: "id -u; echo mine > mine.txt; echo 9 > /proc/sys/kernel/printk_ratelimit" }),
          memory: await shell.run({ command: "awk 'BEGIN { s = \\"x\\"; while (length(s) < 512 * 1024 * 1024) s = s s; print length(s) }'" }),
          file: await shell.run({ command: "head -c 268435456 /dev/zero > big.bin" }),
        });`,
    });
    if (started.kind === "refused") throw new Error(started.diagnostics.map((d) => d.message).join("\n"));
    const done = await td.runs.get(started.run.id, { wait: 60 });
    assert.equal(done.status, "completed", JSON.stringify(done));
    const { who, memory, file } = done.output as { who: Ran; memory: Ran; file: Ran };
    assert.equal(who.stdout, "65534\n");
    assert.match(who.stderr, /printk_ratelimit: Read-only file system/);
    const workspace = join(server.dataDir, "library", "workspaces", "n-acme");
    assert.notEqual(lstatSync(join(workspace, "mine.txt")).uid, 0, "the command's file is not the host root's");
    assert.notEqual(readFileSync("/proc/sys/kernel/printk_ratelimit", "utf8"), "9\n");
    assert.match(memory.note ?? "", /ran out of memory: each process may use at most 256 MiB/);
    assert.match(file.note ?? "", /file-size limit of 64 MiB/);
    assert.equal(lstatSync(join(workspace, "big.bin")).size, 64 * 1024 * 1024);
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
    // Another tenant's run afterwards: its own workspace, unaffected by what acme's commands did.
    const other = await td.runs.start({
      toolset: toolset.id,
      namespace: "bob",
      source: `import { shell } from "tapedeck:tools";
        export default async () => (await shell.run({ command: "ls; id -u" })).stdout;`,
    });
    if (other.kind === "refused") throw new Error(other.diagnostics.map((d) => d.message).join("\n"));
    const bob = await td.runs.get(other.run.id, { wait: 30 });
    assert.equal(bob.status, "completed", JSON.stringify(bob));
    assert.equal(bob.output, "65534\n", "bob sees none of acme's files");
  });
});
