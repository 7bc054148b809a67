import { spawn, type ChildProcessByStdio } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Tapedeck } from "@tapedeck/sdk";
import { ADMIN_KEY_FILE } from "../../cli/admin-key-notice.js";

/**
 * A real `tapedeck serve` in a child process on 127.0.0.1 with an ephemeral port, for tests
 * that go through HTTP. Its address is read from what it prints on stdout (no sleeps, no
 * polling); its admin key, on a new store, from `<data>/admin-key`, where a server whose stdout
 * is not a terminal writes it before it says it listens (never into its log).
 */
const BIN = fileURLToPath(new URL("../../cli/main.js", import.meta.url));
/** How long `stop` waits for the server to exit after SIGTERM: a clean stop takes a second or two, even under load. */
const STOP_DEADLINE_MS = 60_000;

export interface ServeChild {
  readonly url: string;
  readonly dataDir: string;
  /** The server's process id (to stop it with SIGSTOP, as a node that hangs). */
  readonly pid: number;
  /** The admin key printed at the first start (a new data folder); undefined when the data folder had keys. */
  readonly adminKey: string | undefined;
  /** Everything the server wrote to stderr so far (its log included). */
  stderr(): string;
  /** Whether the process is still up (it has not exited, by itself or by a signal). */
  running(): boolean;
  /** The first line of stderr, already written or to come, that `matches`; rejects with stderr if the server exits first. */
  stderrLine(matches: (line: string) => boolean): Promise<string>;
  /** A client on this server. */
  client(apiKey: string, namespace?: string): Tapedeck;
  /** Deletes the data folder (after `stop`). */
  cleanup(): void;
  /** Stops the server (SIGTERM) and waits for it to exit and its output to be read; resolves with its exit code. */
  stop(): Promise<number | null>;
  /** Kills the server (SIGKILL: no shutdown at all, as a crash) and waits for it to exit. */
  kill(): Promise<void>;
}

export interface ServeChildOptions {
  /** The data folder of a server started before (default: a new temp folder, whose first start prints the admin key). */
  readonly dataDir?: string;
  /** Source of a host tool module, written to a temp file and passed as `--host-module`. */
  readonly hostModule?: string;
  /** More environment variables for the server. */
  readonly env?: Readonly<Record<string, string>>;
  /** More arguments for `tapedeck serve` (`--log-level debug`). */
  readonly args?: readonly string[];
  /** Whether its store is new, so that its first start prints the admin key (default: the data folder has no database yet). A server on a store URL says. */
  readonly fresh?: boolean;
  /** The port to listen on (default 0: any free port). A restart on the same data folder passes its previous port, so run-bound webhook URLs stay valid. */
  readonly port?: number;
}

export async function startServeChild(options: ServeChildOptions = {}): Promise<ServeChild> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "tapedeck-serve-"));
  // A folder without a database is new: its first start prints the admin key.
  const fresh = options.fresh ?? !existsSync(join(dataDir, "tapedeck.db"));
  const args = ["serve", "--port", String(options.port ?? 0), "--data", dataDir, ...(options.args ?? [])];
  if (options.hostModule !== undefined) {
    const path = join(dataDir, "host-tools.ts");
    writeFileSync(path, options.hostModule);
    args.push("--host-module", path);
  }
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...options.env } });
  let stderr = "";
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  createInterface({ input: child.stderr }).on("line", (line) => {
    stderr += `${line}\n`;
    lines.push(line);
    for (const listener of listeners) listener(line);
  });
  // "close": the process exited and its output was read to the end.
  const exited = once(child, "close") as Promise<[number | null, NodeJS.Signals | null]>;
  const stderrLine = (matches: (line: string) => boolean): Promise<string> => {
    const found = lines.find(matches);
    if (found !== undefined) return Promise.resolve(found);
    let listener: (line: string) => void = () => {};
    return Promise.race([
      new Promise<string>((resolve) => {
        listener = (line) => {
          if (matches(line)) resolve(line);
        };
        listeners.add(listener);
      }),
      exited.then(() => {
        throw new Error(`tapedeck serve exited without printing the line looked for; its stderr:\n${stderr}`);
      }),
    ]).finally(() => listeners.delete(listener));
  };
  // Undefined when stdout ends without the line: the server failed to start.
  const url = await firstMatch(child.stdout, /^tapedeck listening on (\S+)$/);
  if (url === undefined) {
    const [code] = await exited;
    throw new Error(`tapedeck serve exited (${code}) before listening:\n${stderr}`);
  }
  return {
    url,
    dataDir,
    pid: child.pid!,
    adminKey: fresh ? readFileSync(join(dataDir, ADMIN_KEY_FILE), "utf8").trim() : undefined,
    stderr: () => stderr,
    running: () => child.exitCode === null && child.signalCode === null,
    stderrLine,
    client: (apiKey, namespace) => new Tapedeck({ baseUrl: url, apiKey, ...(namespace === undefined ? {} : { namespace }) }),
    cleanup: () => rmSync(dataDir, { recursive: true, force: true }),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      // A server that does not stop is a failure to report, not a test file that hangs until its limit.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), STOP_DEADLINE_MS)));
      const stopped = await Promise.race([exited, late]).finally(() => clearTimeout(timer));
      if (stopped === "late") {
        child.kill("SIGKILL");
        await exited;
        throw new Error(`tapedeck serve did not exit within ${STOP_DEADLINE_MS} ms of SIGTERM (it was killed); its stderr:\n${stderr}`);
      }
      return stopped[0];
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** The first capture of `pattern` in a stream's lines (undefined if the stream ends first); every line goes to `onLine`. */
function firstMatch(stream: Readable, pattern: RegExp, onLine: (line: string) => void = () => {}): Promise<string | undefined> {
  return new Promise((resolve) => {
    let found = false;
    const lines = createInterface({ input: stream });
    lines.on("line", (line) => {
      onLine(line);
      const match = found ? null : pattern.exec(line);
      if (match) {
        found = true;
        resolve(match[1]);
      }
    });
    lines.on("close", () => resolve(undefined));
  });
}

/** Runs `tapedeck keys create` on a data folder; resolves with the key it printed. */
export async function createKey(dataDir: string, ...args: string[]): Promise<string> {
  const child: ChildProcessByStdio<null, Readable, Readable> = spawn(process.execPath, [BIN, "keys", "create", "--data", dataDir, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  if (code !== 0) throw new Error(`tapedeck keys create failed (${code}): ${err}`);
  return out.trim();
}
