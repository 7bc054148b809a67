import { RunStatus } from "@tapedeck/protocol";
import { optionalFlag, parse, UsageError } from "../args.js";
import type { Output } from "../print.js";
import { runLine } from "../run-line.js";

/**
 * `tapedeck runs --watch`: the runs of the key's scope on a running server, first as they are
 * (newest first), then a line each time one is created or changes (`GET /v1/events`, through the
 * SDK's `events`, which resumes by itself across a restart of the server), until interrupted.
 * Over HTTP, not the data folder; the key is read from `TAPEDECK_API_KEY` only, never a flag, so
 * that it is not in the process list. Exit code 0 on Ctrl-C, 1 when the server refuses the key.
 */
export async function runsWatchCommand(args: readonly string[], out: Output): Promise<number> {
  const { values } = parse(args, { watch: { type: "boolean" }, url: { type: "string" }, status: { type: "string" }, limit: { type: "string" } });
  const url = optionalFlag(values.url, "url") ?? process.env.TAPEDECK_URL;
  const statusFlag = optionalFlag(values.status, "status");
  const statuses = Object.values(RunStatus) as string[];
  if (statusFlag !== undefined && !statuses.includes(statusFlag)) throw new UsageError(`--status must be one of ${statuses.join(", ")}`);
  const status = statusFlag as RunStatus | undefined;
  const limitFlag = optionalFlag(values.limit, "limit");
  const limit = limitFlag === undefined ? 50 : Number(limitFlag);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError("--limit must be a positive integer");
  const apiKey = process.env.TAPEDECK_API_KEY;
  if (apiKey === undefined || apiKey === "") throw new UsageError("set TAPEDECK_API_KEY to an API key of the server (tapedeck keys create)");
  const { Tapedeck, TapedeckError } = await import("@tapedeck/sdk");
  const client = new Tapedeck({ apiKey, ...(url === undefined ? {} : { baseUrl: url }) });
  const filter = status === undefined ? {} : { status };
  const stop = new AbortController();
  const interrupted = (): void => stop.abort();
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const changes = client.events({ ...filter, signal: stop.signal, onOpen: () => opened() })[Symbol.asyncIterator]();
    const first = changes.next();
    // The list is read once the stream is open, so that no change between the two is missed.
    await Promise.race([open, first]);
    const listed = await client.runs.list({ ...(status === undefined ? {} : { status: [status] }), limit });
    if (listed.length === 0) out.stderr("no runs yet; watching");
    for (const run of listed) out.stdout(runLine(run));
    for (let next = await first; next.done !== true; next = await changes.next()) out.stdout(runLine(next.value.run));
    return 0;
  } catch (error) {
    if (!TapedeckError.is(error)) throw error;
    out.stderr(`error: ${error.message}`);
    return 1;
  } finally {
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
  }
}
