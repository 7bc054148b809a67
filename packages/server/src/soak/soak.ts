import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Engine, openStore } from "@tapedeck/engine";
import type { JournalEntry } from "@tapedeck/protocol";
import { Tapedeck, verifyWebhook, type Run } from "@tapedeck/sdk";
import { TEST_RETRY_BASE_ENV } from "../cli/commands/serve.js";
import { startPgNodes, type PgNodes } from "../http/test-support/pg-nodes.js";
import { startServeChild, type ServeChild } from "../http/test-support/serve-child.js";
import { startReceiver, type WebhookReceiver } from "../http/test-support/webhook-receiver.js";
import { chaosPlan, seededRandom, type Strike, type StrikeKind } from "./chaos-plan.js";
import { startEffectLedger } from "./effect-ledger.js";
import { pgControl } from "./pg-control.js";
import { AT_MOST_ONCE_TOOLS, MCP_TOOLS, RETRY_TOOLS, SOAK_SCRIPT, soakInput, soakToolset } from "./soak-workload.js";

/**
 * The crash and chaos soak (issue [reliability]): real `tapedeck serve` nodes (one on SQLite, or
 * several on one PostgreSQL schema), the idempotency-recording fixture MCP server and an SDK
 * worker per node, a workload of runs mixing `retry` and `at_most_once` tools, sleeps, signals
 * and approvals; meanwhile nodes and workers are SIGKILLed and the database restarted or stopped
 * at random points of the workload's progress (`chaos-plan.ts`). Then it audits what happened:
 * every run ended (none lost, none stranded), every `retry` call's effect happened (once per key
 * at its server), no `at_most_once` key reached its server twice and those interrupted ended
 * `outcomeUnknown`, every journal replays (`verify`), every run's end reached the webhook
 * receiver, every signal was taken. `SoakFigures` holds what it counted; `soakFailures` says
 * what is a loss.
 */
const WORKER_MAIN = fileURLToPath(new URL("./soak-worker-main.js", import.meta.url));

export interface SoakOptions {
  /** A label for the table ("SQLite", "PostgreSQL, 3 nodes, lease 3 s"). */
  readonly label: string;
  /** `undefined`: one node on SQLite in a data folder of its own; a URL: `nodes` nodes on a fresh schema of that database. */
  readonly postgresUrl?: string;
  readonly nodes: number;
  readonly runs: number;
  readonly calls: number;
  readonly strikes: Readonly<Partial<Record<StrikeKind, number>>>;
  /** The nodes' lease (`TAPEDECK_TEST_LEASE_MS`); default: the server's own. */
  readonly leaseMs?: number;
  /** How long a `db-outage` keeps the database down. Default 10 s. */
  readonly outageMs?: number;
  readonly seed: number;
  /** How long after the last strike every run must have ended, else the rest count as stranded. Default 180 s. */
  readonly settleMs?: number;
  readonly log?: (line: string) => void;
}

export interface SoakFigures {
  readonly label: string;
  readonly seed: number;
  readonly runs: number;
  readonly calls: number;
  /** Strikes carried out, by kind (fewer than planned when the workload ended first). */
  readonly struck: Readonly<Record<StrikeKind, number>>;
  readonly completed: number;
  /** Runs the API does not know (404) after they were started. */
  readonly lost: number;
  /** Runs not ended `settleMs` after the last strike. */
  readonly stranded: number;
  /** Runs that ended otherwise than `completed`. */
  readonly failed: number;
  readonly retryCalls: number;
  /** `retry` calls whose effect never reached their server, or that did not complete. */
  readonly retryMissing: number;
  /** Keys that reached a server without a journaled call of that key (an effect nobody asked for). */
  readonly strayEffects: number;
  /** `retry` calls sent more than once (the server deduplicated them by key): expected after crashes, not a loss. */
  readonly retryResent: number;
  readonly atMostOnceCalls: number;
  /** `at_most_once` keys that reached their server twice or more. */
  readonly atMostOnceTwice: number;
  /** `at_most_once` calls journaled completed whose key never reached their server. */
  readonly atMostOnceMissing: number;
  readonly outcomeUnknown: number;
  readonly verifyFailures: number;
  readonly webhooksLost: number;
  readonly signalsLost: number;
  /** From the last strike to the last run's end, ms. */
  readonly settledMs: number;
  readonly wallMs: number;
  /** What each loss was, the first few of each kind. */
  readonly problems: readonly string[];
}

