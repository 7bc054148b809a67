import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import { setGuestNow } from "./guest-clock.js";
import { cleanStack } from "./guest-stack.js";
import { HostBugError } from "./host-bug-error.js";
import { MAX_VALUE_DEPTH } from "../util/value-bounds.js";
import { boundStep } from "./guest-values.js";
import { explainStackOverflow, guardedLimitError } from "./limit-errors.js";
import { DeliverStatus } from "./prelude.js";
import { disposeRealm, expectValue, readError, type Realm } from "./realm.js";
import type { Delivery, GuestError, ReplayStep, SandboxLimits, SandboxOptions, ScriptEnd, Step } from "./sandbox.js";
import { StepGuard } from "./step-guard.js";
import { TOOLS_MODULE, forbiddenImportMessage, toolsModuleSource } from "./tools-module.js";

/**
 * One sandbox, on the worker side: a QuickJS runtime and context running one script. Invariants:
 * - every handle it takes is disposed (a leaked handle aborts the whole WASM module at
 *   `runtime.dispose()`): the only long-lived ones are the four prelude functions;
 * - after each start/delivery it runs every pending job before answering, so a step shows
 *   everything the script did in reaction;
 * - once the script has ended (output, error or limit), no guest code runs again: later
 *   deliveries are ignored without touching the context;
 * - a `HostBugError` leaves the sandbox as it was, except mid-replay (then it is `broken`);
 * - any other exception out of QuickJS (an Emscripten abort, such as a failed assertion; the
 *   host's stack overflowing inside WASM) ends the script with a `crash` error and the sandbox
 *   is never entered again, not even to free it: its module instance is only dropped. Nothing
 *   outside the sandbox's own heap was touched, so its worker and neighbours go on;
 * - everything the script hands over (calls, output, error) is checked within the bounds of
 *   `guest-values.ts` before it leaves: nothing too deep reaches the host's recursive code.
 */

/** More than this overflows Node's own stack inside WASM, and the next dispose aborts (measured). */
const MAX_STACK_BYTES = 256 * 1024;

const EMPTY_STEP: Step = { calls: [], logs: [] };

/** What a guest sandbox needs from its worker. */
export interface GuestHost {
  /** Told when the sandbox starts a new CPU budget, and until when (wall-clock ms): see `worker-watch.ts`. */
  onBudget(deadline: number): void;
}

/** The prelude's functions the host calls (see `prelude.ts`). */
interface Internals {
  readonly run: QuickJSHandle;
  readonly fail: QuickJSHandle;
  readonly deliver: QuickJSHandle;
  readonly collect: QuickJSHandle;
}

/** An error that reached the host instead of the script: uncatchable ones (interrupt, out of memory). */
type EscapedError = ReturnType<typeof readError>;

type Phase =
  /** Built; the script has not started. */
  | "created"
  /** Started and not ended: accepts deliveries. */
  | "running"
  /** The script ended; deliveries are ignored. */
  | "ended"
  /** A host bug interrupted a replay halfway: the engine no longer knows the script's state. */
  | "broken"
  /** QuickJS failed under the script (see the invariants): the sandbox is never entered again. */
  | "crashed"
  | "disposed";

export class GuestRuntime {
  private phase: Phase = "created";
  private now: number;
  private escaped: EscapedError | undefined;

  private constructor(
    private readonly runtime: QuickJSRuntime,
    private readonly context: QuickJSContext,
    private readonly internals: Internals,
    private readonly guard: StepGuard,
    private readonly options: SandboxOptions,
    private readonly limits: SandboxLimits,
    private readonly realm: Realm,
  ) {
    this.now = options.startedAt;
  }

  /**
   * Configures `realm` (fresh, from `buildRealm`) for one script and takes ownership of it,
   * even when it throws. Throws `HostBugError` for options it cannot honour.
   */
  static create(host: GuestHost, realm: Realm, options: SandboxOptions): GuestRuntime {
    const { runtime, context } = realm;
    try {
      const toolsSource = toolsModuleSource(Object.keys(options.tools));
      const limits: SandboxLimits = { ...options.limits, stackBytes: Math.min(options.limits.stackBytes, MAX_STACK_BYTES) };
      const guard = new StepGuard(limits.cpuMsPerStep, realm.heap, (deadline) => host.onBudget(deadline), limits.fuel);
      guard.begin();
      // The heap itself is the limit (QuickJS's own `setMemoryLimit` misses most allocations in WASM).
      realm.heap.limitTo(limits.memoryBytes);
      runtime.setMaxStackSize(limits.stackBytes);
      realm.interrupt = guard.shouldInterrupt;
      realm.loadModule = (name) => (name === TOOLS_MODULE ? toolsSource : { error: new Error(forbiddenImportMessage(name)) });
      const internals = installPrelude(realm, options);
      return new GuestRuntime(runtime, context, internals, guard, options, limits, realm);
    } catch (error) {
      disposeRealm(realm);
      throw error;
    }
  }

