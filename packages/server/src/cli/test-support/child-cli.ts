import { spawn, type ChildProcessByStdio } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";

/**
 * `tapedeck` in a child process, for tests that kill it for real (SIGKILL) and go on in
 * another. Tests wait for what a child prints, never for a length of time.
 */
const BIN = fileURLToPath(new URL("../main.js", import.meta.url));

export type Child = ChildProcessByStdio<null, Readable, Readable>;

function spawnCli(args: readonly string[], env: Record<string, string>): Child {
  return spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
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
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, stdout, stderr };
}

/** Reads the child's stderr until a line matches `pattern` (returned whole, with the match); fails with what it printed if it exits first. */
export async function stderrLine(child: Child, pattern: RegExp): Promise<{ readonly line: string; readonly match: RegExpExecArray }> {
  const seen: string[] = [];
  for await (const line of createInterface({ input: child.stderr })) {
    const match = pattern.exec(line);
    if (match) return { line, match };
    seen.push(line);
  }
  throw new Error(`tapedeck exited without printing a line matching ${pattern}; its stderr:\n${seen.join("\n")}`);
}

/** Kills the child with SIGKILL and resolves with the signal it died of. */
export async function killHard(child: Child): Promise<NodeJS.Signals | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.signalCode;
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  child.kill("SIGKILL");
  return exited;
}
