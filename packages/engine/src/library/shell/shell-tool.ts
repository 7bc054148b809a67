import { defineTool, result, type LibraryTool } from "../library-tool.js";
import { limitNotes } from "./shell-limits.js";
import type { ShellSandbox } from "./shell-sandbox.js";

/**
 * `shell.run`: a command in the workspace, in a sandbox (`shell-sandbox.ts`). Offered only when
 * `probeShell` found a working sandbox. Asked for by default: it runs code.
 */

/** Default and longest time a command may run, seconds. */
export const DEFAULT_TIMEOUT_SECONDS = 60;
export const MAX_TIMEOUT_SECONDS = 600;

interface RunArgs {
  readonly command: string;
  readonly timeoutSeconds?: number;
}

export function shellTools(sandbox: ShellSandbox): readonly LibraryTool<"workspace">[] {
  const limits = sandbox.limits;
  const { maxProcesses, maxStdoutBytes, maxStderrBytes } = limits;
  const mib = (bytes: number): string => `${Math.round(bytes / (1024 * 1024))} MiB`;
  const run = defineTool<RunArgs, "workspace">({
    name: "run",
    description:
      "Runs a shell command (/bin/sh -c) in the workspace, which is the working folder (/workspace), as an unprivileged user (nobody). The sandbox has no network, a read-only system " +
      "(the usual programs of /usr are there), a fresh empty /tmp, and no environment from outside; only the workspace can be written. " +
      `Limits: ${DEFAULT_TIMEOUT_SECONDS} s by default (timeoutSeconds, at most ${MAX_TIMEOUT_SECONDS}), ${maxProcesses} processes, ` +
      `${mib(limits.memoryBytes)} of memory per process, files of at most ${mib(limits.fileSizeBytes)}, ${mib(limits.tmpBytes)} of /tmp, ${limits.maxOpenFiles} open files, ` +
      `${maxStdoutBytes / 1024} KiB of stdout and ${maxStderrBytes / 1024} KiB of stderr kept (the result says how much more was left out).`,
    inputSchema: {
      type: "object",
      properties: {
        command: { type: "string", minLength: 1, maxLength: 100_000 },
        timeoutSeconds: { type: "integer", minimum: 1, maximum: MAX_TIMEOUT_SECONDS, description: `Default ${DEFAULT_TIMEOUT_SECONDS}.` },
      },
      required: ["command"],
      additionalProperties: false,
    },
    outputSchema: {
      type: "object",
      properties: {
        exitCode: { type: ["integer", "null"], description: "null when the command was killed." },
        signal: { type: ["string", "null"] },
        timedOut: { type: "boolean" },
        stdout: { type: "string" },
        stderr: { type: "string" },
        stdoutOmittedBytes: { type: "integer" },
        stderrOmittedBytes: { type: "integer" },
        durationMs: { type: "integer" },
        note: { type: "string" },
      },
      required: ["exitCode", "signal", "timedOut", "stdout", "stderr", "stdoutOmittedBytes", "stderrOmittedBytes", "durationMs"],
      additionalProperties: false,
    },
    risk: "high",
    approval: { kind: "unless_auto_approved", reason: "Runs a command in the workspace" },
    // IronClaw's defaults for its shell: 30 a minute, 300 an hour.
    rateLimit: { perMinute: 30, perHour: 300 },
    timeoutMs: (MAX_TIMEOUT_SECONDS + 30) * 1000,
    needs: ["workspace"],
    execute: async ({ command, timeoutSeconds = DEFAULT_TIMEOUT_SECONDS }, { workspace, signal }) => {
      const timeoutMs = Math.min(timeoutSeconds, MAX_TIMEOUT_SECONDS) * 1000;
      const ran = await sandbox.run({ command, workspace: workspace.root, writable: workspace.mode === "rw", timeoutMs, signal });
      const notes: string[] = [];
      if (ran.stopped === "timeout") notes.push(`The command was stopped after ${timeoutMs / 1000} s, its time limit.`);
      if (ran.stopped === "output") notes.push("The command was stopped: it printed far more than is kept.");
      if (ran.stopped === "aborted") notes.push("The command was stopped: the call was cancelled.");
      notes.push(...limitNotes(ran, limits));
      if (ran.stdoutOmittedBytes > 0)
        notes.push(`${ran.stdoutOmittedBytes} more bytes of stdout were left out; redirect output to a file and read it with files.read.`);
      if (ran.stderrOmittedBytes > 0) notes.push(`${ran.stderrOmittedBytes} more bytes of stderr were left out.`);
      if (workspace.mode === "ro" && ran.exitCode !== 0) notes.push("The workspace is read-only for this toolset: commands cannot change it.");
      return result({
        exitCode: ran.exitCode,
        signal: ran.signal,
        timedOut: ran.stopped === "timeout",
        stdout: ran.stdout,
        stderr: ran.stderr,
        stdoutOmittedBytes: ran.stdoutOmittedBytes,
        stderrOmittedBytes: ran.stderrOmittedBytes,
        durationMs: ran.durationMs,
        ...(notes.length === 0 ? {} : { note: notes.join(" ") }),
      });
    },
  });
  return [run];
}
