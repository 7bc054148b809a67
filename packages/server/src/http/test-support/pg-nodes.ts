import { randomBytes } from "node:crypto";
import assert from "node:assert/strict";
import type { Run, Tapedeck } from "@tapedeck/sdk";
import { dropSchema, freshSchemaName, schemaUrl } from "@tapedeck/engine/testing";
import { startServeChild, type ServeChild } from "./serve-child.js";

/**
 * Several `tapedeck serve` nodes on one PostgreSQL schema, for the multi-node tests: each a
 * child process with a data folder of its own, all given the store URL and the secrets nodes
 * share (`TAPEDECK_SIGNING_SECRET`, `TAPEDECK_MASTER_KEY`). The first node's start makes the
 * admin key; the others find it in the store.
 */
export interface PgNodes {
  readonly store: string;
  readonly adminKey: string;
  readonly nodes: ServeChild[];
  /** The environment every node gets (the shared secrets; `TAPEDECK_LEASE_MS` when asked). */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Starts one more node on the store (or a node again: `dataDir` and `port` of the one it
   * replaces); `env` adds to or overrides the shared environment for this node (another master key).
   */
  start(options?: StartNode): Promise<ServeChild>;
  /** Stops every node still up (their exit codes are not checked: a test checks those it stops), deletes their folders and the schema. */
  close(): Promise<void>;
}

export interface StartNode {
  readonly dataDir?: string;
  readonly port?: number;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

export async function startPgNodes(
  url: string,
  count: number,
  options: { readonly leaseMs?: number; readonly args?: readonly string[]; readonly env?: Readonly<Record<string, string>> } = {},
): Promise<PgNodes> {
  const schema = freshSchemaName();
  const store = schemaUrl(url, schema);
  const env: Record<string, string> = {
    TAPEDECK_SIGNING_SECRET: randomBytes(32).toString("hex"),
    TAPEDECK_MASTER_KEY: randomBytes(32).toString("base64"),
    ...(options.leaseMs === undefined ? {} : { TAPEDECK_LEASE_MS: String(options.leaseMs) }),
    ...options.env,
  };
  const nodes: ServeChild[] = [];
  const start = async (more: StartNode = {}): Promise<ServeChild> => {
    const node = await startServeChild({
      args: ["--store", store, ...(options.args ?? []), ...(more.args ?? [])],
      env: { ...env, ...more.env },
      fresh: nodes.length === 0,
      ...(more.dataDir === undefined ? {} : { dataDir: more.dataDir }),
      ...(more.port === undefined ? {} : { port: more.port }),
    });
    nodes.push(node);
    return node;
  };
  const close = async (): Promise<void> => {
    for (const node of nodes) {
      await node.kill();
      node.cleanup();
    }
    await dropSchema(url, schema);
  };
  try {
    const first = await start();
    const adminKey = first.adminKey ?? assert.fail("the store's first start prints the admin key");
    for (let i = 1; i < count; i++) await start();
    return { store, adminKey, nodes, env, start, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Reads the run until `holds` says yes; fails naming what it waited for after `ms` (default 30 s). */
export async function untilRun(td: Tapedeck, id: string, what: string, holds: (run: Run) => boolean, ms = 30_000): Promise<Run> {
  const deadline = Date.now() + ms;
  for (let run = await td.runs.get(id); ; run = await td.runs.get(id, { wait: 1 })) {
    if (holds(run)) return run;
    if (Date.now() > deadline) assert.fail(`gave up waiting for ${what} after ${ms} ms: ${JSON.stringify(run)}`);
  }
}

export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
