import type { JsonValue, PinnedTool } from "@tapedeck/protocol";
import { join } from "node:path";
import { MasterKeySource } from "../secrets/master-key.js";
import { HOST_TASK_ARGS_PURPOSE, purposeKey } from "../secrets/purpose-key.js";
import { open, seal } from "../secrets/vault-crypto.js";

/**
 * The arguments of a host task whose tool has `sensitiveParams`, sealed while the task waits in
 * the store for a worker: the task row (SQLite, PostgreSQL) holds `{ "$tapedeckSealed": { iv,
 * sealed } }` (AES-256-GCM under a key derived from the master key, bound to the task's id), and
 * the worker that claims it gets the arguments opened. So a sensitive value reaches the database
 * only sealed, like a credential.
 *
 * Invariants:
 * - Only tools with `sensitiveParams` are sealed; other tasks keep their arguments as they are.
 * - Opening what is not a sealed envelope, or one that does not open under this key and task id
 *   (a tool's own argument of that shape, a row copied to another task), returns it unchanged:
 *   never a value sealed for another task.
 */
export class HostTaskArgs {
  constructor(private readonly key: () => Buffer) {}

  /** What the task row keeps of `args`. */
  seal(tool: PinnedTool, taskId: string, args: JsonValue): JsonValue {
    if (tool.policy.sensitiveParams === undefined) return args;
    return { [ENVELOPE]: { ...seal(this.key(), aad(taskId), JSON.stringify(args)) } };
  }

  /** The arguments a worker gets for the task row's `args`. */
  open(taskId: string, args: JsonValue): JsonValue {
    if (args === null || typeof args !== "object" || Array.isArray(args) || Object.keys(args).length !== 1) return args;
    const sealed = args[ENVELOPE];
    if (sealed === null || typeof sealed !== "object" || Array.isArray(sealed) || typeof sealed.iv !== "string" || typeof sealed.sealed !== "string")
      return args;
    const opened = open(this.key(), aad(taskId), { iv: sealed.iv, sealed: sealed.sealed });
    return opened === undefined ? args : (JSON.parse(opened) as JsonValue);
  }
}

/** The sealing of a store's host tasks, under the master key an engine on that store uses by default (`TAPEDECK_MASTER_KEY`, or `master.key` in its data folder). */
export function hostTaskArgsFor(store: { readonly dataFolder?: string }): HostTaskArgs {
  const keys = new MasterKeySource(store.dataFolder === undefined ? {} : { keyFile: join(store.dataFolder, "master.key") });
  return new HostTaskArgs(purposeKey(keys, HOST_TASK_ARGS_PURPOSE));
}

const ENVELOPE = "$tapedeckSealed";

function aad(taskId: string): Buffer {
  return Buffer.from(`tapedeck host task args v1\n${taskId}`);
}
