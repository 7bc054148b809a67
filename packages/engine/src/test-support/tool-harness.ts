import type { JsonValue, ToolsetSpec } from "@tapedeck/protocol";
import type { HostToolContext, HostToolModule } from "../sources/in-process-host-tools.js";

/**
 * Test tools whose every call is recorded and whose completion the test controls: `hold` makes a
 * tool's calls wait until the test releases them, in any order it likes. No sleeps, no timers.
 */
export interface RecordedCall {
  readonly tool: string;
  readonly args: JsonValue;
  readonly key: string;
  readonly attempt: number;
}

interface Held {
  readonly call: RecordedCall;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

export class ToolHarness {
  readonly calls: RecordedCall[] = [];
  private readonly held: Held[] = [];
  private readonly holding = new Set<string>();
  private readonly waiters: { count: number; resolve: () => void }[] = [];
  private active = 0;
  maxActive = 0;

  constructor(private readonly implementations: Record<string, (args: never) => unknown>) {}

  /** Calls of `tool` wait for `release` from now on. */
  hold(tool: string): void {
    this.holding.add(tool);
  }

  /** Calls of `tool` are answered at once again (those held stay held until `release`). */
  stopHolding(tool: string): void {
    this.holding.delete(tool);
  }

  /** Resolves when `count` calls are held. */
  async heldCount(count: number): Promise<void> {
    if (this.held.length >= count) return;
    await new Promise<void>((resolve) => this.waiters.push({ count, resolve }));
  }

  /** Completes the held call of `tool` whose args match (the first held when no predicate). */
  release(index: number): void {
    const held = this.held.splice(index, 1)[0];
    if (!held) throw new Error(`no held call at ${index}`);
    this.settle(held);
  }

  heldCalls(): readonly RecordedCall[] {
    return this.held.map((h) => h.call);
  }

  module(): HostToolModule {
    const groups: Record<string, Record<string, (args: never, ctx: HostToolContext) => Promise<unknown>>> = {};
    for (const path of Object.keys(this.implementations)) {
      const [group, name] = path.split(".") as [string, string];
      (groups[group] ??= {})[name] = (args, ctx) => this.invoke(path, args, ctx);
    }
    return groups;
  }

  private invoke(tool: string, args: JsonValue, ctx: HostToolContext): Promise<unknown> {
    const call = { tool, args, key: ctx.idempotencyKey, attempt: ctx.attempt };
    this.calls.push(call);
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    return new Promise((resolve, reject) => {
      const held = { call, resolve, reject };
      if (this.holding.has(tool)) {
        this.held.push(held);
        for (const waiter of this.waiters.filter((w) => w.count <= this.held.length)) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      } else {
        this.settle(held);
      }
    }).finally(() => this.active--);
  }

  private settle(held: Held): void {
    try {
      const implementation = this.implementations[held.call.tool]!;
      Promise.resolve(implementation(held.call.args as never)).then(held.resolve, held.reject);
    } catch (error) {
      held.reject(error);
    }
  }
}

/** A toolset spec of host tools with open input schemas, for `ToolHarness` tools. */
export function harnessToolset(tools: readonly string[], extra: Partial<ToolsetSpec> = {}): ToolsetSpec {
  const hostTools: Record<string, Record<string, { description: string; inputSchema: JsonValue }>> = {};
  for (const path of tools) {
    const [group, name] = path.split(".") as [string, string];
    (hostTools[group] ??= {})[name] = { description: `Test tool ${path}.`, inputSchema: { type: "object" } };
  }
  return { hostTools: hostTools as ToolsetSpec["hostTools"], ...extra };
}
