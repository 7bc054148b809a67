import type { CallContext, Plugin } from "@extism/extism";
import type { CompiledModule } from "./wasm-fuel.js";

/**
 * Spare Extism plugins: a WebAssembly tool's call takes a plugin started ahead of it (its worker
 * thread up, its module instantiated) and starts the next one for the module's next call, so a
 * call no longer waits for a worker to start (most of its cost) when calls follow one another.
 *
 * Invariants:
 * - Each plugin serves one call and is closed after it: an instance, its memory and globals (the
 *   fuel counter) are never reused. A spare is a fresh instance nobody has called.
 * - A plugin's host functions and logger are the call's, bound when it is taken: the plugin
 *   forwards to the call that holds it. A spare is never called; what its module's start
 *   function logs while it is spare is dropped, and a start function that calls a host function
 *   fails the spare, so the call starts its own plugin, bound from the beginning.
 * - At most one spare per module (content and fuel), `MAX_SPARES` in all (the least recently
 *   used closed first); an idle spare is closed after `IDLE_MS`, and every spare by `close()`.
 *   While spare, its worker does not keep the process alive.
 */

export type HostFunction = (context: CallContext, offset: bigint) => Promise<bigint> | bigint;

/** What a call binds to the plugin it takes. */
export interface PluginBinding {
  readonly functions: Readonly<Record<string, HostFunction>>;
  readonly logger: Console;
}

/** A started plugin and how to bind it to the call that takes it. */
interface TakenPlugin {
  readonly plugin: Plugin;
  bind(binding: PluginBinding): void;
}

const MAX_SPARES = 8;
const IDLE_MS = 10_000;
const LEVELS = ["debug", "info", "warn", "error", "log", "trace"] as const;

interface Spare {
  readonly plugin: Promise<TakenPlugin>;
  readonly timer: NodeJS.Timeout;
}

/** The worker of Extism's background plugin (not in its typings). */
type WithWorker = { readonly worker?: { ref(): void; unref(): void } | null };

export class SparePlugins {
  readonly #spares = new Map<string, Spare>();
  #closed = false;

  /**
   * A fresh plugin of `module` bound to `binding` (its spare, or a new one), and a spare started
   * for the next call. `namespace` and `names`: the host functions the plugin offers.
   */
  async take(key: string, module: CompiledModule, namespace: string, names: readonly string[], binding: PluginBinding): Promise<Plugin> {
    const spare = this.#spares.get(key);
    this.#spares.delete(key);
    if (spare !== undefined) clearTimeout(spare.timer);
    if (!this.#closed) this.#keep(key, start(module, namespace, names));
    // A spare that could not start (a start function that calls the host before any call holds
    // it) gives way to a plugin started for this call, bound from the beginning.
    const taken = (await spare?.plugin.catch(() => undefined)) ?? (await start(module, namespace, names, binding));
    taken.bind(binding);
    (taken.plugin as unknown as WithWorker).worker?.ref();
    return taken.plugin;
  }

  /** Closes every spare. */
  async close(): Promise<void> {
    this.#closed = true;
    const spares = [...this.#spares.values()];
    this.#spares.clear();
    for (const spare of spares) clearTimeout(spare.timer);
    await Promise.all(spares.map((spare) => spare.plugin.then((p) => p.plugin.close()).catch(() => undefined)));
  }

  #keep(key: string, plugin: Promise<TakenPlugin>): void {
    // A spare that failed to start is dropped: the next call starts its own and reports why.
    plugin.catch(() => undefined);
    void plugin.then(
      (p) => (p.plugin as unknown as WithWorker).worker?.unref(),
      () => undefined,
    );
    const timer = setTimeout(() => {
      if (this.#spares.get(key)?.plugin !== plugin) return;
      this.#spares.delete(key);
      void plugin.then((p) => p.plugin.close()).catch(() => undefined);
    }, IDLE_MS);
    timer.unref();
    this.#spares.set(key, { plugin, timer });
    if (this.#spares.size > MAX_SPARES) {
      const [oldest, spare] = this.#spares.entries().next().value!;
      this.#spares.delete(oldest);
      clearTimeout(spare.timer);
      void spare.plugin.then((p) => p.plugin.close()).catch(() => undefined);
    }
  }
}

async function start(module: CompiledModule, namespace: string, names: readonly string[], binding?: PluginBinding): Promise<TakenPlugin> {
  let bound = binding;
  const forward =
    (name: string): HostFunction =>
    (context, offset) => {
      const fn = bound?.functions[name];
      if (fn === undefined) throw new Error(`the host function ${name} was called before a call held this plugin`);
      return fn(context, offset);
    };
  const logger = Object.fromEntries(LEVELS.map((level) => [level, (text: unknown) => bound?.logger[level](text)])) as unknown as Console;
  // Loaded at the first WebAssembly tool call, not with the engine: Extism imports `node:wasi`,
  // whose ExperimentalWarning every CLI command, server and embedded user printed otherwise.
  const { default: createPlugin } = await import("@extism/extism");
  const plugin = await createPlugin(
    // `never`: the typings take a module without the DOM's WebAssembly types, which the engine compiles without.
    { wasm: [{ module: module as never }] },
    { useWasi: false, runInWorker: true, allowedHosts: [], functions: { [namespace]: Object.fromEntries(names.map((name) => [name, forward(name)])) }, logger },
  );
  return {
    plugin,
    bind: (binding) => {
      bound = binding;
    },
  };
}
