import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Diagnostic, JournalEntry, JsonValue, RunError } from "@tapedeck/protocol";
import type { Run, TestCall } from "@tapedeck/protocol/api";
import { ERROR_CHARS, checkText, entryText, refusedText, runListText, runText } from "./model-text.js";
import { outputPage, outputText } from "./output-page.js";
import { searchText } from "./search-text.js";
import { testReportText } from "./test-report-text.js";
import { DEFAULT_OUTPUT_LIMIT, TEXT_OVERHEAD_CHARS, bound } from "./text-limits.js";

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

const SOURCE = `import { github } from "tapedeck:tools";
export default async (input: { repo: string }) => {
  const issues = await github.list_issues({ repo: input.repo });
  console.log(\`fetched \${issues.length} issues\`);
  const first = await github.get_issue({ repo: input.repo, n: issues[0].number });
  return { title: first.title };
};`;

function run(fields: Partial<Run> & Pick<Run, "id" | "status">): Run {
  return {
    toolset: "ts_9f2c41",
    source: SOURCE,
    input: { repo: "acme/api" },
    labels: { agent: "repo-analyst" },
    createdAt: T0,
    updatedAt: T0 + 4_000,
    journalLength: 0,
    ...fields,
  };
}

/** Numbers `index` and `at` as the journal does. */
function journal(...events: readonly object[]): JournalEntry[] {
  return events.map((event, index) => ({ index, at: T0 + index * 100, ...event }) as JournalEntry);
}

const FRAME = [
  "  4 |   console.log(`fetched ${issues.length} issues`);",
  "> 5 |   const first = await github.get_issue({ repo: input.repo, n: issues[0].number });",
  "    |                 ^",
].join("\n");

const RATE_LIMITED: RunError = {
  kind: "script",
  name: "ToolError",
  message: "slow down",
  failure: { code: "rate_limited", message: "slow down", retryable: true },
  call: { seq: 2, tool: "github.get_issue" },
  position: { line: 5, column: 17 },
  frame: FRAME,
  stack: "ToolError: slow down\n    at default (script.ts:5:17)",
};

const failedJournal = journal(
  { kind: "run.started", input: { repo: "acme/api" }, replayVersion: 1 },
  { kind: "call.scheduled", seq: 1, tool: "github.list_issues", args: { repo: "acme/api" }, key: "run_f/1" },
  { kind: "call.completed", seq: 1, result: [{ number: 42, title: "Crash on start" }] },
  { kind: "log", level: "log", message: "fetched 1 issues" },
  { kind: "call.scheduled", seq: 2, tool: "github.get_issue", args: { repo: "acme/api", n: 42 }, key: "run_f/2" },
  { kind: "call.failed", seq: 2, error: { code: "rate_limited", message: "slow down", retryable: true } },
  { kind: "run.failed", error: RATE_LIMITED },
);

