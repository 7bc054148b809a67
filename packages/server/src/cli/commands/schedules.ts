import { existsSync } from "node:fs";
import { parseDuration, type CatchupPolicy, type Engine, type FireOutcome, type OverlapPolicy, type Schedule, type ScheduleOptions } from "@tapedeck/engine";
import type { JsonValue } from "@tapedeck/protocol";
import { namespaceFlag, optionalFlag, parse, UsageError } from "../args.js";
import { parseJsonFlag, readJsonFile, readTextFile, withEngine } from "../context.js";
import { followRun, printSettled } from "../follow-run.js";
import type { Output } from "../print.js";
import { parseLabels } from "./keys.js";

/**
 * `tapedeck schedules create|list|show|pause|resume|trigger|delete`, on the data folder (or
 * `TAPEDECK_STORE`): the schedules every `tapedeck serve` on that store fires (within a second of
 * a change). This process fires nothing by itself; `trigger` starts the fire's run here and
 * follows it until it ends or parks, as `tapedeck run --detach` does.
 */
const SUBCOMMANDS = ["create", "list", "show", "pause", "resume", "trigger", "delete"] as const;

export async function schedulesCommand(args: readonly string[], out: Output): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case "create":
      return create(rest, out);
    case "list":
      return list(rest, out);
    case "show":
    case "pause":
    case "resume":
    case "delete":
      return one(sub, rest, out);
    case "trigger":
      return trigger(rest, out);
    default:
      throw new UsageError(
        sub === undefined ? `say what to do: ${SUBCOMMANDS.join(", ")}` : `unknown subcommand ${JSON.stringify(sub)}: use one of ${SUBCOMMANDS.join(", ")}`,
      );
  }
}

async function create(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    toolset: { type: "string" },
    workflow: { type: "string" },
    script: { type: "string" },
    input: { type: "string" },
    cron: { type: "string" },
    every: { type: "string" },
    timezone: { type: "string" },
    "start-at": { type: "string" },
    "end-at": { type: "string" },
    "max-fires": { type: "string" },
    overlap: { type: "string" },
    catchup: { type: "string" },
    "catchup-window": { type: "string" },
    label: { type: "string", multiple: true },
    namespace: { type: "string" },
    ttl: { type: "string" },
    paused: { type: "boolean" },
    note: { type: "string" },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const toolsetFlag = optionalFlag(values.toolset, "toolset");
  if (toolsetFlag === undefined) throw new UsageError("--toolset is required: a registered toolset's id, or a toolset file (registered first)");
  const script = optionalFlag(values.script, "script");
  const labels = parseLabels((values as Readonly<Record<string, unknown>>).label);
  const namespace = namespaceFlag(values.namespace);
  const every = durationFlag(values.every, "every");
  const catchupWindowMs = durationFlag(values["catchup-window"], "catchup-window");
  const ttlMs = durationFlag(values.ttl, "ttl");
  const startAt = timeFlag(values["start-at"], "start-at");
  const endAt = timeFlag(values["end-at"], "end-at");
  const maxFires = optionalFlag(values["max-fires"], "max-fires");
  const input = parseJsonFlag(optionalFlag(values.input, "input"), "input") as JsonValue | undefined;
  const fields = {
    workflow: optionalFlag(values.workflow, "workflow"),
    source: script === undefined ? undefined : readTextFile(script, "script"),
    input,
    cron: optionalFlag(values.cron, "cron"),
    everyMs: every,
    timezone: optionalFlag(values.timezone, "timezone"),
    startAt,
    endAt,
    // Checked by the engine with the rest: "x" is NaN, which it refuses.
    maxFires: maxFires === undefined ? undefined : Number(maxFires),
    overlap: optionalFlag(values.overlap, "overlap") as OverlapPolicy | undefined,
    catchup: optionalFlag(values.catchup, "catchup") as CatchupPolicy | undefined,
    catchupWindowMs,
    labels: Object.keys(labels).length === 0 ? undefined : labels,
    namespace,
    ttlMs,
    paused: values.paused === true ? true : undefined,
    note: optionalFlag(values.note, "note"),
  };
  return withEngine(
    values.data,
    undefined,
    async (engine) => {
      const toolset = existsSync(toolsetFlag) ? (await engine.registerToolset(readJsonFile(toolsetFlag, "toolset file"))).id : toolsetFlag;
      const options = Object.fromEntries(Object.entries({ toolset, ...fields }).filter(([, value]) => value !== undefined)) as unknown as ScheduleOptions;
      const created = await engine.schedules.create(options);
      if (created.kind === "refused") {
        out.stderr("the schedule was refused; nothing was saved:");
        for (const problem of created.problems) out.stderr(`  - ${flagWords(problem)}`);
        for (const d of created.diagnostics) out.stderr(`  - ${script ?? "script"}:${d.line}:${d.column} ${d.message}`);
        return 1;
      }
      out.stdout(created.schedule.id);
      printSchedule(out, created.schedule, "stderr");
      out.stderr("every tapedeck serve on this store fires it (within a second of now)");
      return 0;
    },
    {},
    // As `tapedeck toolset register`: a toolset file may be the folder's first.
    "create",
  );
}

