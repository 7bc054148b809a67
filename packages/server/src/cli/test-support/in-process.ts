import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Output } from "../print.js";

/** An `Output` that keeps what a command printed in this process, line by line. */
export function capture(): Output & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => out.push(t), stderr: (t) => err.push(t) };
}

/** Runs `fn` with a new temporary folder, removed however `fn` ends. */
export async function withDir<T>(fn: (dir: string) => Promise<T>, prefix = "tapedeck-cli-"): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
