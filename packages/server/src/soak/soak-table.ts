import type { SoakFigures } from "./soak.js";

/** The soak's figures as a Markdown table, one column per soak: what `npm run soak` prints and the README shows. */
export function soakTable(all: readonly SoakFigures[]): string {
  const rows: [string, (f: SoakFigures) => string | number][] = [
    ["runs × calls", (f) => `${f.runs} × ${f.calls}`],
    ["nodes killed (SIGKILL)", (f) => f.struck["kill-node"]],
    ["workers killed (SIGKILL)", (f) => f.struck["kill-worker"]],
    ["database restarts (`pg_ctl restart -m fast`)", (f) => f.struck["restart-db"]],
    ["database outages", (f) => f.struck["db-outage"]],
    ["completed", (f) => f.completed],
    ["**lost**", (f) => f.lost],
    ["**stranded**", (f) => f.stranded],
    ["**failed**", (f) => f.failed],
    ["`retry` calls", (f) => f.retryCalls],
    ["**`retry` calls without their effect**", (f) => f.retryMissing],
    ["`retry` calls sent again (deduplicated by key)", (f) => f.retryResent],
    ["**effects no call asked for**", (f) => f.strayEffects],
    ["`at_most_once` calls", (f) => f.atMostOnceCalls],
    ["**`at_most_once` calls sent twice**", (f) => f.atMostOnceTwice],
    ["**`at_most_once` calls completed without reaching their server**", (f) => f.atMostOnceMissing],
    ["`at_most_once` calls ended `outcomeUnknown`", (f) => f.outcomeUnknown],
    ["**journals failing `verify`**", (f) => f.verifyFailures],
    ["**webhook events lost**", (f) => f.webhooksLost],
    ["**signals lost**", (f) => f.signalsLost],
    ["last run ended after the last strike", (f) => `${(f.settledMs / 1000).toFixed(1)} s`],
    ["wall time", (f) => `${(f.wallMs / 1000).toFixed(0)} s`],
    ["seed", (f) => f.seed],
  ];
  const header = `| | ${all.map((f) => f.label).join(" | ")} |`;
  const rule = `| --- | ${all.map(() => "---").join(" | ")} |`;
  return [header, rule, ...rows.map(([name, value]) => `| ${name} | ${all.map((f) => String(value(f))).join(" | ")} |`)].join("\n");
}
