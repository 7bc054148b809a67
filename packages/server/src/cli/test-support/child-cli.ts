import { spawn, type ChildProcessByStdio } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";

/**
 * `tapedeck` in a child process, for tests that kill it for real (SIGKILL) and go on in
 * another. Tests wait for what a child prints, never for a length of time.
 */
const BIN = fileURLToPath(new URL("../main.js", import.meta.url));

export type Child = ChildProcessByStdio<null, Readable, Readable>;

/**
 * Everything a child prints, captured from the moment it is spawned: a child may finish before
 * the test asks for its output (it was woken by another process), and a stream read late, or
 * paused by a reader that stopped early, could hold back its `close` forever.
 */
interface Captured {
  stdout: string;
  stderr: string;
  readonly lines: string[];
  partial: string;
  readonly onLine: Set<(line: string) => void>;
  readonly closed: Promise<number | null>;
}

const captured = new WeakMap<Child, Captured>();

function spawnCli(args: readonly string[], env: Record<string, string>): Child {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const c: Captured = {
    stdout: "",
    stderr: "",
    lines: [],
    partial: "",
    onLine: new Set(),
    closed: new Promise((resolve) => child.on("close", (code) => resolve(code))),
  };
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stdout.on("data", (d: string) => (c.stdout += d));
  child.stderr.on("data", (d: string) => {
    c.stderr += d;
    const parts = (c.partial + d).split("\n");
    c.partial = parts.pop() ?? "";
    for (const line of parts) {
      c.lines.push(line);
      for (const listener of c.onLine) listener(line);
    }
  });
  captured.set(child, c);
  return child;
}

function capturedOf(child: Child): Captured {
  const c = captured.get(child);
  if (!c) throw new Error("not a child started by withCliTest");
  return c;
}

export interface CliTest {
  /** A new temporary folder, removed afterwards. */
  readonly dir: string;
  /** `tapedeck <args>` in a child process, with `env` added to this process's environment. */
  readonly spawn: (args: readonly string[], env?: Record<string, string>) => Child;
}

/**
 * Runs `fn` with a temporary folder and a way to start `tapedeck` children. However `fn` ends,
 * its children still running are killed (a test that fails while one waits must not leave it
 * behind, nor hang the test file on its pipes), then the folder is removed.
 */
export async function withCliTest<T>(prefix: string, fn: (t: CliTest) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const children: Child[] = [];
  try {
    return await fn({
      dir,
      spawn: (args, env = {}) => {
        const child = spawnCli(args, env);
        children.push(child);
        return child;
      },
    });
  } finally {
    await Promise.all(children.map(killHard));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Everything a child prints, and its exit code, once it has exited. */
export async function collect(child: Child): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const c = capturedOf(child);
  const code = await c.closed;
  return { code, stdout: c.stdout, stderr: c.stderr };
}

/** Reads the child's stderr until a line matches `pattern` (returned whole, with the match); fails with what it printed if it exits first. */
export async function stderrLine(child: Child, pattern: RegExp): Promise<{ readonly line: string; readonly match: RegExpExecArray }> {
  const c = capturedOf(child);
  const find = (line: string) => {
    const match = pattern.exec(line);
    return match ? { line, match } : undefined;
  };
  for (const line of c.lines) {
    const found = find(line);
    if (found) return found;
  }
  let listener: ((line: string) => void) | undefined;
  try {
    return await Promise.race([
      new Promise<{ line: string; match: RegExpExecArray }>((resolve) => {
        listener = (line) => {
          const found = find(line);
          if (found) resolve(found);
        };
        c.onLine.add(listener);
      }),
      c.closed.then(() => {
        throw new Error(`tapedeck exited without printing a line matching ${pattern}; its stderr:\n${c.stderr}`);
      }),
    ]);
  } finally {
    if (listener) c.onLine.delete(listener);
  }
}

/** Kills the child with SIGKILL and resolves with the signal it died of. */
export async function killHard(child: Child): Promise<NodeJS.Signals | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.signalCode;
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  child.kill("SIGKILL");
  return exited;
}