/** The losses in `figures`, one line each: none means the soak passed. */
export function soakFailures(f: SoakFigures): string[] {
  const losses: [number, string][] = [
    [f.lost, "runs lost"],
    [f.stranded, "runs stranded"],
    [f.failed, "runs failed"],
    [f.retryMissing, "retry calls without their effect"],
    [f.strayEffects, "effects no journaled call asked for"],
    [f.atMostOnceTwice, "at_most_once calls sent twice"],
    [f.atMostOnceMissing, "at_most_once calls completed without reaching their server"],
    [f.verifyFailures, "journals that do not replay"],
    [f.webhooksLost, "webhook events lost"],
    [f.signalsLost, "signals lost"],
  ];
  return losses.filter(([n]) => n > 0).map(([n, what]) => `${f.label}: ${n} ${what}`);
}

interface Fleet {
  readonly adminKey: string;
  /** The engine's store location, for the audit's engine. */
  readonly store: string;
  readonly nodes: (ServeChild | undefined)[];
  /** SIGKILLs node i and starts it again on its data folder and port. */
  restart(i: number): Promise<void>;
  close(): Promise<void>;
}

export async function runSoak(options: SoakOptions): Promise<SoakFigures> {
  const log = options.log ?? (() => {});
  const began = Date.now();
  const random = seededRandom(options.seed);
  const { startHttpFixture } = (await import(new URL("../../../engine/dist-test/test-support/mcp/http-fixture.js", import.meta.url).href)) as {
    readonly startHttpFixture: () => Promise<HttpFixture>;
  };
  const fixture = await startHttpFixture();
  const ledger = await startEffectLedger();
  const receiver = await startReceiver();
  const env = {
    [TEST_RETRY_BASE_ENV]: "20",
    ...(options.leaseMs === undefined ? {} : { TAPEDECK_TEST_LEASE_MS: String(options.leaseMs) }),
  };
  const fleet = options.postgresUrl === undefined ? await sqliteFleet(env) : await pgFleet(options.postgresUrl, options.nodes, env);
  const workers: (ChildProcess | undefined)[] = [];
  const startWorker = (i: number): void => {
    const node = fleet.nodes[i]!;
    workers[i] = spawn(process.execPath, [WORKER_MAIN, node.url, fleet.adminKey, ledger.url], { stdio: ["ignore", "ignore", "ignore"] });
  };
  const killWorker = async (i: number): Promise<void> => {
    const child = workers[i];
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
  };
  let audit: Engine | undefined;
  try {
    const client = (i: number): Tapedeck => new Tapedeck({ baseUrl: fleet.nodes[i]!.url, apiKey: fleet.adminKey });
    const toolset = (await client(0).toolsets.create(soakToolset(fixture.url) as never)).id;
    const endpoint = await client(0).webhooks.create({ url: receiver.url, events: ["run.completed", "run.failed", "run.cancelled"] });
    for (let i = 0; i < fleet.nodes.length; i++) startWorker(i);

    const label = { soak: `s${options.seed}` };
    const started = await startRuns(options, fleet, client, toolset, label);
    log(`${options.label}: ${started.length} runs started`);

    const progress = (): number => fixture.callsOf("effects") + ledger.received();
    const nextCall = (): Promise<void> => Promise.race([fixture.calls("effects", fixture.callsOf("effects") + 1), ledger.next()]);
    const plan = chaosPlan(random, options.runs * options.calls, options.strikes);
    const struck: Record<StrikeKind, number> = { "kill-node": 0, "kill-worker": 0, "restart-db": 0, "db-outage": 0 };
    const down = new Set<number>();
    const pg = options.postgresUrl === undefined ? undefined : pgControl();
    let lastStrikeAt = Date.now();
    let stopStrikes = false;
    let striking: Promise<void> = Promise.resolve();
    const quiet = quietGate();
    const strike = async (s: Strike): Promise<void> => {
      if (s.kind === "kill-node") {
        const i = Math.floor(random() * fleet.nodes.length);
        down.add(i);
        await fleet.restart(i);
        down.delete(i);
      } else if (s.kind === "kill-worker") {
        const i = Math.floor(random() * workers.length);
        await killWorker(i);
        startWorker(i);
      } else if (s.kind === "restart-db") await pg!.restart();
      else {
        await pg!.stop();
        // The outage's length is the fault itself, not a wait for something to happen.
        await new Promise((resolve) => setTimeout(resolve, options.outageMs ?? 10_000));
        await pg!.start();
      }
      struck[s.kind] += 1;
      lastStrikeAt = Date.now();
      log(`${options.label}: ${s.kind} at ${progress()} calls`);
    };
    const strikes = (async () => {
      let floor = 0;
      for (const s of plan) {
        // Each life of a node sees some of the workload: a few calls at least between two strikes;
        // but never more than the workload makes before its runs wait for "finish" (sent after the last strike).
        // Nor past the point where every run still going waits for "finish": the calls some runs did
        // not make (an `at_most_once` call left `outcomeUnknown`, a run failed) would leave a strike
        // waiting for progress that can no longer come, and "finish" is sent only after it.
        const at = Math.min(Math.max(s.atCalls, floor + 5), Math.floor(0.8 * options.runs * options.calls));
        while (!stopStrikes && progress() < at && !quiet.reached) await Promise.race([nextCall(), quiet.promise]);
        if (stopStrikes) return;
        striking = strike(s);
        await striking;
        floor = progress();
      }
    })();

    const ended = await driveToEnd(
      started,
      fleet,
      client,
      down,
      label,
      () => lastStrikeAt,
      () => striking,
      options.settleMs ?? 180_000,
      strikes,
      quiet.reach,
    );
    stopStrikes = true;
    ledger.wake();
    await strikes;
    const settledMs = Math.max(0, ended.lastEndAt - lastStrikeAt);
    log(`${options.label}: ${ended.runs.size} of ${started.length} runs ended; auditing`);

    const store = await openStore(fleet.store);
    audit = await Engine.open({ store, wake: false });
    const figures = await auditSoak({
      options,
      started,
      ended: ended.runs,
      lost: ended.lost,
      audit,
      readRun: (id) => store.getRun(id),
      fixtureKeys: new Map(fixture.state.effectsLog().keys.map((k) => [k.key, k.attempts])),
      ledgerKeys: ledger.attempts,
      receiver,
      secret: endpoint.secret,
    });
    return { ...figures, struck, settledMs, wallMs: Date.now() - began };
  } finally {
    await audit?.close();
    for (let i = 0; i < workers.length; i++) await killWorker(i);
    await fleet.close();
    await receiver.close();
    await ledger.close();
    await fixture.close();
  }
}