async function list(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { namespace: { type: "string" }, label: { type: "string", multiple: true }, limit: { type: "string" } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const namespace = namespaceFlag(values.namespace);
  const labels = parseLabels((values as Readonly<Record<string, unknown>>).label);
  const limitFlag = optionalFlag(values.limit, "limit");
  const limit = limitFlag === undefined ? 100 : Number(limitFlag);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError("--limit must be a positive integer");
  return withEngine(values.data, undefined, async (engine) => {
    const found = await engine.schedules.list({ ...(namespace === undefined ? {} : { namespace }), labels, limit });
    if (found.length === 0) out.stderr("no schedules");
    for (const schedule of found) {
      const state = schedule.paused ? "paused" : schedule.nextFireAt === undefined ? "done" : `next ${iso(schedule.nextFireAt)}`;
      out.stdout(`${schedule.id}  ${when(schedule).padEnd(28)}  ${state}  ${schedule.fireCount} fire(s)  ${what(schedule)}`);
    }
    return 0;
  });
}

async function one(sub: "show" | "pause" | "resume" | "delete", args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {});
  const id = onlyId(positionals, sub);
  return withEngine(values.data, undefined, async (engine) => {
    if (sub === "delete") {
      await engine.schedules.delete(id);
      out.stderr(`schedule ${id} deleted; its runs stay (tapedeck runs lists them)`);
      return 0;
    }
    const schedule = sub === "show" ? await engine.schedules.get(id) : await engine.schedules[sub](id);
    printSchedule(out, schedule, "stdout");
    if (sub === "show") await printFires(engine, id, out);
    return 0;
  });
}

async function trigger(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { host: { type: "string" } });
  const id = onlyId(positionals, "trigger");
  const host = optionalFlag(values.host, "host");
  return withEngine(values.data, host, async (engine) => {
    const fired = await engine.schedules.trigger(id);
    out.stderr(fireLine(fired));
    if (fired.runId === undefined) return fired.state === "failed" ? 1 : 0;
    out.stdout(fired.runId);
    const flags = { data: values.data, host };
    return printSettled(out, fired.runId, await followRun(engine, fired.runId, out, { until: "park", logsFrom: 0, flags }), flags);
  });
}

