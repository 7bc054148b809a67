/**
 * The text the model reads back from the agent tools: plain, written for it, bounded (it goes
 * into its context). Completed: the output up to `outputLimit`, with the `get_run` call that
 * reads the rest, and the last log lines. Waiting: the run id and what it waits for. Failed: the
 * error with its line and code frame, the call that failed, the trace up to the failure.
 * Refused: the type checker's diagnostics with their code frames.
 *
 * `isError` marks what the model should fix (a failed run, a refused script, an offset past the
 * output's end); a run that waits, runs on or was cancelled is information, not an error.
 */
import { formatDuration, formatRunError, needsDecision, type Diagnostic, type JournalEntry, type RunError } from "@tapedeck/protocol";
import type { CheckResult, Run, RunOutputPage } from "@tapedeck/protocol/api";
import { diagnosticsText } from "./diagnostics-text.js";
import { outputPage, pageWithinBytes } from "./output-page.js";
import { callLine, logLines, traceLines, tracedCalls } from "./run-trace.js";
import { DEFAULT_OUTPUT_LIMIT, TEXT_OVERHEAD_CHARS, bound, boundList, cutMarker, isoTime } from "./text-limits.js";
import { DEFAULT_MAX_WAIT_SECONDS } from "./tool-definitions.js";
import { waitLines, waitSummary } from "./wait-text.js";

/** A result for the model: its text, and whether it reports a mistake the model should fix. */
export interface ModelText {
  readonly text: string;
  readonly isError: boolean;
}

export interface RunTextOptions {
  /** The run's journal, or its last entries: the logs, the trace and a cancellation's reason come from it. Default: none. */
  readonly journal?: readonly JournalEntry[];
  /** The most of the output shown, UTF-8 bytes of its JSON text. Default 256 KiB. */
  readonly outputLimit?: number;
  /** Where the output is read from, characters into its JSON text (`get_run`'s `offset`). Default 0. */
  readonly offset?: number;
  /** The page of the output to show, when it was read from the server (`runs.output`). Default: the page of `run.output` at `offset`. */
  readonly page?: RunOutputPage;
  /** How long the call waited for the run, seconds, said of a run still going. Default: not said. */
  readonly waited?: number;
  /** The longest wait the model may ask for, seconds, suggested to follow a run. Default 120. */
  readonly maxWait?: number;
  /** The type checker's warnings when the run started. Default: none. */
  readonly warnings?: readonly Diagnostic[];
  /** The time now, ms since the epoch: how long until a sleeping run wakes. Default `Date.now()`. */
  readonly now?: number;
}

/** An error's text (`formatRunError`: line, code frame, failed call, stack) is cut past this many characters. */
export const ERROR_CHARS = 8_000;
/** A list of runs shows at most this many. */
export const RUNS_SHOWN = 50;

/** A run, in its current state, as the model reads it. */
export function runText(run: Run, options: RunTextOptions = {}): ModelText {
  const limit = options.outputLimit ?? DEFAULT_OUTPUT_LIMIT;
  const journal = options.journal ?? [];
  const { parts, isError } = statusParts(run, journal, limit, options);
  if (options.warnings !== undefined && options.warnings.length > 0) parts.push(`Type checker warnings:\n${diagnosticsText(options.warnings)}`);
  return { text: bound(parts.join("\n\n"), limit + TEXT_OVERHEAD_CHARS), isError };
}

/** The parts of a run's text, and whether they report a mistake of the model: a failed run, or an offset past the output's end. */
function statusParts(run: Run, journal: readonly JournalEntry[], limit: number, options: RunTextOptions): { parts: string[]; isError: boolean } {
  if (run.status === "completed") {
    // A page of `limit` code units holds at least `limit` bytes: cutting it to bytes leaves the right page.
    const page = pageWithinBytes(options.page ?? outputPage(run.output ?? null, options.offset ?? 0, limit), limit);
    return {
      parts: [
        outputPart(run, page, options.offset),
        ...section("Calls", traceLines(run.id, tracedCalls(journal))),
        ...section("Last log lines", logLines(journal)),
      ],
      isError: page.text === "",
    };
  }
  if (run.status === "failed")
    return {
      parts: failedParts(run, run.error ?? { kind: "internal", message: "the run failed without an error (a fault of Tapedeck)" }, journal),
      isError: true,
    };
  return { parts: unfinishedParts(run, journal, options), isError: false };
}

