/**
 * `test_script`'s answer as the model reads it: how the test run ended (in virtual time, against
 * the scenario's mocks), each call with its virtual time and who answered it, the last log
 * lines, and what to add to the scenario when the run waits for something it does not bring.
 * A test keeps no run, so its output is cut, not paged.
 */
import { formatRunError, type RunWait } from "@tapedeck/protocol";
import type { TestCall } from "@tapedeck/protocol/api";
import type { TestResult } from "../client.js";
import { refusedText, type ModelText } from "./model-text.js";
import { outputText } from "./output-page.js";
import { LOG_LINES, LOG_LINE_CHARS, TRACE_CALLS, VALUE_CHARS, failureText } from "./run-trace.js";
import { DEFAULT_OUTPUT_LIMIT, TEXT_OVERHEAD_CHARS, bound, boundList, summarize } from "./text-limits.js";

/** The answer to `test_script`: a test that failed is the model's to fix (`isError`). */
export function testReportText(result: TestResult, outputLimit = DEFAULT_OUTPUT_LIMIT): ModelText {
  if (result.kind === "refused") return refusedText(result.diagnostics);
  const parts = [
    `The test run (mocks and virtual time: nothing was sent to a tool) ended ${result.status} after ${virtual(result.virtualMs)} of virtual time.`,
  ];
  if (result.status === "completed") parts.push(`Output (JSON):\n${bound(outputText(result.output ?? null), outputLimit)}`);
  if (result.status === "failed" && result.error) parts.push(formatRunError(result.error));
  if (result.status === "waiting")
    parts.push(`It waits for what the scenario does not bring:\n${(result.waits ?? []).map((wait) => `- ${scenarioHint(wait)}`).join("\n")}`);
  const calls = boundList(result.calls, TRACE_CALLS, "last", "earlier calls");
  if (result.calls.length > 0) parts.push(["Calls:", ...(calls.cut ? [calls.cut] : []), ...calls.items.map(callLine)].join("\n"));
  const logs = boundList(result.logs, LOG_LINES, "last", "earlier log lines");
  if (result.logs.length > 0)
    parts.push(
      [
        "Last log lines:",
        ...(logs.cut ? [logs.cut] : []),
        ...logs.items.map((l) => `[+${virtual(l.atMs)}] [${l.level}] ${bound(l.message, LOG_LINE_CHARS)}`),
      ].join("\n"),
    );
  if (result.status === "failed") parts.push("Fix the script (or the scenario: every call needs a mock, else it fails no_mock) and test it again.");
  return { text: bound(parts.join("\n\n"), outputLimit + TEXT_OVERHEAD_CHARS), isError: result.status === "failed" };
}

/** `#2 +30s github.search({"q":"x"}) → mock: []`. */
function callLine(call: TestCall): string {
  const outcome = call.error
    ? `failed: ${failureText(call.error)}`
    : call.endedAtMs === undefined
      ? "(no answer)"
      : summarize(call.result ?? null, VALUE_CHARS);
  return `#${call.seq} +${virtual(call.atMs)} ${call.tool}(${summarize(call.args, VALUE_CHARS)}) → ${call.answeredBy}: ${outcome}`;
}

/** What to add to the scenario for the run to go on. */
function scenarioHint(wait: RunWait): string {
  switch (wait.kind) {
    case "signal":
      return `the signal ${JSON.stringify(wait.name)} (call #${wait.seq}): add { "name": ${JSON.stringify(wait.name)}, "at": "1m", "payload": … } to the scenario's "signals".`;
    case "approval":
      return `approval of ${wait.tool} (call #${wait.seq}): add { "tool": ${JSON.stringify(wait.tool)}, "decision": "approve" } to the scenario's "approvals".`;
    case "parked":
      return `${wait.tool} (call #${wait.seq}) was held back: ${bound(wait.message, VALUE_CHARS)}`;
    case "sleep":
      return `a sleep (call #${wait.seq}) that did not end.`;
    case "rate_limit":
      return `${wait.tool} (call #${wait.seq}) waiting for its rate limit, which did not end.`;
    case "child":
      return `the workflow ${wait.workflow} (call #${wait.seq}, run ${wait.runId}) that did not end: it waits for something the scenario does not give.`;
    case "worker":
      return `${wait.tool} (call #${wait.seq}), which no worker serves: add a mock for it to the scenario's "tools".`;
  }
}

/** A virtual duration: "250ms", "30s", "2h 5m". */
function virtual(ms: number): string {
  if (ms < 1_000) return `${ms}ms`;
  const units: [string, number][] = [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1_000],
  ];
  let rest = Math.round(ms / 1_000) * 1_000;
  const parts: string[] = [];
  for (const [unit, size] of units) {
    if (rest >= size) parts.push(`${Math.floor(rest / size)}${unit}`);
    rest %= size;
  }
  return parts.join(" ");
}
