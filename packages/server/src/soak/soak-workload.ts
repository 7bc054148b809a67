import type { JsonValue } from "@tapedeck/protocol";

/**
 * What the soak runs: one script, one toolset, and each run's input. Calls go round four tools:
 * the idempotency-recording fixture MCP server through a `retry` entry (`fx`) and an
 * `at_most_once` entry (`once`), and the worker's host tools `h.effect` (`retry`) and `h.once`
 * (`at_most_once`). Some runs sleep, some wait for a signal, some make a call that needs an
 * approval (`gate`, the fixture again, `retry`). An interrupted `at_most_once` call fails
 * `outcomeUnknown`, which the script counts and goes on; any other failure fails the run. Every
 * run ends by waiting for the signal "finish", which the soak sends once every strike happened.
 */
export const SOAK_SCRIPT = `import { fx, once, gate, h } from "tapedeck:tools";
export default async (input: { sleep: boolean; signal: boolean; approval: boolean; calls: number }) => {
  let unknown = 0;
  let go: unknown = null;
  for (let i = 0; i < input.calls; i++) {
    if (i === 2 && input.sleep) await sleep(400);
    if (i === 5 && input.signal) go = await signal("go");
    if (i === 7 && input.approval) {
      await gate.effects({ op: "gate" + i });
      continue;
    }
    const kind = i % 4;
    try {
      if (kind === 0) await fx.effects({ op: "fx" + i });
      else if (kind === 1) await h.effect({ op: "h" + i });
      else if (kind === 2) await once.effects({ op: "once" + i });
      else await h.once({ op: "hOnce" + i });
    } catch (e: any) {
      if (kind < 2 || e.code !== "outcomeUnknown") throw e;
      unknown++;
    }
  }
  // Held until every strike happened, so that the soak strikes runs that are still going.
  const finish = await signal("finish");
  return { unknown, go, finish };
};`;

/** The tools whose policy is `retry`: each call's effect must happen, once per key. */
export const RETRY_TOOLS: ReadonlySet<string> = new Set(["fx.effects", "gate.effects", "h.effect"]);
/** The tools whose policy is `at_most_once`: no key may reach its server twice. */
export const AT_MOST_ONCE_TOOLS: ReadonlySet<string> = new Set(["once.effects", "h.once"]);
/** Tools whose effects the fixture MCP server records (the others, the ledger). */
export const MCP_TOOLS: ReadonlySet<string> = new Set(["fx.effects", "gate.effects", "once.effects"]);

/** A killed worker's call is an interruption once its heartbeat is this late (the default, 60 s, would make the soak wait a minute per worker kill; a shorter one is missed while a killed server restarts, which counts against the call). */
const HEARTBEAT = "10s";

const OBJECT = { type: "object", properties: { op: { type: "string" } }, required: ["op"] };

export function soakToolset(fixtureUrl: string): JsonValue {
  return {
    mcpServers: { fx: { url: fixtureUrl }, once: { url: fixtureUrl }, gate: { url: fixtureUrl } },
    hostTools: {
      h: {
        effect: { description: "Records an effect at the ledger (retry).", inputSchema: OBJECT },
        once: { description: "Records an effect at the ledger (at most once).", inputSchema: OBJECT },
      },
    },
    policies: {
      "fx.effects": { onInterruption: "retry" },
      "gate.effects": { onInterruption: "retry", approval: true },
      "once.effects": { onInterruption: "at_most_once" },
      "h.effect": { onInterruption: "retry", heartbeatTimeout: HEARTBEAT },
      "h.once": { onInterruption: "at_most_once", heartbeatTimeout: HEARTBEAT },
    },
  };
}

export interface SoakInput {
  readonly sleep: boolean;
  readonly signal: boolean;
  readonly approval: boolean;
  readonly calls: number;
}

/** Run i's input: one run in five sleeps, one in five waits for a signal, one in five needs an approval. */
export function soakInput(i: number, calls: number): SoakInput {
  return { sleep: i % 5 === 1, signal: i % 5 === 2, approval: i % 5 === 3 && calls > 7, calls };
}