/** What the engine's dist-test fixture gives the soak (loaded by path: test support is not a package export). */
interface HttpFixture {
  readonly url: string;
  calls(tool: string, n: number): Promise<void>;
  callsOf(tool: string): number;
  readonly state: { effectsLog(): { readonly keys: readonly { readonly key: string; readonly attempts: number }[] } };
  close(): Promise<void>;
}

interface Started {
  readonly id: string;
  readonly signal: boolean;
}

async function startRuns(
  options: SoakOptions,
  fleet: Fleet,
  client: (i: number) => Tapedeck,
  toolset: string,
  labels: Record<string, string>,
): Promise<Started[]> {
  const started: Started[] = [];
  await Promise.all(
    Array.from({ length: options.runs }, async (_, i) => {
      const input = soakInput(i, options.calls);
      const answer = await client(i % fleet.nodes.length).runs.start({ toolset, source: SOAK_SCRIPT, input: input as never, labels });
      if (answer.kind !== "started") throw new Error(`the soak's script was refused: ${answer.diagnostics.map((d) => d.message).join("\n")}`);
      started.push({ id: answer.run.id, signal: input.signal });
    }),
  );
  return started;
}

/** How long the driver pauses after a node could not answer (it is restarting, or its database is away). */
const UNAVAILABLE_PAUSE_MS = 100;