/** A run that was cancelled, or has not ended. */
function unfinishedParts(run: Run, journal: readonly JournalEntry[], options: RunTextOptions): string[] {
  const id = JSON.stringify(run.id);
  const follow = `get_run({ run_id: ${id}, wait: ${options.maxWait ?? DEFAULT_MAX_WAIT_SECONDS} })`;
  switch (run.status) {
    case "cancelled": {
      const reason = journal.find((entry) => entry.kind === "run.cancelled");
      return [`Run ${run.id} was cancelled${reason?.kind === "run.cancelled" && reason.reason ? `: ${bound(reason.reason, 500)}` : "."}`];
    }
    case "waiting":
      return [
        run.waits?.length
          ? `Run ${run.id} is waiting (it holds nothing meanwhile) for:\n${waitLines(run.id, run.waits).join("\n")}`
          : `Run ${run.id} is waiting.`,
        followUp(run, follow, options),
        ...section("Calls so far", traceLines(run.id, tracedCalls(journal))),
      ];
    case "queued":
    case "running": {
      const still = `Run ${run.id} ${run.status === "queued" ? "has not started yet" : "is still running"}${options.waited === undefined ? "" : ` after ${options.waited} s`}.`;
      return [
        `${still} It goes on without you: wait for it with ${follow}, or stop it with cancel_run({ run_id: ${id} }).`,
        ...section(
          "Calls waiting for a worker",
          waitLines(
            run.id,
            (run.waits ?? []).filter((wait) => wait.kind === "worker"),
            options.now,
          ),
        ),
        ...section("Calls waiting for a decision", waitLines(run.id, (run.waits ?? []).filter(needsDecision))),
        ...section("Calls so far", traceLines(run.id, tracedCalls(journal))),
        ...section("Last log lines", logLines(journal)),
      ];
    }
    default:
      return [];
  }
}

/**
 * How the model follows a waiting run. One that only sleeps wakes at a known time: beyond the
 * longest wait it may ask for, waiting now would only hold it, so it is told when to come back.
 */
function followUp(run: Run, follow: string, options: RunTextOptions): string {
  const id = JSON.stringify(run.id);
  const stop = `stop it with cancel_run({ run_id: ${id} })`;
  const sleeping =
    run.wakeAt !== undefined && (run.waits ?? []).length > 0 && (run.waits ?? []).every((wait) => wait.kind === "sleep" || wait.kind === "rate_limit");
  if (!sleeping || run.wakeAt === undefined) return `Follow it with ${follow}, or ${stop}.`;
  const left = Math.max(0, run.wakeAt - (options.now ?? Date.now()));
  const wakes = `It wakes by itself at ${isoTime(run.wakeAt)}, in ${formatDuration(left)}, and goes on then.`;
  if (left <= (options.maxWait ?? DEFAULT_MAX_WAIT_SECONDS) * 1000) return `${wakes} Follow it with ${follow}, or ${stop}.`;
  return `${wakes} Do not wait for it now: call get_run({ run_id: ${id} }) after that time to read what it did (its output, or what it waits for next), or ${stop}.`;
}

function outputPart(run: Run, page: RunOutputPage, requested = page.offset): string {
  if (page.text === "") return `Run ${run.id} completed. Its output is ${page.total} characters of JSON: offset ${requested} is past its end.`;
  if (page.offset === 0 && page.nextOffset === undefined) return `Run ${run.id} completed. Output (JSON):\n${page.text}`;
  const head = `Run ${run.id} completed. Output (JSON text, characters ${page.offset} to ${page.nextOffset ?? page.total} of ${page.total}):`;
  const rest =
    page.nextOffset === undefined
      ? ""
      : `\n${cutMarker(page.total - page.nextOffset)}: read on with get_run({ run_id: ${JSON.stringify(run.id)}, offset: ${page.nextOffset} })`;
  return `${head}\n${page.text}${rest}`;
}