  /** Evaluates the module and runs its default export until no job is pending. */
  start(): Step {
    this.expectPhase("created");
    this.phase = "running";
    return this.contained(() =>
      this.step(() => {
        const evaluated = this.context.evalCode(this.options.js, this.options.filename, { type: "module" });
        if (evaluated.error && this.guard.exceeded !== undefined) {
          this.noteEscaped(evaluated.error);
        } else if (evaluated.error) {
          this.callInternal(this.internals.fail, evaluated.error);
          evaluated.error.dispose();
        } else {
          const input = this.context.newString(JSON.stringify(this.options.input));
          this.callInternal(this.internals.run, evaluated.value, input);
          input.dispose();
          evaluated.value.dispose();
        }
        this.drain();
      }),
    );
  }

  /** Settles each call in order, running every job after each: one step per delivery, up to the one that ends the script. */
  deliverEach(deliveries: readonly Delivery[]): Step[] {
    const steps: Step[] = [];
    for (const delivery of deliveries) {
      if (this.phase === "ended" || this.phase === "crashed") break;
      const step = this.deliver(delivery);
      steps.push(step);
      if (step.end !== undefined) break;
    }
    return steps;
  }

  /** Settles one call and runs every job. Throws `HostBugError` for a seq not pending. */
  private deliver(delivery: Delivery): Step {
    if (this.phase === "ended" || this.phase === "crashed") return EMPTY_STEP;
    this.expectPhase("running");
    return this.contained(() =>
      this.step(() => {
        const status = this.deliverOne(delivery);
        if (status === DeliverStatus.notIssued) {
          throw new HostBugError(`Cannot deliver seq ${delivery.seq}: the script has not issued that call yet.`);
        }
        if (status === DeliverStatus.alreadySettled) {
          throw new HostBugError(`Cannot deliver seq ${delivery.seq}: that call was already settled, or never existed.`);
        }
        if (status === DeliverStatus.delivered) this.drain();
      }),
    );
  }

  /** Delivers in order, each followed by every job; stops at the end or at a seq not issued. */
  replay(deliveries: readonly Delivery[]): ReplayStep {
    if (this.phase === "ended" || this.phase === "crashed") return { ...EMPTY_STEP, delivered: 0 };
    this.expectPhase("running");
    let delivered = 0;
    let stalledAt: number | undefined;
    const step = this.contained(() =>
      this.step(() => {
        for (const delivery of deliveries) {
          if (this.stopped()) break;
          this.guard.begin();
          const status = this.deliverOne(delivery);
          if (status === DeliverStatus.notIssued) {
            stalledAt = delivery.seq;
            break;
          }
          if (status === DeliverStatus.alreadySettled) {
            if (delivered > 0) this.phase = "broken";
            throw new HostBugError(`Cannot replay seq ${delivery.seq}: that call was already settled, or never existed.`);
          }
          if (status !== DeliverStatus.delivered) break;
          delivered++;
          this.drain();
        }
      }),
    );
    return { ...step, delivered, ...(stalledAt === undefined ? {} : { stalledAt }) };
  }

  /** Frees every handle and gives the realm back (restored for the next sandbox, or dropped: `disposeRealm`). Safe to call twice. */
  dispose(): void {
    if (this.phase === "disposed") return;
    const crashed = this.phase === "crashed";
    this.phase = "disposed";
    // A crashed module is only dropped: calling into it again could abort once more.
    if (crashed) return;
    try {
      const { run, fail, deliver, collect } = this.internals;
      for (const handle of [run, fail, deliver, collect]) handle.dispose();
    } catch {
      // A module that aborts while freeing (QuickJS asserts that nothing is left): it is dropped.
    }
    disposeRealm(this.realm);
  }

  /** The CPU budget of one step, ms. */
  get cpuMs(): number {
    return this.limits.cpuMsPerStep;
  }

  private expectPhase(expected: "created" | "running"): void {
    if (this.phase === expected) return;
    const why: Record<Phase, string> = {
      created: "the script has not started: call start() first",
      running: "start() was already called",
      ended: "the script has ended",
      broken: "an earlier replay failed halfway, so the sandbox's state is unknown; dispose it",
      crashed: "QuickJS failed under the script",
      disposed: "the sandbox was disposed",
    };
    throw new HostBugError(`Sandbox of run ${this.options.runId}: ${why[this.phase]}.`);
  }

  private stopped(): boolean {
    return this.guard.exceeded !== undefined || this.escaped !== undefined;
  }

  /**
   * Runs one request's work; an exception out of QuickJS other than our own `HostBugError` means
   * the module failed under the script: the script ends with a `crash` error (see the invariants).
   */
  private contained(work: () => Step): Step {
    try {
      return work();
    } catch (error) {
      if (error instanceof HostBugError) throw error;
      this.phase = "crashed";
      return { calls: [], logs: [], end: { ok: false, error: crashError(error, this.realm.heap.lastError) } };
    }
  }