const isEnded = (run: Run): boolean => run.status !== "running" && run.status !== "waiting" && run.status !== "queued";

/**
 * Signals and approves what waits, through whichever node is up, until every run ended or
 * `settleMs` passed since the last strike with runs still going (those are stranded). Paced by a
 * held `get` of a run still going (it answers when that run changes, or after a second).
 */
async function driveToEnd(
  started: readonly Started[],
  fleet: Fleet,
  client: (i: number) => Tapedeck,
  down: ReadonlySet<number>,
  labels: Record<string, string>,
  lastStrikeAt: () => number,
  striking: () => Promise<void>,
  settleMs: number,
  strikes: Promise<void>,
  allWaitForFinish: () => void,
): Promise<{ runs: Map<string, Run>; lost: string[]; lastEndAt: number }> {
  const runs = new Map<string, Run>();
  const known = new Set(started.map((s) => s.id));
  let lastEndAt = Date.now();
  let strikesDone = false;
  void strikes.then(() => (strikesDone = true));
  let turn = 0;
  for (;;) {
    const up = fleet.nodes.map((_, i) => i).filter((i) => !down.has(i));
    const td = client(up[turn++ % Math.max(1, up.length)] ?? 0);
    try {
      for (const run of await td.runs.list({ status: ["completed", "failed", "cancelled"], labels, limit: 500 })) {
        if (known.has(run.id) && !runs.has(run.id)) {
          runs.set(run.id, run);
          lastEndAt = Date.now();
        }
      }
      if (runs.size === started.length) return { runs, lost: [], lastEndAt };
      const waiting = await td.runs.list({ status: ["waiting"], labels, limit: 500 });
      const forFinish = waiting.filter((run) => known.has(run.id) && (run.waits ?? []).some((wait) => wait.kind === "signal" && wait.name === "finish"));
      if (runs.size + forFinish.length === started.length) allWaitForFinish();
      for (const run of waiting) {
        for (const wait of run.waits ?? []) {
          if (wait.kind === "signal" && wait.name === "go") await td.runs.signal(run.id, { name: "go", payload: run.id, idempotencyKey: "go" });
          else if (wait.kind === "signal" && wait.name === "finish" && strikesDone)
            await td.runs.signal(run.id, { name: "finish", payload: run.id, idempotencyKey: "finish" });
          else if (wait.kind === "approval") await td.approvals.approve(run.id, wait.seq, { reason: "soak" }).catch(ignoreConflict);
        }
      }
      const going = started.find((s) => !runs.has(s.id));
      if (going !== undefined) await td.runs.get(going.id, { wait: 1 });
    } catch (error) {
      // A node killed or restarting mid-request, or the database away: the next turn asks another (or the same, once up).
      if (!isUnavailable(error)) throw error;
      await striking().catch(() => {});
      // A node just started may answer 503 until its first store probe: a short pause, not a spin.
      await new Promise((resolve) => setTimeout(resolve, UNAVAILABLE_PAUSE_MS));
    }
    // Nothing ended and nothing was struck for `settleMs`: what is still going is stranded.
    if (Date.now() - Math.max(lastStrikeAt(), lastEndAt) > settleMs) break;
  }
  // Past the bound: what the API says of the runs that did not end (missing ones are lost).
  const lost: string[] = [];
  const td = client(0);
  for (const { id } of started) {
    if (runs.has(id)) continue;
    const run = await td.runs.get(id).catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
    if (run === undefined) lost.push(id);
    else if (isEnded(run)) runs.set(id, run);
  }
  return { runs, lost, lastEndAt };
}

/** Reached once every run still going waits for "finish": the workload makes no more calls until it is sent. */
function quietGate(): { readonly promise: Promise<void>; readonly reach: () => void; readonly reached: boolean } {
  let reach!: () => void;
  const promise = new Promise<void>((resolve) => (reach = resolve));
  const gate = {
    promise,
    reached: false,
    reach: () => {
      gate.reached = true;
      reach();
    },
  };
  return gate;
}

function ignoreConflict(error: unknown): void {
  // Decided meanwhile (the same approval asked twice across a restart): nothing to do.
  if (!(error instanceof Error && /409|conflict|not waiting/i.test(`${(error as { status?: number }).status ?? ""} ${error.message}`))) throw error;
}

