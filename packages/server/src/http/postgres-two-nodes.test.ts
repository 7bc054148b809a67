import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Engine, openStore } from "@tapedeck/engine";
import type { JournalEntry } from "@tapedeck/protocol";
import { describeWithPostgres } from "@tapedeck/engine/testing";
import { verifyWebhook, type Run, type Tapedeck } from "@tapedeck/sdk";
import { TEST_RETRY_BASE_ENV } from "../cli/commands/serve.js";
import { startPgNodes } from "./test-support/pg-nodes.js";
import { startReceiver } from "./test-support/webhook-receiver.js";

// test-budget-seconds: 600 (one to two minutes on an idle machine: 200 runs on two nodes and a SIGKILL; scripts/run-tests.mjs)
/**
 * The two-node test (issue [postgres]): two `tapedeck serve` processes on one PostgreSQL run
 * RUNS runs of CALLS calls each, mixing a `retry` tool and an `at_most_once` tool of the
 * idempotency-recording fixture MCP server (one server, in this process, so both nodes meet one
 * ledger); some runs sleep, some wait for a signal sent to the node that did not start them.
 * Node A is killed (SIGKILL) once half of all calls reached the fixture, and started again once
 * nine tenths did: more than node B's own runs make, so only B taking A's runs over gets there. Then: every run completed; each `retry` call's effect happened exactly
 * once at the server (one key, one effect); every `at_most_once` call was sent at most once, and
 * those that did not complete ended `outcomeUnknown`; every journal replays (`verify`); every run's
 * `run.completed` reached the webhook receiver, signed.
 *
 * Size: TAPEDECK_TEST_TWO_NODE_RUNS × TAPEDECK_TEST_TWO_NODE_CALLS, default the issue's 200 × 20
 * (about 35 s on two shared cores at load average 7).
 * Needs TAPEDECK_TEST_POSTGRES_URL.
 */
const RUNS = Number(process.env.TAPEDECK_TEST_TWO_NODE_RUNS ?? 200);
const CALLS = Number(process.env.TAPEDECK_TEST_TWO_NODE_CALLS ?? 20);

/** What the engine's dist-test fixture gives this test (loaded by path: test support is not a package export). */
interface HttpFixture {
  readonly url: string;
  calls(tool: string, n: number): Promise<void>;
  readonly state: { effectsLog(): { readonly keys: readonly { readonly key: string; readonly attempts: number }[] } };
  close(): Promise<void>;
}
const { startHttpFixture } = (await import(new URL("../../../engine/dist-test/test-support/mcp/http-fixture.js", import.meta.url).href)) as {
  readonly startHttpFixture: () => Promise<HttpFixture>;
};

/** Every 4th call goes to the at_most_once tool; a run with `sleep` sleeps at call 5, one with `signal` waits for "go" at call 12. */
const SCRIPT = `import { fx, once } from "tapedeck:tools";
export default async (input: { sleep: boolean; signal: boolean; calls: number }) => {
  let unknown = 0;
  let go: unknown = null;
  for (let i = 0; i < input.calls; i++) {
    if (i === 5 && input.sleep) await sleep(300);
    if (i === 12 && input.signal) go = await signal("go");
    if (i % 4 === 3) {
      try { await once.effects({ op: "once" + i }); } catch (e: any) { if (e.code !== "outcomeUnknown") throw e; unknown++; }
    } else {
      await fx.effects({ op: "retry" + i });
    }
  }
  return { unknown, go };
};`;

const ended = (run: Run): boolean => run.status !== "running" && run.status !== "waiting";

