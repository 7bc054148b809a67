import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolsetSpec } from "@tapedeck/protocol";
import { Engine, type EngineOptions } from "../engine.js";
import { InProcessHostTools, type HostToolModule } from "../sources/in-process-host-tools.js";
import type { ToolSource } from "../sources/tool-source.js";
import { SqliteStore } from "../store/sqlite-store.js";
import { QuickJsSandboxFactory } from "../sandbox/quickjs-sandbox-factory.js";
import type { SandboxFactory } from "../sandbox/sandbox.js";
import type { RunEnd } from "@tapedeck/protocol";

/** One sandbox pool for a whole test file: workers take tens of ms to start. */
let sharedSandboxes: QuickJsSandboxFactory | undefined;
export function testSandboxes(): QuickJsSandboxFactory {
  sharedSandboxes ??= new QuickJsSandboxFactory({ workers: 1 });
  return sharedSandboxes;
}

/** A temp data folder, removed by `cleanup`. */
export function tempDir(prefix = "tapedeck-test-"): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** `EngineOptions`, with two shorthands of tests: `hostTools` (`sources.host`, in process) and `mcp` (`sources.mcp`). */
export type TestEngineOptions = EngineOptions & { readonly hostTools?: HostToolModule; readonly mcp?: ToolSource };

/** The engine options a `TestEngineOptions` stands for. */
export function engineOptions(options: TestEngineOptions): EngineOptions {
  const { hostTools, mcp, ...rest } = options;
  if (hostTools === undefined && mcp === undefined) return rest;
  return {
    ...rest,
    sources: { ...rest.sources, ...(hostTools ? { host: new InProcessHostTools(hostTools) } : {}), ...(mcp ? { mcp } : {}) },
  };
}

/**
 * An engine on a SQLite file in a temp folder (or on `options.store`), sharing the file's
 * sandbox pool. `reopen` gives a second engine on the same data (a restart) with other options.
 */
export async function testEngine(options: TestEngineOptions = {}) {
  const dir = tempDir();
  const open = (more: TestEngineOptions) =>
    Engine.open({
      store: more.store ?? SqliteStore.open({ path: join(dir.path, "tapedeck.db"), durability: "normal" }),
      sandboxes: nonClosing(testSandboxes()),
      ...engineOptions(more),
    });
  const engine = await open(options);
  return {
    engine,
    dataDir: dir.path,
    reopen: open,
    cleanup: async () => {
      await engine.close();
      dir.cleanup();
    },
  };
}

/** The shared pool, with a `close` that leaves it open for the next test. */
function nonClosing(factory: SandboxFactory): SandboxFactory {
  return { create: (options) => factory.create(options), close: () => Promise.resolve() };
}

/** Registers `spec`, starts `source`, and waits for the end; throws if the script is refused. */
export async function runScript(engine: Engine, spec: ToolsetSpec, source: string, input?: unknown): Promise<{ runId: string; end: RunEnd }> {
  const { id } = await engine.registerToolset(spec);
  const started = await engine.start({ toolset: id, source, ...(input === undefined ? {} : { input: input as never }) });
  if (started.kind === "refused") throw new Error(`refused:\n${started.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`).join("\n")}`);
  return { runId: started.runId, end: await started.end };
}