  /** Runs `action` as one step with a fresh CPU budget, then reports what the script did. */
  private step(action: () => void): Step {
    setGuestNow(this.now);
    this.guard.begin();
    action();
    return this.collect();
  }

  private deliverOne(delivery: Delivery): number {
    const text = this.context.newString(JSON.stringify(delivery));
    const status = this.callInternal(this.internals.deliver, text);
    text.dispose();
    if (status === undefined) return -1;
    const value = this.context.getNumber(status);
    status.dispose();
    if (value === DeliverStatus.delivered) {
      this.now = delivery.at;
      setGuestNow(this.now);
    }
    return value;
  }

  /** Runs jobs until none is pending (or the script is stopped). */
  private drain(): void {
    if (this.stopped()) return;
    const result = this.runtime.executePendingJobs(-1);
    if (result.error) this.noteEscaped(result.error);
  }

  private callInternal(fn: QuickJSHandle, ...args: QuickJSHandle[]): QuickJSHandle | undefined {
    if (this.stopped()) return undefined;
    const result = this.context.callFunction(fn, this.context.undefined, ...args);
    if (result.error) {
      this.noteEscaped(result.error);
      return undefined;
    }
    return result.value;
  }

  private noteEscaped(handle: QuickJSHandle): void {
    this.escaped ??= readError(this.context, handle);
    handle.dispose();
  }

  /** Reads the calls and logs the prelude buffered, and decides whether the script has ended. */
  private collect(): Step {
    // The host's own call gets a fresh budget, even after the script was stopped.
    this.guard.begin();
    const result = this.context.callFunction(this.internals.collect, this.context.undefined);
    let collected: Step = EMPTY_STEP;
    if (result.error) {
      this.noteEscaped(result.error);
    } else {
      collected = JSON.parse(this.context.getString(result.value)) as Step;
      result.value.dispose();
    }
    const bounded = boundStep(collected);
    const end = this.decideEnd(bounded.end);
    if (end === undefined) return { calls: bounded.calls, logs: bounded.logs };
    this.phase = "ended";
    return { calls: bounded.calls, logs: bounded.logs, end };
  }

  /**
   * How the script ended, if it did. A limit is decided by the guard alone (an error the script
   * threw is its own, whatever its name: `InternalError("out of memory")` included).
   */
  private decideEnd(guestEnd: ScriptEnd | undefined): ScriptEnd | undefined {
    const stack = this.escaped?.stack === undefined ? undefined : cleanStack(this.escaped.stack, 10);
    if (this.guard.exceeded !== undefined) return { ok: false, error: guardedLimitError(this.guard.exceeded, this.limits, stack) };
    if (guestEnd?.ok === true) return guestEnd;
    if (guestEnd !== undefined) return { ok: false, error: this.refine(guestEnd.error) };
    if (this.escaped !== undefined) return { ok: false, error: this.refine({ kind: "script", ...this.escaped }) };
    return undefined;
  }

  /** Cleans stacks, and says what a stack overflow usually means. */
  private refine(error: GuestError): GuestError {
    const stack = error.stack === undefined ? undefined : cleanStack(error.stack);
    return explainStackOverflow({ ...error, ...(stack === undefined ? {} : { stack }) }, this.limits);
  }
}

/** The end of a script whose sandbox's QuickJS failed under it. */
function crashError(error: unknown, printed: string | undefined): GuestError {
  const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const said = printed !== undefined && !what.includes(printed) ? ` (${printed})` : "";
  return {
    kind: "crash",
    name: "SandboxCrash",
    message:
      `The sandbox's JavaScript engine (QuickJS) failed while running the script: ${what}${said}. ` +
      "Running the same script again would fail the same way: change what it does at this point (very deep recursion or nesting, endless chains of promise jobs).",
  };
}

/** Calls the prelude with this sandbox's config and keeps the functions it returns. */
function installPrelude(realm: Realm, options: SandboxOptions): Internals {
  // The prelude's handle is the realm's: restored with its heap for the next sandbox, never freed here.
  const { context, prelude } = realm;
  const config = JSON.stringify({
    tools: options.tools,
    features: options.features ?? [],
    workflows: options.workflows ?? [],
    seed: options.seed,
    logLineChars: options.limits.logLineChars,
    maxDepth: MAX_VALUE_DEPTH,
  });
  const configHandle = context.newString(config);
  const result = context.callFunction(prelude, context.undefined, configHandle);
  configHandle.dispose();
  const internals = expectValue(context, result);
  try {
    return {
      run: context.getProp(internals, "run"),
      fail: context.getProp(internals, "fail"),
      deliver: context.getProp(internals, "deliver"),
      collect: context.getProp(internals, "collect"),
    };
  } finally {
    internals.dispose();
  }
}