function failedParts(run: Run, error: RunError, journal: readonly JournalEntry[]): string[] {
  const failedAt = journal.find((entry) => entry.kind === "run.failed")?.index ?? Infinity;
  const calls = tracedCalls(journal.filter((entry) => entry.index < failedAt));
  const failed = error.call === undefined ? undefined : calls.find((call) => call.seq === error.call?.seq);
  return [
    `Run ${run.id} failed.\n${bound(formatRunError(error), ERROR_CHARS)}`,
    ...(failed ? [`The call that failed: ${callLine(run.id, failed)}`] : []),
    ...section("Calls up to the failure", traceLines(run.id, calls)),
    ...section("Last log lines", logLines(journal)),
    fixHint(run.id, error),
  ];
}

function fixHint(runId: string, error: RunError): string {
  const retry = `retry_run({ run_id: ${JSON.stringify(runId)}, code })`;
  const reuse = "the calls that completed are reused, not made again";
  switch (error.kind) {
    case "script":
      if (error.failure?.retryable)
        return `The failed call may succeed if made again: call ${retry} with the same script (${reuse}), or catch the ToolError in the script and wait before trying again.`;
      return `Fix the script${error.failure ? " (change the call, or catch its ToolError)" : ""} and call ${retry}: ${reuse}.`;
    case "limit":
      if (error.failure?.code === "budget_exceeded")
        return `The run used up its budget: the call past it was not made. Change the script so it needs fewer calls (stop the loop once it has what it needs, ask for less per call, keep what calls answered), then call ${retry}: ${reuse} (they count against the new run's budget too).`;
      return `Make the script do less in one run (fewer or smaller calls and values), then call ${retry}: ${reuse}.`;
    case "deadlock":
      return `The script awaits something nothing will ever settle. Fix it and call ${retry}: ${reuse}.`;
    case "output":
      return `Return plain JSON (no undefined, functions, cycles or BigInt), within the size limit, then call ${retry}: ${reuse}.`;
    case "divergence":
    case "internal":
      return `This is a fault of Tapedeck, not of your script: ${retry} with the same script may work (${reuse}).`;
  }
}

/** The script did not type-check, so no run was started. */
export function refusedText(diagnostics: readonly Diagnostic[]): ModelText {
  return {
    text: `The script was refused by the type checker: nothing ran. Fix these problems and send it again.\n\n${diagnosticsText(diagnostics)}`,
    isError: true,
  };
}

/** `check_script`'s answer. */
export function checkText(result: CheckResult): ModelText {
  if (!result.ok) return { text: `The script does not type-check. Fix these problems:\n\n${diagnosticsText(result.diagnostics)}`, isError: true };
  return {
    text:
      result.diagnostics.length === 0 ? "ok: the script type-checks." : `ok: the script type-checks, with warnings:\n\n${diagnosticsText(result.diagnostics)}`,
    isError: false,
  };
}

/** One journal entry in full (`get_run({ entry })`), cut at `outputLimit` characters. */
export function entryText(runId: string, entry: JournalEntry, outputLimit = DEFAULT_OUTPUT_LIMIT): ModelText {
  return {
    text: `Entry ${entry.index} of run ${runId} (${entry.kind}, ${isoTime(entry.at)}):\n${bound(JSON.stringify(entry, null, 2), outputLimit)}`,
    isError: false,
  };
}

/** `list_runs`' answer: one line per run, newest first. */
export function runListText(runs: readonly Run[]): ModelText {
  if (runs.length === 0) return { text: "No runs.", isError: false };
  const { items, cut } = boundList(runs, RUNS_SHOWN, "first", "runs");
  const lines = items.map((run) => {
    // A running run's waits are its calls waiting for a decision or a worker: what holds it up.
    const waits = (run.status === "waiting" || run.status === "running") && run.waits?.length ? ` (${run.waits.map(waitSummary).join(", ")})` : "";
    return bound(`- ${run.id} · ${run.status}${waits} · started ${isoTime(run.createdAt)}${run.parent ? ` · retry of ${run.parent}` : ""}`, 500);
  });
  return { text: [`${runs.length} run${runs.length === 1 ? "" : "s"}, newest first:`, ...lines, ...(cut ? [cut] : [])].join("\n"), isError: false };
}

/** A titled block, or nothing when it has no lines. */
function section(title: string, lines: readonly string[]): string[] {
  return lines.length === 0 ? [] : [`${title}:\n${lines.join("\n")}`];
}
