import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import * as z from "zod";
import { IDEMPOTENCY_META_KEY } from "./fixture-state.js";
import type { FixtureState } from "./fixture-state.js";
import { text } from "./content-samples.js";

/**
 * `effects` and `effects_log`: how a test sees what Tapedeck put in `_meta`. The SDK hands a tool
 * the request's `params._meta` as `extra._meta`, custom keys included; the ledger itself is the
 * fixture's `FixtureState`, shared by all sessions.
 */

export function registerEffectTools(server: McpServer, state: FixtureState, add: (name: string, tool: RegisteredTool) => void): void {
  add(
    "effects",
    server.registerTool(
      "effects",
      {
        description: `Performs effect \`op\` once per idempotency key (_meta["${IDEMPOTENCY_META_KEY}"]) and reports what it saw.`,
        inputSchema: { op: z.string() },
        outputSchema: {
          count: z.number().int().describe("Effects performed so far by this fixture."),
          key: z.string().nullable(),
          traceparent: z.string().nullable(),
          attemptsForKey: z.number().int(),
        },
      },
      ({ op }, extra) => {
        const meta = extra._meta ?? {};
        const key = meta[IDEMPOTENCY_META_KEY];
        const traceparent = meta["traceparent"];
        const outcome = state.recordEffect(op, typeof key === "string" ? key : null, typeof traceparent === "string" ? traceparent : null);
        return { content: [text(JSON.stringify(outcome))], structuredContent: { ...outcome } };
      },
    ),
  );

  add(
    "effects_log",
    server.registerTool(
      "effects_log",
      {
        description: "Returns every idempotency key `effects` received, with its call count and traceparents.",
        outputSchema: {
          count: z.number().int(),
          unkeyed: z.number().int(),
          keys: z.array(z.object({ key: z.string(), op: z.string(), attempts: z.number().int(), traceparents: z.array(z.string().nullable()) })),
        },
        annotations: { readOnlyHint: true },
      },
      () => {
        const log = state.effectsLog();
        return { content: [text(JSON.stringify(log))], structuredContent: { ...log } };
      },
    ),
  );
}