function onlyId(positionals: readonly string[], sub: string): string {
  const [id, extra] = positionals;
  if (id === undefined) throw new UsageError(`missing <schedule_id> (tapedeck schedules ${sub} sch_…; tapedeck schedules list shows them)`);
  if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`);
  return id;
}

function printSchedule(out: Output, schedule: Schedule, stream: "stdout" | "stderr"): void {
  const print = (line: string): void => out[stream](line);
  print(`schedule ${schedule.id}${schedule.paused ? " (paused)" : ""}`);
  print(
    `  when:      ${when(schedule)}${schedule.timing.startAt === undefined ? "" : `, from ${iso(schedule.timing.startAt)}`}${schedule.timing.endAt === undefined ? "" : `, until ${iso(schedule.timing.endAt)}`}${schedule.timing.maxFires === undefined ? "" : `, at most ${schedule.timing.maxFires} fire(s)`}`,
  );
  print(`  starts:    ${what(schedule)} on toolset ${schedule.action.toolset}`);
  print(`  policies:  overlap ${schedule.policies.overlap}, catch-up ${schedule.policies.catchup}`);
  if (schedule.namespace !== undefined) print(`  namespace: ${schedule.namespace}`);
  if (schedule.labels !== undefined && Object.keys(schedule.labels).length > 0)
    print(
      `  labels:    ${Object.entries(schedule.labels)
        .map(([key, value]) => `${key}=${value}`)
        .join(", ")}`,
    );
  if (schedule.note !== undefined) print(`  note:      ${schedule.note}`);
  print(`  fired:     ${schedule.fireCount} time(s)`);
  if (schedule.upcoming.length === 0)
    print(`  next:      ${schedule.paused ? "none while paused (tapedeck schedules resume " + schedule.id + ")" : "none (its end or count is reached)"}`);
  for (const [n, at] of schedule.upcoming.entries()) print(`  ${n === 0 ? "next:     " : "          "} ${iso(at)}${zoned(at, schedule.timing.timezone)}`);
}

async function printFires(engine: Engine, id: string, out: Output): Promise<void> {
  const fires = await engine.schedules.fires(id, { limit: 10 });
  if (fires.length === 0) return;
  out.stdout("  last fires:");
  for (const fire of fires) out.stdout(`    ${fireLine(fire)}`);
}

function fireLine(fire: Pick<FireOutcome, "fireAt" | "kind" | "state" | "runId" | "reason">): string {
  return `${iso(fire.fireAt)}  ${fire.kind.padEnd(9)}  ${fire.state}${fire.runId === undefined ? "" : ` ${fire.runId}`}${fire.reason === undefined ? "" : ` (${fire.reason})`}`;
}

function when(schedule: Schedule): string {
  const { cron, everyMs, timezone } = schedule.timing;
  return cron !== undefined ? `cron "${cron}" ${timezone}` : `every ${everyMs} ms`;
}

function what(schedule: Schedule): string {
  return schedule.action.workflow !== undefined ? `workflow ${schedule.action.workflow}` : "a script";
}

function iso(at: number): string {
  return new Date(at).toISOString();
}

/** The time in the schedule's zone, when that is not UTC. */
function zoned(at: number, timezone: string): string {
  if (timezone === "UTC") return "";
  const local = new Intl.DateTimeFormat("sv-SE", { timeZone: timezone, dateStyle: "short", timeStyle: "medium" }).format(at);
  return `  (${local} ${timezone})`;
}

function durationFlag(value: string | boolean | undefined, flag: string): number | undefined {
  const text = optionalFlag(value, flag);
  if (text === undefined) return undefined;
  try {
    return parseDuration(/^\d+$/.test(text) ? Number(text) : text, `--${flag}`);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function timeFlag(value: string | boolean | undefined, flag: string): number | undefined {
  const text = optionalFlag(value, flag);
  if (text === undefined) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) throw new UsageError(`--${flag} must be an ISO 8601 time, such as 2026-03-01T09:00:00Z`);
  return at;
}

/** The engine's problems in the command's words (`--every`, not `everyMs`). */
function flagWords(problem: string): string {
  const flags: Record<string, string> = {
    everyMs: "--every",
    catchupWindowMs: "--catchup-window",
    ttlMs: "--ttl",
    startAt: "--start-at",
    endAt: "--end-at",
    maxFires: "--max-fires",
    source: "--script",
    cron: "--cron",
    timezone: "--timezone",
    overlap: "--overlap",
    catchup: "--catchup",
    workflow: "--workflow",
    toolset: "--toolset",
    input: "--input",
    labels: "--label",
    namespace: "--namespace",
    note: "--note",
  };
  return problem.replace(
    /\b(everyMs|catchupWindowMs|ttlMs|startAt|endAt|maxFires|source|cron|timezone|overlap|catchup|workflow|toolset|input|labels|namespace|note)\b/g,
    (word) => flags[word] ?? word,
  );
}