describe("runText: completed", () => {
  it("shows the whole output, the last log lines, and is not an error", () => {
    const done = run({ id: "run_c", status: "completed", output: { title: "Crash on start" } });
    const { text, isError } = runText(done, { journal: journal({ kind: "log", level: "info", message: "fetched 1 issues" }) });
    assert.equal(isError, false);
    assert.match(text, /^Run run_c completed\. Output \(JSON\):\n\{\n {2}"title": "Crash on start"\n\}/);
    assert.match(text, /Last log lines:\n\[info\] fetched 1 issues/);
    assert.doesNotMatch(text, /offset/);
  });

  it("cuts a long output at outputLimit UTF-8 bytes and gives the exact get_run call that reads the rest, page after page", () => {
    const output = { issues: Array.from({ length: 400 }, (_, n) => ({ n, title: `Issue ${n}: crash — “é” 🚀` })) };
    const limit = 1_000;
    const first = runText(run({ id: "run_big", status: "completed", output }), { outputLimit: limit });
    assert.equal(first.isError, false);
    assert.match(first.text, /^Run run_big completed\. Output \(JSON text, characters 0 to \d+ of \d+\):\n\{\n {2}"issues": \[/);
    let text = first.text;
    let pages = "";
    for (;;) {
      const body = /\):\n([\s\S]*?)(?:\n\[… \d+ more characters cut\]: read on with get_run\(\{ run_id: "run_big", offset: (\d+) \}\))?$/.exec(text);
      assert.ok(body, text.slice(0, 200));
      const page = body[1] ?? "";
      assert.ok(Buffer.byteLength(page) <= limit, `${Buffer.byteLength(page)} bytes`);
      pages += page;
      if (body[2] === undefined) break;
      text = runText(run({ id: "run_big", status: "completed", output }), { outputLimit: limit, offset: Number(body[2]) }).text;
    }
    // The pages put together are the output's JSON text, as the server pages it: nothing split or lost at a cut.
    assert.equal(pages, JSON.stringify(output, null, 2));
  });

  it("pages as the server does: never between the halves of a surrogate pair, and always moving on", () => {
    for (const limit of [1, 2, 3]) {
      const pages: string[] = [];
      for (let offset: number | undefined = 0; offset !== undefined;) {
        const page = outputPage("🎉a🎉", offset, limit);
        pages.push(page.text);
        offset = page.nextOffset;
      }
      assert.equal(pages.join(""), outputText("🎉a🎉"), `limit ${limit}`);
      assert.ok(
        pages.every((page) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(page)),
        `limit ${limit}: ${JSON.stringify(pages)}`,
      );
    }
    assert.deepEqual(outputPage("🎉", 1, 1), { text: "🎉", offset: 1, nextOffset: 3, total: 4 });
  });

  it("shows the calls the run made (its trace), between the output and the logs", () => {
    const entries = journal(
      { kind: "run.started", input: { repo: "acme/api" }, replayVersion: 1 },
      { kind: "call.scheduled", seq: 1, tool: "github.list_issues", args: { repo: "acme/api" }, key: "run_c/1" },
      { kind: "call.completed", seq: 1, result: [{ number: 42 }] },
      { kind: "log", level: "log", message: "fetched 1 issues" },
      { kind: "run.completed", output: { title: "Crash on start" } },
    );
    const { text } = runText(run({ id: "run_c", status: "completed", output: { title: "Crash on start" } }), { journal: entries });
    assert.ok(text.includes('}\n\nCalls:\n#1 github.list_issues({"repo":"acme/api"}) → [{"number":42}]\n\nLast log lines:\n[log] fetched 1 issues'), text);
  });

  it("shows a page read from the server", () => {
    const page = { text: '  "b": 2\n}', offset: 9, total: 18 };
    const { text } = runText(run({ id: "run_c", status: "completed", output: { a: 1, b: 2 } }), { page });
    assert.equal(text, 'Run run_c completed. Output (JSON text, characters 9 to 18 of 18):\n  "b": 2\n}');
  });

  it("says when the offset is past the end of the output, as an error", () => {
    const { text, isError } = runText(run({ id: "run_c", status: "completed", output: [1, 2, 3] }), { offset: 500 });
    assert.equal(text, "Run run_c completed. Its output is 17 characters of JSON: offset 500 is past its end.");
    assert.equal(isError, true);
  });

  it("keeps the last 20 log lines and cuts long ones", () => {
    const logs = Array.from({ length: 50 }, (_, i) => ({ kind: "log", level: "log", message: i === 49 ? "x".repeat(5_000) : `step ${i}` }));
    const { text } = runText(run({ id: "run_c", status: "completed", output: null }), { journal: journal(...logs) });
    assert.match(text, /Last log lines:\n\[… 30 more earlier log lines cut\]\n\[log\] step 30\n/);
    assert.doesNotMatch(text, /step 29\n/);
    assert.match(text, /\[log\] x+\[… 4540 more characters cut\]$/);
  });
});

describe("runText: waiting", () => {
  it("says in words what the run waits for and how the model can act on it", () => {
    const waiting = run({
      id: "run_w",
      status: "waiting",
      wakeAt: T0 + 86_400_000,
      waits: [
        { kind: "sleep", seq: 3, until: T0 + 86_400_000 },
        { kind: "signal", seq: 4, name: "approved", until: T0 + 7 * 86_400_000 },
        { kind: "approval", seq: 5, tool: "github.merge_pr", args: { repo: "acme/api", pr: 7 } },
        {
          kind: "parked",
          seq: 6,
          tool: "github.create_issue",
          args: { title: "x" },
          reason: "tool.schema_changed",
          message: "the input schema of github.create_issue changed",
        },
      ],
    });
    const { text, isError } = runText(waiting);
    assert.equal(isError, false);
    assert.match(text, /^Run run_w is waiting \(it holds nothing meanwhile\) for:\n- call #3/);
    assert.match(text, /call #3: sleeping until 2026-01-06T09:00:00\.000Z/);
    assert.match(text, /call #4: waiting for the signal "approved" until 2026-01-12T09:00:00\.000Z/);
    assert.ok(text.includes('signal_run({ run_id: "run_w", name: "approved", payload })'));
    assert.ok(text.includes('call #5: github.merge_pr({"repo":"acme/api","pr":7}) waits for approval'));
    assert.match(text, /you cannot/);
    assert.match(
      text,
      /call #6: github\.create_issue\(\{"title":"x"\}\) was held back before being sent: the input schema of github\.create_issue changed\. The tool's schema changed since the run started/,
    );
    assert.ok(text.includes('get_run({ run_id: "run_w", wait: 120 })'));
  });

  it("a run that only sleeps says when it wakes; past the longest wait, it says to come back then instead of waiting", () => {
    const sleeping = (ms: number) => run({ id: "run_s", status: "waiting", wakeAt: T0 + ms, waits: [{ kind: "sleep", seq: 1, until: T0 + ms }] });
    const hour = runText(sleeping(3_600_000), { now: T0, maxWait: 120 }).text;
    assert.ok(
      hour.includes(
        'It wakes by itself at 2026-01-05T10:00:00.000Z, in 1h, and goes on then. Do not wait for it now: call get_run({ run_id: "run_s" }) after that time to read what it did (its output, or what it waits for next), or stop it with cancel_run({ run_id: "run_s" }).',
      ),
      hour,
    );
    const minute = runText(sleeping(60_000), { now: T0, maxWait: 120 }).text;
    assert.ok(
      minute.includes('It wakes by itself at 2026-01-05T09:01:00.000Z, in 1m, and goes on then. Follow it with get_run({ run_id: "run_s", wait: 120 })'),
      minute,
    );
  });
});

describe("runText: failed", () => {
  it("gives the error with its line and code frame, the call that failed, the trace up to it, and how to retry", () => {
    const { text, isError } = runText(run({ id: "run_f", status: "failed", error: RATE_LIMITED }), { journal: failedJournal });
    assert.equal(isError, true);
    assert.match(text, /^Run run_f failed\.\nThe script did not catch a failed tool call at line 5, column 17: ToolError: slow down/);
    assert.ok(text.includes(FRAME));
    assert.ok(text.includes('The call that failed: #2 github.get_issue({"repo":"acme/api","n":42}) → failed: rate_limited: slow down (retryable)'));
    assert.ok(
      text.includes('Calls up to the failure:\n#1 github.list_issues({"repo":"acme/api"}) → [{"number":42,"title":"Crash on start"}]\n#2 github.get_issue'),
    );
    assert.match(text, /Last log lines:\n\[log\] fetched 1 issues/);
    assert.ok(text.includes('retry_run({ run_id: "run_f", code })'));
  });

  it("names the journal entry that holds a value cut in the trace", () => {
    const big = journal(
      { kind: "run.started", input: null, replayVersion: 1 },
      { kind: "call.scheduled", seq: 1, tool: "github.search", args: { q: "crash" }, key: "k" },
      { kind: "call.completed", seq: 1, result: { items: "y".repeat(2_000) } },
      { kind: "run.failed", error: { kind: "script", name: "TypeError", message: "x is undefined", position: { line: 3, column: 1 } } },
    );
    const { text } = runText(run({ id: "run_f", status: "failed", error: { kind: "script", name: "TypeError", message: "x is undefined" } }), { journal: big });
    assert.match(
      text,
      /#1 github\.search\(\{"q":"crash"\}\) → \{"items":"y+\[… \d+ more characters cut\] \[whole: get_run\(\{ run_id: "run_f", entry: 2 \}\)\]/,
    );
    assert.doesNotMatch(text, /The call that failed/);
    assert.match(text, /Fix the script and call retry_run/);
  });

  it("keeps the last 30 calls of a long trace", () => {
    const entries: object[] = [{ kind: "run.started", input: null, replayVersion: 1 }];
    for (let seq = 1; seq <= 45; seq++)
      entries.push({ kind: "call.scheduled", seq, tool: "db.get", args: { id: seq }, key: `k${seq}` }, { kind: "call.completed", seq, result: seq });
    const { text } = runText(run({ id: "run_f", status: "failed", error: { kind: "limit", message: "the journal is too large" } }), {
      journal: journal(...entries),
    });
    assert.match(text, /Calls up to the failure:\n\[… 15 more earlier calls cut\]\n#16 db\.get\(\{"id":16\}\) → 16\n/);
    assert.match(text, /Make the script do less/);
  });

  it("bounds a huge error", () => {
    const error: RunError = { kind: "script", name: "Error", message: "boom ".repeat(100_000) };
    const { text } = runText(run({ id: "run_f", status: "failed", error }));
    assert.ok(text.length < ERROR_CHARS + 500);
    assert.match(text, /\[… \d+ more characters cut\]/);
  });
});

describe("runText: cancelled, running", () => {
  it("gives a cancelled run's reason", () => {
    const entries = journal({ kind: "run.started", input: null, replayVersion: 1 }, { kind: "run.cancelled", reason: "the user stopped it" });
    const { text, isError } = runText(run({ id: "run_x", status: "cancelled" }), { journal: entries });
    assert.equal(text, "Run run_x was cancelled: the user stopped it");
    assert.equal(isError, false);
  });

  it("tells how to wait more for a run still running, with the calls waiting for a decision", () => {
    const running = run({ id: "run_r", status: "running", waits: [{ kind: "approval", seq: 2, tool: "slack.post", args: { channel: "#ops" } }] });
    const { text, isError } = runText(running, { waited: 30, maxWait: 90, journal: journal({ kind: "log", level: "warn", message: "slow page" }) });
    assert.equal(isError, false);
    assert.ok(
      text.startsWith(
        'Run run_r is still running after 30 s. It goes on without you: wait for it with get_run({ run_id: "run_r", wait: 90 }), or stop it with cancel_run({ run_id: "run_r" }).',
      ),
    );
    assert.match(text, /Calls waiting for a decision:\n- call #2: slack\.post\(\{"channel":"#ops"\}\) waits for approval/);
    assert.match(text, /\[warn\] slow page/);
  });

  it("says which calls of a running run wait for a worker, and how long no worker has polled", () => {
    const running = run({
      id: "run_r",
      status: "running",
      waits: [{ kind: "worker", seq: 1, tool: "crm.lookup_customer", since: T0, lastPollAt: T0 - 12_000 }],
    });
    const { text, isError } = runText(running, { now: T0 + 300_000 });
    assert.equal(isError, false);
    assert.ok(
      text.includes(
        "Calls waiting for a worker:\n- call #1: waiting for a worker to serve `crm.lookup_customer` (no worker has polled for 312 s). Nothing was sent yet; the call goes on once a worker takes it. The application runs the workers; you cannot start one.",
      ),
      text,
    );
  });

  it("shows the calls so far of a run still running, those without an answer yet too", () => {
    const entries = journal(
      { kind: "run.started", input: null, replayVersion: 1 },
      { kind: "call.scheduled", seq: 1, tool: "db.get", args: { id: 1 }, key: "k1" },
      { kind: "call.completed", seq: 1, result: "one" },
      { kind: "call.scheduled", seq: 2, tool: "db.get", args: { id: 2 }, key: "k2" },
    );
    const { text } = runText(run({ id: "run_r", status: "running" }), { journal: entries });
    assert.match(text, /Calls so far:\n#1 db\.get\(\{"id":1\}\) → "one"\n#2 db\.get\(\{"id":2\}\) → \(no answer yet\)/);
  });
});

const diagnostic = (line: number, message: string, category: Diagnostic["category"] = "error"): Diagnostic => ({
  line,
  column: 9,
  code: 2339,
  category,
  message,
  frame: `> ${line} | const n = issue.numbr;\n    |         ^`,
});

describe("refusedText, checkText", () => {
  it("numbers the diagnostics with their code frames, errors first, and is an error", () => {
    const { text, isError } = refusedText([
      diagnostic(7, "Unused variable.", "warning"),
      diagnostic(3, "Property 'numbr' does not exist on type 'Issue'. Did you mean 'number'?"),
    ]);
    assert.equal(isError, true);
    assert.equal(
      text,
      [
        "The script was refused by the type checker: nothing ran. Fix these problems and send it again.",
        "",
        "1. line 3, column 9: error TS2339: Property 'numbr' does not exist on type 'Issue'. Did you mean 'number'?",
        "   > 3 | const n = issue.numbr;",
        "       |         ^",
        "2. line 7, column 9: warning TS2339: Unused variable.",
        "   > 7 | const n = issue.numbr;",
        "       |         ^",
      ].join("\n"),
    );
  });

  it("shows at most 20 diagnostics", () => {
    const { text } = refusedText(Array.from({ length: 25 }, (_, i) => diagnostic(i + 1, `problem ${i}`)));
    assert.match(text, /20\. line 20,/);
    assert.doesNotMatch(text, /21\. line/);
    assert.match(text, /\[… 5 more diagnostics cut\]$/);
  });

  it("answers check_script", () => {
    assert.deepEqual(checkText({ ok: true, diagnostics: [] }), { text: "ok: the script type-checks.", isError: false });
    assert.equal(checkText({ ok: false, diagnostics: [diagnostic(2, "Cannot find name 'x'.")] }).isError, true);
    assert.match(checkText({ ok: true, diagnostics: [diagnostic(2, "Unused.", "warning")] }).text, /^ok: the script type-checks, with warnings:\n\n1\. line 2/);
  });
});

describe("entryText, runListText", () => {
  it("shows one journal entry in full", () => {
    const entry = failedJournal[2] as JournalEntry;
    const { text } = entryText("run_f", entry);
    assert.ok(text.startsWith('Entry 2 of run run_f (call.completed, 2026-01-05T09:00:00.200Z):\n{\n  "index": 2,'));
    assert.ok(text.includes('"title": "Crash on start"'));
  });

  it("lists runs with what the waiting ones wait for", () => {
    const runs = [
      run({ id: "run_3", status: "running", waits: [{ kind: "worker", seq: 2, tool: "crm.lookup_customer", since: T0, lastPollAt: T0 }] }),
      run({ id: "run_2", status: "waiting", parent: "run_1", waits: [{ kind: "signal", seq: 1, name: "go" }] }),
      run({ id: "run_1", status: "failed", error: RATE_LIMITED }),
    ];
    assert.equal(
      runListText(runs).text,
      [
        "3 runs, newest first:",
        "- run_3 · running (a worker for crm.lookup_customer) · started 2026-01-05T09:00:00.000Z",
        '- run_2 · waiting (signal "go") · started 2026-01-05T09:00:00.000Z · retry of run_1',
        "- run_1 · failed · started 2026-01-05T09:00:00.000Z",
      ].join("\n"),
    );
    assert.equal(runListText([]).text, "No runs.");
  });
});

describe("bounds", () => {
  it("bound() stays within its limit, says how much it cut, and never splits a character", () => {
    const text = `${"a".repeat(59)}🚀${"b".repeat(100)}`;
    const cut = bound(text, 100);
    assert.ok(cut.length <= 100);
    assert.equal(cut, `${"a".repeat(59)}[… 102 more characters cut]`);
    assert.equal(bound("short", 100), "short");
  });

  it("every run text stays within outputLimit plus the overhead", () => {
    const output: JsonValue = "z".repeat(DEFAULT_OUTPUT_LIMIT * 2);
    const logs = Array.from({ length: 100 }, () => ({ kind: "log", level: "log", message: "w".repeat(10_000) }));
    const { text } = runText(run({ id: "run_c", status: "completed", output }), { journal: journal(...logs) });
    assert.ok(text.length <= DEFAULT_OUTPUT_LIMIT + TEXT_OVERHEAD_CHARS);
  });
});

describe("testReportText, searchText", () => {
  const call = (fields: Partial<TestCall> & Pick<TestCall, "seq" | "tool" | "answeredBy">): TestCall => ({ args: {}, atMs: 0, ...fields });

  it("tells how a test run ended, its calls with their virtual times, and its logs", () => {
    const { text, isError } = testReportText({
      kind: "tested",
      status: "completed",
      output: { merged: true },
      calls: [
        call({ seq: 1, tool: "github.get_pr", args: { pr: 7 }, answeredBy: "recorded", endedAtMs: 120, result: { state: "open" } }),
        call({ seq: 2, tool: "tapedeck.signal", args: { name: "approved" }, atMs: 120, answeredBy: "builtin", endedAtMs: 7_200_120, result: { by: "ann" } }),
        call({ seq: 3, tool: "github.merge", args: { pr: 7 }, atMs: 7_200_120, answeredBy: "mock", endedAtMs: 7_200_120, result: { ok: true } }),
      ],
      logs: [{ atMs: 7_200_120, level: "log", message: "approved by ann" }],
      virtualMs: 7_200_120,
    });
    assert.equal(isError, false);
    assert.equal(
      text,
      [
        "The test run (mocks and virtual time: nothing was sent to a tool) ended completed after 2h of virtual time.",
        "",
        'Output (JSON):\n{\n  "merged": true\n}',
        "",
        "Calls:",
        '#1 +0ms github.get_pr({"pr":7}) → recorded: {"state":"open"}',
        '#2 +120ms tapedeck.signal({"name":"approved"}) → builtin: {"by":"ann"}',
        '#3 +2h github.merge({"pr":7}) → mock: {"ok":true}',
        "",
        "Last log lines:\n[+2h] [log] approved by ann",
      ].join("\n"),
    );
  });

  it("says what to add to the scenario, and marks a failed test as an error", () => {
    const waiting = testReportText({
      kind: "tested",
      status: "waiting",
      waits: [{ kind: "signal", seq: 1, name: "approved" }],
      calls: [],
      logs: [],
      virtualMs: 0,
    });
    assert.ok(waiting.text.includes('add { "name": "approved", "at": "1m", "payload": … } to the scenario\'s "signals"'));
    const failed = testReportText({
      kind: "tested",
      status: "failed",
      error: {
        kind: "script",
        name: "ToolError",
        message: "no mock for github.search",
        failure: { code: "no_mock", message: "no mock for github.search" },
        call: { seq: 1, tool: "github.search" },
      },
      calls: [
        call({
          seq: 1,
          tool: "github.search",
          args: { q: "bug" },
          answeredBy: "none",
          endedAtMs: 0,
          error: { code: "no_mock", message: "no mock for github.search" },
        }),
      ],
      logs: [],
      virtualMs: 90_500,
    });
    assert.equal(failed.isError, true);
    assert.match(failed.text, /after 1m 31s of virtual time/);
    assert.ok(failed.text.includes('#1 +0ms github.search({"q":"bug"}) → none: failed: no_mock: no mock for github.search'));
    assert.deepEqual(testReportText({ kind: "refused", diagnostics: [diagnostic(1, "Cannot find name 'x'.")] }).isError, true);
  });

  it("gives the declarations of the tools found, with their import", () => {
    const { text } = searchText("merge a pull request", [
      {
        tool: "github.merge_pr",
        group: "github",
        score: 3.2,
        declaration: "declare const github: {\n  /** Merge a pull request. */\n  merge_pr(args: { pr: number }): Promise<{ ok: boolean }>;\n};",
      },
      { tool: "gitlab.merge", group: "gitlab", score: 1.1, declaration: "declare const gitlab: {\n  merge(args: { mr: number }): Promise<void>;\n};" },
    ]);
    assert.ok(
      text.startsWith(
        '2 tools match "merge a pull request", best first. Import them with:\nimport { github, gitlab } from "tapedeck:tools";\n\n// github.merge_pr\ndeclare const github',
      ),
    );
    assert.match(searchText("fax", []).text, /^No tool matches "fax"\. Try other words/);
  });
});
