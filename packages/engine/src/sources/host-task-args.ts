import type { JsonValue, PinnedTool } from "@tapedeck/protocol";
import { join } from "node:path";
import { MasterKeySource } from "../secrets/master-key.js";
import { HOST_TASK_ARGS_PURPOSE, purposeKey } from "../secrets/purpose-key.js";
import { asSealed, SealedValues } from "../secrets/sealed-values.js";

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
  readonly #sealed: SealedValues;

  constructor(key: () => Buffer) {
    // The label and binding make the same AAD as before this was shared (`tapedeck host task args v1\n<task id>`): tasks sealed then still open.
    this.#sealed = new SealedValues(key, "tapedeck host task args v1");
  }

  /** What the task row keeps of `args`. */
  seal(tool: PinnedTool, taskId: string, args: JsonValue): JsonValue {
    if (tool.policy.sensitiveParams === undefined) return args;
    return { [ENVELOPE]: { ...this.#sealed.seal(taskId, args) } };
  }

  /** The arguments a worker gets for the task row's `args`. */
  open(taskId: string, args: JsonValue): JsonValue {
    if (args === null || typeof args !== "object" || Array.isArray(args) || Object.keys(args).length !== 1) return args;
    const sealed = asSealed(args[ENVELOPE]);
    if (sealed === undefined) return args;
    return this.#sealed.open(taskId, sealed) ?? args;
  }
}

/** The sealing of a store's host tasks, under the master key an engine on that store uses by default (`TAPEDECK_MASTER_KEY`, or `master.key` in its data folder). */
export function hostTaskArgsFor(store: { readonly dataFolder?: string }): HostTaskArgs {
  const keys = new MasterKeySource(store.dataFolder === undefined ? {} : { keyFile: join(store.dataFolder, "master.key") });
  return new HostTaskArgs(purposeKey(keys, HOST_TASK_ARGS_PURPOSE));
}

const ENVELOPE = "$tapedeckSealed";
