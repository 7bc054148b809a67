import assert from "node:assert/strict";
import type { JournalEntry, JsonValue, RunEnd } from "@tapedeck/protocol";
import type { testEngine } from "./engines.js";
import type { LoopbackServer } from "./loopback-http.js";

/**
 * The resume of a run stopped in a user tool's call (TypeScript or WebAssembly): the tool fetches
 * `/v1/items`, then `/v1/hold`, which does not answer until `release`. The engine stops with the
 * second request in flight; its journal holds the first fetch's sub-call only; a second engine
 * resumes the run, the tool runs again against the recorded answer (not sent again), the
 * unanswered request is sent again with its key, and `verify` sends nothing. Resolves with the
 * run's output, for the tool's own checks.
 */
export async function resumeWithHeldFetch(options: {
  readonly t: Awaited<ReturnType<typeof testEngine>>;
  readonly server: LoopbackServer;
  readonly toolset: string;
  /** A script whose first call is the tool's. */
  readonly source: string;
  readonly release: () => void;
}): Promise<JsonValue> {
  const { t, server } = options;
  const hits = (path: string) => server.received.filter((r) => r.path === path).length;
  const itemsBefore = hits("/v1/items");
  const holdsBefore = hits("/v1/hold");
  const started = await t.engine.start({ toolset: options.toolset, source: options.source });
  if (started.kind !== "started") assert.fail(JSON.stringify(started.diagnostics));
  started.end.catch(() => undefined);
  await until(() => hits("/v1/hold") === holdsBefore + 1, "the first engine's request to /v1/hold");
  await t.engine.close();
  assert.deepEqual(
    subCallKeys(await (await t.reopen({ wake: false })).journal(started.runId)),
    [`${started.runId}/1.1`],
    "the answered fetch was journaled; the one in flight was not",
  );
  options.release();
  const engine = await t.reopen({ unsafeHttpAllowLoopbackForTests: true });
  try {
    const [resumed] = await engine.resume(started.runId);
    const end: RunEnd = await resumed!.end;
    assert.equal(end.status, "completed", JSON.stringify(end));
    assert.equal(hits("/v1/items"), itemsBefore + 1, "the recorded fetch was not sent again");
    const holds = server.received.filter((r) => r.path === "/v1/hold").map((r) => r.headers["idempotency-key"]);
    assert.deepEqual(holds.slice(holdsBefore), [`${started.runId}/1.2`, `${started.runId}/1.2`], "the unanswered one was sent again with its key");
    const sent = server.received.length;
    assert.deepEqual(await engine.verify(started.runId), { ok: true, end });
    assert.equal(server.received.length, sent, "verify sends nothing");
    return (end as { output: JsonValue }).output;
  } finally {
    await engine.close();
  }
}

function subCallKeys(journal: readonly JournalEntry[]): string[] {
  return journal.flatMap((entry) => (entry.kind === "call.sub" ? [entry.key] : []));
}

/** Resolves once `condition` holds (checked each turn of the event loop); fails, saying what it waited for, after 10 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
