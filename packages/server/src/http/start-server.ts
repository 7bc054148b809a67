import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Engine, SqliteStore } from "@tapedeck/engine";
import type { FastifyInstance } from "fastify";
import { ensureAdminKey } from "./auth/api-keys.js";
import { loadOrCreateServerSecret } from "./auth/server-secret.js";
import { TokenSigner } from "./auth/tokens.js";
import { buildApp } from "./app.js";
import { resolveServeOptions, type ServeOptions } from "./serve-options.js";
import { ServerContext } from "./server-context.js";

export interface RunningServer {
  /** Where the server listens, such as `http://127.0.0.1:7700`. */
  readonly url: string;
  /** The admin API key, when this start created it (the data folder's first): shown once, never stored. */
  readonly adminKey?: string;
  /** Stops taking requests, answers held ones, then closes the engine (runs stay intact and resume at the next start). */
  close(): Promise<void>;
}

/**
 * Starts the HTTP server on one engine over the data folder's SQLite store. In order: the
 * store opens (and migrates), the admin key is created if the folder has no key, the server
 * listens, then the engine opens with webhook URLs pointing at the address it got, and the
 * runs a previous process left `running` are resumed. Until the engine is open, `/v1`
 * answers 503 and `GET /health` says `starting`.
 *
 * Fails (closing what it opened) if the store cannot be opened or the port is taken.
 */
export async function startServer(options: ServeOptions = {}): Promise<RunningServer> {
  const resolved = resolveServeOptions(options);
  mkdirSync(resolved.dataDir, { recursive: true });
  const store = SqliteStore.open({ path: join(resolved.dataDir, "tapedeck.db"), durability: resolved.durability });
  let context: ServerContext | undefined;
  let app: FastifyInstance | undefined;
  let engine: Engine | undefined;
  try {
    const admin = await ensureAdminKey(store);
    context = new ServerContext(store, new TokenSigner(loadOrCreateServerSecret(resolved.dataDir, resolved.log)));
    app = await buildApp(context, resolved.log);
    const listening = app;
    const address = await listen(() => listening.listen({ port: resolved.port, host: resolved.host }), resolved);
    const url = resolved.publicUrl ?? address;
    if (resolved.publicUrl === undefined && /^(0\.0\.0\.0|::|\[::\])$/.test(resolved.host)) {
      resolved.log(`tapedeck: warning: listening on every address; run-bound webhook URLs will point at ${address}. Pass --public-url <the URL clients reach this server at>.`);
    }
    engine = await Engine.open({ store, webhookBaseUrl: url, ...(resolved.hostTools ? { hostTools: resolved.hostTools } : {}) });
    engine.on((event) => {
      if (event.type === "engine.error") resolved.log(`tapedeck: background fault (runs are intact): ${describe(event.error)}`);
    });
    context.attach(engine);
    await resumeLeftRunning(engine, resolved.log);
    const running = context;
    const opened = engine;
    return {
      url: address,
      ...(admin ? { adminKey: admin.secret } : {}),
      close: async () => {
        running.stop();
        await listening.close();
        await opened.close();
      },
    };
  } catch (error) {
    context?.stop();
    await app?.close();
    // The engine owns the store once open; before that, the store is closed here.
    await (engine ? engine.close() : store.close());
    throw error;
  }
}

async function listen(start: () => Promise<string>, options: { readonly host: string; readonly port: number }): Promise<string> {
  try {
    return await start();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") throw new Error(`Port ${options.port} on ${options.host} is in use (another tapedeck serve?). Stop it, or pass --port <n> (0 picks a free port).`);
    if (code === "EADDRNOTAVAIL") throw new Error(`Cannot listen on ${options.host}: this machine has no such address. Pass --host 127.0.0.1, or an address of this machine.`);
    throw error;
  }
}

/**
 * Runs a previous process left `running` (it died or was killed) go on, one by one: a run
 * that cannot (its toolset has host tools this server does not implement) is reported and
 * left as it is, without stopping the others.
 */
async function resumeLeftRunning(engine: Engine, log: (line: string) => void): Promise<void> {
  for (const run of await engine.listRuns({ status: ["running"], limit: 10_000 })) {
    try {
      await engine.resume(run.id);
    } catch (error) {
      log(`tapedeck: run ${run.id} was left running and cannot resume here: ${describe(error)}`);
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