describeWithPostgres("two tapedeck serve nodes on one PostgreSQL under load, one killed half-way", (url) => {
  void describe(`${RUNS} runs × ${CALLS} calls`, () => {
    void it("every run completes, retry effects happen once, at_most_once calls are never sent twice (outcomeUnknown when interrupted), journals replay, no webhook event is lost", async () => {
      const fixture = await startHttpFixture();
      const receiver = await startReceiver();
      const pair = await startPgNodes(url, 2, { leaseMs: 3_000, env: { [TEST_RETRY_BASE_ENV]: "20" } });
      let checker: Engine | undefined;
      try {
        const client = (i: number): Tapedeck => pair.nodes[i]!.client(pair.adminKey);
        const toolset = (
          await client(0).toolsets.create({
            mcpServers: { fx: { url: fixture.url }, once: { url: fixture.url } },
            policies: { "fx.effects": { onInterruption: "retry" }, "once.effects": { onInterruption: "at_most_once" } },
          })
        ).id;
        const endpoint = await client(0).webhooks.create({ url: receiver.url, events: ["run.completed"] });
        const total = RUNS * CALLS;
        // Killed at an event: once half of every call was received by the fixture (and every run
        // was started: under load the starts, each a type check, can lag behind the calls, and a
        // start sent to a node being killed is lost); started again at nine tenths.
        let aDown = false;
        let allStarted!: () => void;
        const startsDone = new Promise<void>((resolve) => (allStarted = resolve));
        const killed = Promise.all([fixture.calls("effects", Math.floor(total / 2)), startsDone]).then(async () => {
          aDown = true;
          await pair.nodes[0]!.kill();
        });
        const restarted = fixture.calls("effects", Math.floor((total * 9) / 10)).then(async () => {
          await killed;
          const again = await pair.start({ dataDir: pair.nodes[0]!.dataDir });
          pair.nodes[0] = again;
          aDown = false;
        });

        const started: { id: string; node: number; signal: boolean }[] = [];
        // What a run that did not end shows: its record and the tail of its journal, for the failure message.
        const describeStuck = async (stuck: readonly { id: string; node: number; signal: boolean }[]): Promise<string> => {
          const store = await openStore(pair.store);
          const reader = await Engine.open({ store, wake: false });
          try {
            const lines: string[] = [];
            for (const { id, node, signal } of stuck) {
              const run = await client(1).runs.get(id);
              const record = await store.getRun(id);
              const owner = record?.owner === undefined ? "no lease holder" : `held by ${record.owner.id} until ${record.owner.until - Date.now()} ms from now`;
              const entries: JournalEntry[] = await reader.journal(id, 0, 10_000);
              const tail = entries.slice(-6).map((e) => `${e.index} ${e.kind}${"seq" in e ? ` #${e.seq}` : ""}${"tool" in e ? ` ${e.tool}` : ""}`);
              lines.push(
                `${id} (started on node ${node}${signal ? ", waits for a signal" : ""}): ${run.status} (${owner}), waits ${JSON.stringify(run.waits ?? [])}; journal ${entries.length} entries, last: ${tail.join(" | ")}`,
              );
            }
            return lines.join("\n");
          } finally {
            await reader.close();
          }
        };
        await Promise.all(
          Array.from({ length: RUNS }, async (_, i) => {
            const node = i % 2;
            const input = { sleep: i % 5 === 1, signal: i % 5 === 2, calls: CALLS };
            // A node whose store probe is slow under this load answers 503 and takes no work (nothing
            // was started): the start goes to the other node, as a load balancer would send it.
            const start = (at: number) => client(at).runs.start({ toolset, source: SCRIPT, input });
            const answer = await start(node).catch((error: unknown) => {
              if ((error as { status?: unknown }).status !== 503) throw error;
              return start(1 - node);
            });
            const run = answer.kind === "started" ? answer.run : assert.fail(answer.diagnostics.map((d) => d.message).join("\n"));
            started.push({ id: run.id, node, signal: input.signal });
          }),
        );
        allStarted();
        // Each signal is sent to the node that did not start the run (B while A is down), once the run waits for it.
        const deadline = Date.now() + 240_000;
        const done = new Map<string, Run>();
        while (done.size < started.length) {
          for (const { id, node, signal } of started) {
            if (done.has(id)) continue;
            const other = node === 0 || aDown ? 1 : 0;
            const td = client(other);
            const run = await td.runs.get(id, { wait: 0 }).catch(() => client(1).runs.get(id));
            if (ended(run)) done.set(id, run);
            else if (signal && run.status === "waiting" && run.waits?.some((w) => w.kind === "signal")) {
              await td.runs
                .signal(id, { name: "go", payload: id, idempotencyKey: "go" })
                .catch(() => client(1).runs.signal(id, { name: "go", payload: id, idempotencyKey: "go" }));
            }
          }
          if (Date.now() > deadline)
            assert.fail(`${started.length - done.size} runs did not end in time:\n${await describeStuck(started.filter((s) => !done.has(s.id)))}`);
          if (done.size < started.length) await client(1).runs.get(started.find((s) => !done.has(s.id))!.id, { wait: 1 });
        }
        await restarted;
        for (const run of done.values()) assert.equal(run.status, "completed", `${run.id}: ${JSON.stringify(run.error)}`);

        // The ledger of the one fixture: every key it saw, with how many calls carried it.
        const ledger = new Map(fixture.state.effectsLog().keys.map((k) => [k.key, k.attempts]));
        checker = await Engine.open({ store: pair.store, wake: false });
        let unknown = 0;
        let resentRetries = 0;
        for (const { id } of started) {
          const entries: JournalEntry[] = await checker.journal(id, 0, 10_000);
          for (const scheduled of entries.filter((e) => e.kind === "call.scheduled")) {
            if (scheduled.kind !== "call.scheduled") continue;
            const outcome = entries.find((e) => (e.kind === "call.completed" || e.kind === "call.failed") && e.seq === scheduled.seq);
            if (scheduled.tool === "fx.effects") {
              assert.equal(outcome?.kind, "call.completed", `${scheduled.key}: a retry call completes`);
              assert.ok((ledger.get(scheduled.key) ?? 0) >= 1, `${scheduled.key}: its effect happened at the server`);
              if ((ledger.get(scheduled.key) ?? 0) > 1) resentRetries++;
            } else if (scheduled.tool === "once.effects") {
              assert.ok((ledger.get(scheduled.key) ?? 0) <= 1, `${scheduled.key}: an at_most_once call is never sent twice`);
              if (outcome?.kind === "call.failed") {
                assert.equal(outcome.error.code, "outcomeUnknown", `${scheduled.key}: an interrupted at_most_once call ends outcomeUnknown`);
                unknown++;
              } else assert.equal(outcome?.kind, "call.completed", `${scheduled.key}`);
            }
          }
          const verified = await checker.verify(id);
          assert.ok(verified.ok, `${id} does not replay: ${verified.ok ? "" : verified.problem}`);
        }
        const outputs = [...done.values()].reduce((n, run) => n + ((run.output as { unknown: number }).unknown ?? 0), 0);
        assert.equal(outputs, unknown, "the scripts saw as many outcomeUnknown failures as the journals hold");

        // Every run's run.completed reached the receiver (at least once), signed with the endpoint's secret.
        const completed = new Set<string>();
        const hooksDeadline = Date.now() + 60_000;
        for (let n = 1; completed.size < started.length; n++) {
          const hook = await Promise.race([
            receiver.request(n),
            new Promise<never>((_, reject) =>
              setTimeout(
                () => reject(new Error(`webhooks of ${started.length - completed.size} runs never arrived`)),
                Math.max(0, hooksDeadline - Date.now()),
              ).unref(),
            ),
          ]);
          const event = await verifyWebhook(hook.body, hook.headers, endpoint.secret);
          assert.ok(event.ok, event.ok ? "" : event.message);
          completed.add(event.event.data.runId);
        }
        assert.deepEqual([...completed].sort(), started.map((s) => s.id).sort());
        console.log(
          `two nodes: ${RUNS} runs × ${CALLS} calls; ${unknown} at_most_once calls ended outcomeUnknown; ${resentRetries} retry calls were sent again (deduplicated by key)`,
        );
      } catch (error) {
        // What the nodes logged that looks like a failure: a node that died says why here.
        for (const [i, node] of pair.nodes.entries()) {
          const lines = node
            .stderr()
            .split("\n")
            .filter((line) => /error|unhandled|exited|fatal/i.test(line));
          console.log(`node ${i} (${lines.length} error lines), the last 15:\n${lines.slice(-15).join("\n")}`);
        }
        throw error;
      } finally {
        await checker?.close();
        await pair.close();
        await receiver.close();
        await fixture.close();
      }
    });
  });
});
