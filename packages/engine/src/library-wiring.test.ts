import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { JournalEntry, ToolsetSpec } from "@tapedeck/protocol";
import { VirtualClock } from "./clock.js";
import { EngineError } from "./errors.js";
import { startLoopbackServer, type LoopbackServer } from "./test-support/loopback-http.js";
import { runScript, tempDir, testEngine, testSandboxes } from "./test-support/engines.js";
import { workspaceFolder } from "./library/library-folder.js";
import { bubblewrapForTests } from "./library/shell/test-support/needs-bubblewrap.js";

/**
 * The built-in tool library through the engine: a toolset's `library` enables groups, which are
 * pinned into the toolset (its id), declared for scripts (`files.read({ path })`), searchable and
 * offered to direct tools; each call goes through the `library` tool source after it is journaled,
 * and replay answers it from the journal without running it again.
 */

after(() => testSandboxes().close());

let server: LoopbackServer;
before(async () => {
  server = await startLoopbackServer({
    "/page": (_req, res) =>
      res.writeHead(200, { "content-type": "text/html" }).end("<html><body><article><h1>Otters</h1><p>Otters hold hands.</p></article></body></html>"),
  });
});
after(() => server.close());

const hits = (path: string) => server.received.filter((r) => r.path === path).length;
const START = Date.UTC(2030, 0, 2, 3, 4, 5);

const LIBRARY: ToolsetSpec = {
  http: { allow: ["127.0.0.1"] },
  library: { time: {}, files: { mode: "rw" }, memory: {}, web: {}, json: {}, echo: {} },
};

async function libraryEngine(more: Parameters<typeof testEngine>[0] = {}) {
  const folder = tempDir("tapedeck-library-");
  const t = await testEngine({ unsafeHttpAllowLoopbackForTests: true, libraryFolder: folder.path, ...more });
  return { ...t, folder: folder.path, cleanup: () => t.cleanup().finally(folder.cleanup) };
}

const SCRIPT = (base: string) => `
  import { echo, files, json, memory, time, web, ToolError } from "tapedeck:tools";
  export default async () => {
    const now = await time.now({ timezone: "Europe/Paris" });
    const unix = await time.now({ format: "unix" });
    await files.write({ path: "notes/a.txt", content: "one\\ntwo\\nthree\\n" });
    await files.patch({ patch: "--- a/notes/a.txt\\n+++ b/notes/a.txt\\n@@ -1,3 +1,3 @@\\n one\\n-two\\n+TWO\\n three\\n" });
    const read = await files.read({ path: "notes/a.txt" });
    const list = await files.list({ path: "notes" });
    let hostile = "";
    try { await files.read({ path: "../../etc/passwd" }); } catch (e) { hostile = e instanceof ToolError ? e.code + " " + e.tool : String(e); }
    const parsed = await json.parse({ text: '{"a":[1,2]}' });
    await memory.write({ path: "people/sofia.md", content: "Sofia keeps bees on the roof of the library." });
    const found = await memory.search({ query: "who keeps bees" });
    const page = await web.fetch({ url: "${base}/page", selector: "article" });
    const said = await echo.echo({ message: "hi" });
    const waited = await signal<number>("go");
    return { now: now.value, unix: unix.value, read: read.content, list: list.entries.map((e) => e.path), hostile, parsed: parsed.value,
             found: found.results.map((r) => r.path), page: page.content, said: said.message, waited };
  };`;

