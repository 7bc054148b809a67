import type { JsonValue, LogLevel, ToolFailure } from "@tapedeck/protocol";

/**
 * The sandbox seam: a deterministic JavaScript realm that runs one script and talks to the
 * engine only through this contract (its behaviour: `sandbox-contract.ts`). The engine drives it
 * in lockstep: it starts the script, then delivers outcomes in batches, in order; after each
 * outcome, the sandbox runs every pending job and reports what the script did (`Step`). Nothing
 * in a sandbox reads a clock, a random source or the network: `Date` is the `at` of the latest
 * delivery, `Math.random` is seeded.
 */
export interface SandboxFactory {
  /** Creates a sandbox for one run. Rejects only for faults of the host (never for the script). */
  create(options: SandboxOptions): Promise<Sandbox>;
  /**
   * Creates a sandbox and starts its script, as `create` then `start` would, in one round trip,
   * and frees it as soon as its script ends (its `dispose` then costs nothing). Optional: see
   * `startSandbox`.
   */
  run?(options: SandboxOptions): Promise<StartedSandbox>;
  /** Ends every worker. Sandboxes still open are lost. */
  close(): Promise<void>;
  /** How big the pool is now, for metrics; optional (a factory without a pool). */
  pool?(): SandboxPool;
}

/** A sandbox factory's pool: its workers (threads) and the sandboxes open on them. */
export interface SandboxPool {
  readonly workers: number;
  readonly sandboxes: number;
}

/** A sandbox whose script has started, and what it did first. */
export interface StartedSandbox {
  readonly sandbox: Sandbox;
  readonly step: Step;
}

/** `factory.run(options)`, or `create` then `start` for a factory without it. */
export async function startSandbox(factory: SandboxFactory, options: SandboxOptions): Promise<StartedSandbox> {
  if (factory.run !== undefined) return factory.run(options);
  const sandbox = await factory.create(options);
  try {
    return { sandbox, step: await sandbox.start() };
  } catch (error) {
    await sandbox.dispose().catch(() => undefined);
    throw error;
  }
}

export interface SandboxLimits {
  /**
   * The sandbox's whole heap, bytes: QuickJS itself (about 5 MiB) and everything the script
   * allocates. Each sandbox has a heap of its own (see `sandbox-heap.ts`); at least 16 MiB.
   */
  readonly memoryBytes: number;
  /** Guest stack, bytes. More than 256 KiB can overflow the host's own stack. */
  readonly stackBytes: number;
  /** CPU time the script may use between two host interactions (`start`, one delivery), ms. */
  readonly cpuMsPerStep: number;
  /** Longest `console.*` line kept, characters; longer lines are cut with a marker. */
  readonly logLineChars: number;
  /**
   * Deterministic CPU for the whole sandbox: how many times QuickJS may poll the interrupt
   * handler (about every 10,000 bytecode branches and calls) before the script is stopped. The
   * same script with the same deliveries stops at the same point on every machine, unlike
   * `cpuMsPerStep`, which also applies. Absent: no fuel limit (scripts); user tools set it.
   */
  readonly fuel?: number;
}

/**
 * A global that exists only when the toolset enables it. `fetch`: the `http` tool; each request
 * is a journaled call of `http.fetch`, made by the engine.
 */
export type SandboxFeature = "fetch";

export interface SandboxOptions {
  readonly runId: string;
  /** The script as an ES module, already transpiled to JavaScript. */
  readonly js: string;
  /** The module's file name in stack traces (the source map maps it back). */
  readonly filename: string;
  /** The tools `tapedeck:tools` exports: group → tool names (any string, not only identifiers). */
  readonly tools: Readonly<Record<string, readonly string[]>>;
  /** Globals the toolset adds to the always-present ones (`fetch` when it enables `http`). Default none. */
  readonly features?: readonly SandboxFeature[];
  /** The workflows the toolset pins, by name: the `workflows` global exists only when there are some. Default none. */
  readonly workflows?: readonly string[];
  /** Passed to the default export when it is a function. */
  readonly input: JsonValue;
  /** Seeds `Math.random`. */
  readonly seed: string;
  /** `Date.now()` before the first delivery, ms since the epoch. */
  readonly startedAt: number;
  readonly limits: SandboxLimits;
}

/** A call the script issued. `seq` counts from 1 in issue order; `args` is plain JSON. */
export interface IssuedCall {
  readonly seq: number;
  /** `group.name`. */
  readonly tool: string;
  readonly args: JsonValue;
}

export interface LogLine {
  readonly level: LogLevel;
  readonly message: string;
  /** 0-based position of this line among all the lines the script logged. */
  readonly ordinal: number;
}

