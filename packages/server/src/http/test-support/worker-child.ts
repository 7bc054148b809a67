import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const MAIN = fileURLToPath(new URL("./worker-child-main.js", import.meta.url));

/** What the child's tool printed when it started a call. */
export interface StartedCall {
  readonly tool: string;
  readonly key: string;
  readonly attempt: number;
}

export interface WorkerChild {
  /** The next call one of its tools started (in order). */
  started(): Promise<StartedCall>;
  /** SIGKILLs it and waits for it to exit. */
  kill(): Promise<void>;
}

/** Starts `worker-child-main` serving `tools` (each holds its calls forever). */
export function startWorkerChild(baseUrl: string, apiKey: string, tools: readonly string[]): WorkerChild {
  const child = spawn(process.execPath, [MAIN, baseUrl, apiKey, tools.join(",")], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = once(child, "close");
  const lines: StartedCall[] = [];
  const waiting: ((call: StartedCall) => void)[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    const call = JSON.parse(line) as StartedCall;
    const next = waiting.shift();
    if (next) next(call);
    else lines.push(call);
  });
  return {
    started: () => {
      const ready = lines.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