function isUnavailable(error: unknown): boolean {
  const status = (error as { status?: number }).status;
  if (status === 503 || status === 502) return true;
  const cause = error instanceof Error ? (error as { cause?: unknown }).cause : undefined;
  const text =
    error instanceof Error ? `${error.message} ${cause instanceof Error ? `${cause.message} ${(cause as { code?: string }).code ?? ""}` : ""}` : String(error);
  return /ECONNREFUSED|ECONNRESET|socket hang up|fetch failed|other side closed|EPIPE|UND_ERR/i.test(text);
}

function isNotFound(error: unknown): boolean {
  return (error as { status?: number }).status === 404;
}

interface AuditInput {
  readonly options: SoakOptions;
  readonly started: readonly Started[];
  readonly ended: ReadonlyMap<string, Run>;
  readonly lost: readonly string[];
  readonly audit: Engine;
  readonly readRun: (id: string) => Promise<{ readonly status: string; readonly owner?: { readonly id: string }; readonly waits?: unknown } | undefined>;
  readonly fixtureKeys: ReadonlyMap<string, number>;
  readonly ledgerKeys: ReadonlyMap<string, number>;
  readonly receiver: WebhookReceiver;
  readonly secret: string;
}

type Audited = Omit<SoakFigures, "struck" | "settledMs" | "wallMs">;