describe("the tool library through the engine", () => {
  it("runs time (virtual), files, json, memory, web and echo from a script, journals each call, and a resume does not run them again", async () => {
    const clock = new VirtualClock(START);
    const t = await libraryEngine({ clock });
    try {
      const { id, declarations } = await t.engine.registerToolset(LIBRARY);
      assert.match(declarations.typescript, /export const files: \{/);
      assert.match(declarations.prompt, /files\.read\(\{ path: string/);
      const started = await t.engine.start({ toolset: id, source: SCRIPT(`http://127.0.0.1:${server.port}`), namespace: "acme" });
      if (started.kind !== "started") throw new Error(JSON.stringify(started.diagnostics));
      assert.equal((await t.engine.settled(started.runId))?.status, "waiting");
      assert.equal(hits("/page"), 1);
      // The workspace is the namespace's, under the library folder.
      assert.equal(readFileSync(join(workspaceFolder(t.folder, "acme"), "notes/a.txt"), "utf8"), "one\nTWO\nthree\n");
      const journal = await t.engine.journal(started.runId);
      const scheduled = journal.filter((e): e is Extract<JournalEntry, { kind: "call.scheduled" }> => e.kind === "call.scheduled");
      assert.deepEqual(
        scheduled.map((e) => e.tool),
        [
          "time.now",
          "time.now",
          "files.write",
          "files.patch",
          "files.read",
          "files.list",
          "files.read",
          "json.parse",
          "memory.write",
          "memory.search",
          "web.fetch",
          "echo.echo",
          "tapedeck.signal",
        ],
      );
      assert.deepEqual(
        scheduled.map((e) => e.seq),
        scheduled.map((_, i) => i + 1),
      );
      await t.engine.close();
      // Another engine on the same store resumes the run: it replays the journal, sends nothing again.
      const again = await t.reopen({ unsafeHttpAllowLoopbackForTests: true, libraryFolder: t.folder, clock });
      try {
        await again.signal(started.runId, "go", 7);
        const end = await again.end(started.runId);
        assert.deepEqual(end, {
          status: "completed",
          output: {
            now: "2030-01-02T04:04:05.000+01:00",
            unix: START / 1000,
            read: "one\nTWO\nthree",
            list: ["notes/a.txt"],
            hostile: "refused files.read",
            parsed: { a: [1, 2] },
            found: ["people/sofia.md"],
            page: "# Otters\n\nOtters hold hands.",
            said: "hi",
            waited: 7,
          },
        });
        assert.equal(hits("/page"), 1, "the resumed run answered web.fetch from the journal");
        const after = await again.journal(started.runId);
        assert.equal(after.filter((e) => e.kind === "call.scheduled").length, scheduled.length + 0, "no call was scheduled again");
        assert.deepEqual(await again.verify(started.runId), { ok: true, end });
      } finally {
        await again.close();
      }
    } finally {
      await t.cleanup().catch(() => {});
    }
  });

  it("offers library tools to direct tools: the model calls files_write and files_read, each journaled in the session", async () => {
    const t = await libraryEngine();
    try {
      const { id } = await t.engine.registerToolset({ library: { files: {}, time: {} } });
      const ref = { session: "conv", namespace: "dora" };
      const bound = await t.engine.direct.bind(ref, { toolset: id, approval: { allow: ["*"] } });
      assert.deepEqual(bound.tools.generic.map((tool) => tool.name).sort(), [
        "fetch_blob",
        "files_list",
        "files_patch",
        "files_read",
        "files_write",
        "time_now",
      ]);
      const call = (toolCallId: string, name: string, input: Record<string, string>) =>
        t.engine.direct.call(ref, { binding: bound.binding, api: "generic", toolCallId, name, input });
      const wrote = await call("t1", "files_write", { path: "a.md", content: "hello" });
      assert.equal(wrote.status === "done" && wrote.isError !== true, true, JSON.stringify(wrote));
      const read = await call("t2", "files_read", { path: "a.md" });
      assert.match(JSON.stringify(read), /\\"content\\": \\"hello\\"/);
      assert.equal(readFileSync(join(workspaceFolder(t.folder, "dora"), "a.md"), "utf8"), "hello");
      const journal = await t.engine.journal(bound.id);
      assert.deepEqual(
        journal.filter((e) => e.kind === "call.scheduled").map((e) => (e as { tool: string }).tool),
        ["files.write", "files.read"],
      );
    } finally {
      await t.cleanup();
    }
  });

  it("pins the enabled groups and their options: another option is another toolset; search_tools finds library tools", async () => {
    const t = await libraryEngine();
    try {
      const rw = await t.engine.registerToolset({ library: { files: { mode: "rw" } } });
      const same = await t.engine.registerToolset({ library: { files: {} } });
      const ro = await t.engine.registerToolset({ library: { files: { mode: "ro" } } });
      assert.notEqual(rw.id, ro.id);
      assert.notEqual(rw.id, same.id, "the options are pinned as given");
      assert.deepEqual(
        ro.toolset.tools.map((tool) => [tool.group, tool.name, tool.source, tool.library?.workspace]),
        [
          ["files", "list", "library", "ro"],
          ["files", "read", "library", "ro"],
        ],
      );
      const hits = await t.engine.searchTools(rw.id, "apply a unified diff");
      assert.equal(hits[0]?.tool, "files.patch");
    } finally {
      await t.cleanup();
    }
  });

  it("refuses a bad library entry at registration, naming the path and what is allowed", async () => {
    const t = await libraryEngine();
    try {
      const refused = async (spec: unknown, message: RegExp) =>
        assert.rejects(
          t.engine.registerToolset(spec),
          (error: unknown) => error instanceof EngineError && error.code === "invalid_toolset" && message.test(error.message),
        );
      await refused(
        { library: { clock: {} } },
        /^library\.clock: the tool library has no group "clock"; its groups are echo, time, json, web, files, shell, memory$/,
      );
      await refused(
        { library: { files: { mode: "rx" } } },
        /^library\.files\.mode must be "rw" \(read and write, the default\) or "ro" \(read only\), got "rx"$/,
      );
      await refused({ library: { time: { zone: "UTC" } } }, /^library\.time has an unknown option "zone"; this group takes no options \(write \{\}\)$/);
      await refused({ library: { files: true } }, /^library\.files must be an object of options/);
      await refused({ library: { web: {} } }, /^library\.web fetches pages under the rules of the toolset's http tool, and this toolset has none: add "http"/);
    } finally {
      await t.cleanup();
    }
  });

  it("refuses web.fetch to a host the toolset's http allow-list does not name", async () => {
    const t = await libraryEngine();
    try {
      const { end } = await runScript(
        t.engine,
        { http: { allow: ["example.org"] }, library: { web: {} } },
        `import { web, ToolError } from "tapedeck:tools";
         export default async () => { try { await web.fetch({ url: "http://127.0.0.1:${server.port}/page" }); return "sent"; } catch (e) { return e instanceof ToolError ? e.code + " " + (e.details as { rule: string }).rule : String(e); } };`,
      );
      assert.deepEqual(end, { status: "completed", output: "refused host-not-allowed" });
    } finally {
      await t.cleanup();
    }
  });

  it("says what is needed when the engine has no library folder (a store without a data folder)", async () => {
    const t = await testEngine({ store: await (await import("./store/open-store.js")).openStore("memory:") });
    try {
      await assert.rejects(
        t.engine.registerToolset({ library: { memory: {} } }),
        /library\.memory cannot be enabled on this engine: the memory group keeps files .* this engine has none: its store has no data folder .*libraryFolder/,
      );
      // The groups that keep nothing work anywhere.
      const { end } = await runScript(
        t.engine,
        { library: { echo: {} } },
        `import { echo } from "tapedeck:tools"; export default () => echo.echo({ message: "x" });`,
      );
      assert.deepEqual(end, { status: "completed", output: { message: "x" } });
    } finally {
      await t.cleanup();
    }
  });

  it("test_script: time runs on the virtual clock, files need a mock like any tool", async () => {
    const t = await libraryEngine();
    try {
      const { id } = await t.engine.registerToolset({ library: { time: {}, files: {} } });
      const tested = await t.engine.test({
        toolset: id,
        source: `import { files, time } from "tapedeck:tools";
                 export default async () => { const a = await time.now({ format: "unix" }); await sleep("1h"); const b = await time.now({ format: "unix" });
                   return { a: a.value, b: b.value, file: (await files.read({ path: "x" })).content }; };`,
        scenario: {
          start: START,
          tools: { "files.read": [{ result: { path: "x", content: "mocked", startLine: 1, endLine: 1, totalLines: 1, sizeBytes: 6 } }] },
        },
      });
      assert.equal(tested.kind, "tested");
      if (tested.kind !== "tested") return;
      assert.deepEqual(tested.output, { a: START / 1000, b: START / 1000 + 3600, file: "mocked" });
      assert.deepEqual(
        tested.calls.map((c) => [c.tool, c.answeredBy]),
        [
          ["time.now", "library"],
          ["tapedeck.sleep", "builtin"],
          ["time.now", "library"],
          ["files.read", "mock"],
        ],
      );
    } finally {
      await t.cleanup();
    }
  });

  it("shell: runs a command in the namespace's workspace under bubblewrap", async (test) => {
    const bubblewrap = await bubblewrapForTests();
    if (bubblewrap.skip !== undefined) return test.skip(bubblewrap.skip);
    const t = await libraryEngine();
    try {
      const { id } = await t.engine.registerToolset({ library: { files: {}, shell: {} }, policies: { "shell.run": { approval: false } } });
      const started = await t.engine.start({
        toolset: id,
        namespace: "acme",
        source: `import { files, shell } from "tapedeck:tools";
                 export default async () => { await files.write({ path: "in.txt", content: "abc" }); const ran = await shell.run({ command: "wc -c < in.txt && echo made > out.txt" }); return ran.stdout; };`,
      });
      if (started.kind !== "started") throw new Error(JSON.stringify(started.diagnostics));
      assert.deepEqual(await started.end, { status: "completed", output: "3\n" });
      assert.equal(readFileSync(join(workspaceFolder(t.folder, "acme"), "out.txt"), "utf8"), "made\n");
    } finally {
      await t.cleanup();
    }
  });
});