/**
 * A limit the sandbox's guard enforces (see `step-guard.ts`). `cpu`: the interrupt handler
 * stopped the step; `memory`: the sandbox's heap refused to grow; `stuck`: the step ran on past
 * its budget where the interrupt handler never runs (inside a built-in), and the main thread
 * ended its worker; `fuel`: the script spent its deterministic fuel (`SandboxLimits.fuel`).
 */
export type GuardedLimit = "cpu" | "memory" | "stuck" | "fuel";

/** An error raised in the sandbox, positions still in the transpiled JavaScript. */
export interface GuestError {
  /**
   * `script`: thrown by the script; `limit`: CPU or memory, as the host measured it (never
   * decided from an error's name); `output`: the output is not JSON; `crash`: QuickJS itself
   * failed under the script (an abort), and the sandbox is gone.
   */
  readonly kind: "script" | "limit" | "output" | "crash";
  /** With `limit`: which one, so that a caller other than a script's (a user tool) can word the error for its reader. */
  readonly limit?: GuardedLimit;
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  /** Set when the error is a `ToolError`: what it says (the script may have made it, or changed it). */
  readonly failure?: ToolFailure;
  /**
   * For a `ToolError` the sandbox delivered as the failure of call `seq` (rethrown as it is or
   * not): that seq. The engine reports the failure it delivered for that seq, not `failure`.
   */
  readonly seq?: number;
}

export type ScriptEnd =
  /** The default export resolved; `output` is its JSON value (`undefined` became `null`). */
  | { readonly ok: true; readonly output: JsonValue }
  /** The script threw or went past a limit. */
  | { readonly ok: false; readonly error: GuestError };

/** What the script did since the previous step. */
export interface Step {
  /** Calls issued, in seq order. */
  readonly calls: readonly IssuedCall[];
  readonly logs: readonly LogLine[];
  /** Set once, when the script has ended. The sandbox accepts no delivery after it. */
  readonly end?: ScriptEnd;
}

/** An outcome for the script: the result or the failure of call `seq`, at time `at`. */
export type Delivery =
  | { readonly seq: number; readonly at: number; readonly ok: true; readonly value: JsonValue }
  | { readonly seq: number; readonly at: number; readonly ok: false; readonly error: ToolFailure };

/** What `replay` did: the steps merged, and where it stopped. */
export interface ReplayStep extends Step {
  /** How many deliveries were delivered. Fewer than given when the script ended or stalled. */
  readonly delivered: number;
  /** Set when the next delivery names a seq the script has not issued: the replay diverged. */
  readonly stalledAt?: number;
}

/**
 * One script's realm. Two ways in besides `start`, because they are two operations: `deliverEach`
 * is the live path (the engine reacts to each step before anything else is delivered, so a step
 * per outcome comes back, and an outcome for a call not issued is the engine's bug), `replay`
 * feeds a recorded journal back (one merged step, and a delivery for a call the script does not
 * make again is how a divergence shows: `stalledAt`).
 */
export interface Sandbox {
  /** Evaluates the module and calls the default export; runs until no job is pending. Once. */
  start(): Promise<Step>;
  /**
   * Settles each call in order, running every pending job after each, in one round trip: one
   * step per delivery, exactly as one delivery at a time would give them; stops after the step
   * that ends the script (fewer steps than deliveries; none once it has ended). Rejects for a
   * delivery of a seq not issued or already settled (a host bug).
   */
  deliverEach(deliveries: readonly Delivery[]): Promise<Step[]>;
  /**
   * Delivers many outcomes in order, each followed by running every pending job, in one
   * round trip: how a recorded journal is replayed fast. Stops early at the end of the script
   * or at a delivery for a seq not yet issued.
   */
  replay(deliveries: readonly Delivery[]): Promise<ReplayStep>;
  /** Frees the realm. Safe to call twice. */
  dispose(): Promise<void>;
}

/**
 * The sandbox died under the script (its worker crashed, or was ended). The run itself is
 * intact: the engine may rebuild the sandbox by replaying the journal.
 */
export class SandboxLostError extends Error {
  readonly code = "sandbox_lost";
  /**
   * Whether this sandbox's own request was running when its worker died: then the script may
   * have caused it (and would again on replay). False for the neighbours that only shared the worker.
   */
  readonly culprit: boolean;
  constructor(message: string, culprit = false) {
    super(message);
    this.name = "SandboxLostError";
    this.culprit = culprit;
  }
}

/**
 * The script ran on past its CPU budget where the sandbox's interrupt handler never runs (a loop
 * inside a C built-in), so its worker was ended from outside. Unlike `SandboxLostError`, the run
 * is not to be rebuilt (the replay would get stuck the same way): it ends with `error`.
 */
export class SandboxStoppedError extends Error {
  readonly code = "sandbox_stopped";
  constructor(readonly error: GuestError) {
    super(error.message);
    this.name = "SandboxStoppedError";
  }
}