async function auditSoak(input: AuditInput): Promise<Audited> {
  const { options, started, ended, audit } = input;
  const problems: string[] = [];
  const note = (kind: string, text: string): void => {
    if (problems.filter((p) => p.startsWith(kind)).length < 5) problems.push(`${kind}: ${text}`);
  };
  let completed = 0;
  let failed = 0;
  let stranded = 0;
  let retryCalls = 0;
  let retryMissing = 0;
  let retryResent = 0;
  let atMostOnceCalls = 0;
  let atMostOnceTwice = 0;
  let atMostOnceMissing = 0;
  let outcomeUnknown = 0;
  let verifyFailures = 0;
  let signalsLost = 0;
  const journaledKeys = new Set<string>();
  for (const { id, signal } of started) {
    if (input.lost.includes(id)) continue;
    const run = ended.get(id);
    if (run === undefined) {
      stranded++;
      const record = await input.readRun(id);
      const tail = (await audit.journal(id, 0, 100_000))
        .slice(-4)
        .map((e) => `${e.index} ${e.kind}${"seq" in e ? ` #${e.seq}` : ""}${"tool" in e ? ` ${e.tool}` : ""}`);
      note(
        "stranded",
        `${id}: ${record?.status ?? "?"}, ${record?.owner === undefined ? "no lease holder" : `held by ${record.owner.id}`}, waits ${JSON.stringify(record?.waits ?? [])}; journal ends ${tail.join(" | ")}`,
      );
    } else if (run.status === "completed") completed++;
    else {
      failed++;
      note("failed", `${id}: ${run.status} ${JSON.stringify(run.error)}`);
    }
    const output = run?.status === "completed" ? (run.output as { go?: unknown; finish?: unknown } | undefined) : undefined;
    if (run?.status === "completed" && ((signal && output?.go !== id) || output?.finish !== id)) {
      signalsLost++;
      note("signal", `${id} completed without its signals' payloads: ${JSON.stringify(output)}`);
    }
    const entries: JournalEntry[] = await audit.journal(id, 0, 100_000);
    for (const scheduled of entries) {
      if (scheduled.kind !== "call.scheduled") continue;
      journaledKeys.add(scheduled.key);
      const outcome = entries.find((e) => (e.kind === "call.completed" || e.kind === "call.failed") && e.seq === scheduled.seq);
      const seen = (MCP_TOOLS.has(scheduled.tool) ? input.fixtureKeys : input.ledgerKeys).get(scheduled.key) ?? 0;
      if (RETRY_TOOLS.has(scheduled.tool)) {
        retryCalls++;
        if (seen > 1) retryResent++;
        if (run?.status === "completed" && (outcome?.kind !== "call.completed" || seen < 1)) {
          retryMissing++;
          note("retry", `${scheduled.key} (${scheduled.tool}): ${outcome?.kind ?? "no outcome"}, seen ${seen} times at its server`);
        }
      } else if (AT_MOST_ONCE_TOOLS.has(scheduled.tool)) {
        atMostOnceCalls++;
        if (seen > 1) {
          atMostOnceTwice++;
          note("at_most_once", `${scheduled.key} (${scheduled.tool}) reached its server ${seen} times`);
        }
        if (outcome?.kind === "call.completed" && seen === 0) {
          atMostOnceMissing++;
          note("at_most_once", `${scheduled.key} (${scheduled.tool}) completed but never reached its server`);
        }
        if (outcome?.kind === "call.failed" && outcome.error.code === "outcomeUnknown") outcomeUnknown++;
      }
    }
    if (run !== undefined) {
      const verified = await audit.verify(id);
      if (!verified.ok) {
        verifyFailures++;
        note("verify", `${id}: ${verified.problem}`);
      }
    }
  }
  let strayEffects = 0;
  for (const keys of [input.fixtureKeys, input.ledgerKeys]) {
    for (const key of keys.keys()) {
      if (!journaledKeys.has(key)) {
        strayEffects++;
        note("stray", key);
      }
    }
  }
  const webhooksLost = await countLostWebhooks(input, note);
  return {
    label: options.label,
    seed: options.seed,
    runs: started.length,
    calls: options.calls,
    completed,
    lost: input.lost.length,
    stranded,
    failed,
    retryCalls,
    retryMissing,
    strayEffects,
    retryResent,
    atMostOnceCalls,
    atMostOnceTwice,
    atMostOnceMissing,
    outcomeUnknown,
    verifyFailures,
    webhooksLost,
    signalsLost,
    problems,
  };
}

/** Runs that ended and whose end never reached the receiver (signed with the endpoint's secret) within a minute. */
async function countLostWebhooks(input: AuditInput, note: (kind: string, text: string) => void): Promise<number> {
  const waiting = new Set([...input.ended.keys()]);
  const deadline = Date.now() + 60_000;
  for (let n = 1; waiting.size > 0; n++) {
    let timer: NodeJS.Timeout | undefined;
    const hook = await Promise.race([
      input.receiver.request(n),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now())))),
    ]).finally(() => clearTimeout(timer));
    if (hook === undefined) break;
    // Checked as the receiver would have checked it on arrival: the audit reads it minutes later.
    const event = await verifyWebhook(hook.body, hook.headers, input.secret, { now: hook.receivedAt });
    if (!event.ok) {
      note("webhook", `a delivery did not verify: ${event.message}`);
      continue;
    }
    waiting.delete((event.event.data as { runId: string }).runId);
  }
  for (const id of [...waiting].slice(0, 5)) note("webhook", `${id}: its end was never delivered`);
  return waiting.size;
}

async function sqliteFleet(env: Record<string, string>): Promise<Fleet> {
  const dataDir = mkdtempSync(join(tmpdir(), "tapedeck-soak-"));
  const first = await startServeChild({ dataDir, env });
  const adminKey = first.adminKey ?? "";
  const port = Number(new URL(first.url).port);
  const nodes: (ServeChild | undefined)[] = [first];
  return {
    adminKey,
    store: dataDir,
    nodes,
    restart: async (i) => {
      await nodes[i]!.kill();
      nodes[i] = await startServeChild({ dataDir, port, env });
    },
    close: async () => {
      await nodes[0]?.kill();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function pgFleet(url: string, count: number, env: Record<string, string>): Promise<Fleet> {
  const pg: PgNodes = await startPgNodes(url, count, { env });
  return {
    adminKey: pg.adminKey,
    store: pg.store,
    nodes: pg.nodes,
    restart: async (i) => {
      const node = pg.nodes[i]!;
      await node.kill();
      const again = await pg.start({ dataDir: node.dataDir, port: Number(new URL(node.url).port) });
      // `start` appended it; it takes the place of the node it replaces.
      pg.nodes.pop();
      pg.nodes[i] = again;
    },
    close: () => pg.close(),
  };
}
