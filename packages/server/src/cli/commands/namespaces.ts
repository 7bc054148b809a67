import { Engine, openStore } from "@tapedeck/engine";
import { namespaceError, type ErasedNamespace } from "@tapedeck/protocol/api";
import { eraseNamespace } from "../../retention/erase-namespace.js";
import { openServerStores } from "../../store/server-stores.js";
import { optionalFlag, parse, UsageError } from "../args.js";
import { requireDataFolder } from "../data-folder.js";
import type { Output } from "../print.js";
import { storeLocation } from "../store-location.js";

/**
 * `tapedeck namespaces erase <namespace> [--cancel] [--dry-run] [--url <server> | --data <dir>]`:
 * erases an end user and prints what was deleted, kind by kind. With `--url` (or `TAPEDECK_URL`),
 * through a running server (`DELETE /v1/namespaces/:ns`, the key in `TAPEDECK_API_KEY`): the
 * server holds its runs, so it is the one to cancel them. Else on the data folder (or the store
 * `TAPEDECK_STORE` names) directly, for a server that is not running.
 */
export async function namespacesCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { cancel: { type: "boolean" }, "dry-run": { type: "boolean" }, url: { type: "string" } });
  const [verb, namespace, extra] = positionals;
  if (verb !== "erase") throw new UsageError(`unknown namespaces command "${verb ?? ""}": tapedeck namespaces erase <namespace> [--cancel] [--dry-run]`);
  if (namespace === undefined) throw new UsageError("name the namespace to erase: tapedeck namespaces erase <namespace>");
  if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`);
  const problem = namespaceError(namespace, "The namespace");
  if (problem !== undefined) throw new UsageError(problem);
  const options = { cancel: values.cancel === true, dryRun: values["dry-run"] === true };
  const url = optionalFlag(values.url, "url") ?? process.env.TAPEDECK_URL;
  const result = url === undefined ? await eraseInStore(values.data, namespace, options) : await eraseThroughServer(url, namespace, options);
  out.stdout(erasureSummary(result));
  return 0;
}

async function eraseThroughServer(url: string, namespace: string, options: { cancel: boolean; dryRun: boolean }): Promise<ErasedNamespace> {
  const apiKey = process.env.TAPEDECK_API_KEY;
  if (apiKey === undefined || apiKey === "") throw new UsageError("set TAPEDECK_API_KEY to an API key of the server (tapedeck keys create)");
  const { Tapedeck } = await import("@tapedeck/sdk");
  return new Tapedeck({ apiKey, baseUrl: url }).namespaces.erase(namespace, options);
}

async function eraseInStore(data: string, namespace: string, options: { cancel: boolean; dryRun: boolean }): Promise<ErasedNamespace> {
  const location = storeLocation(undefined, data);
  if (location === data) requireDataFolder(data);
  const store = await openStore(location);
  // The engine closes the store it was given with itself.
  const engine = await Engine.open({ store, wake: "owned" });
  try {
    return await eraseNamespace(engine, (await openServerStores(store)).webhookOutbox, namespace, options);
  } finally {
    await engine.close();
  }
}

/** What was (or would be) deleted: a line of counts, the runs cancelled, whether the files were compacted. */
export function erasureSummary(result: ErasedNamespace): string {
  const kinds: [number, string][] = [
    [result.runs, "run(s)"],
    [result.sessions, "session(s)"],
    [result.journalEntries, "journal entries"],
    [result.blobs, "blob(s)"],
    [result.sealedArguments, "sealed argument(s)"],
    [result.signals, "signal(s)"],
    [result.requests, "request(s)"],
    [result.events, "event(s)"],
    [result.hostTasks, "host task(s)"],
    [result.credentials, "credential(s)"],
    [result.rateLimitCalls, "rate-limit call(s)"],
    [result.schedules, "schedule(s)"],
    [result.memoryDocuments, "memory document(s)"],
    [result.workspaceFiles, "workspace file(s)"],
    [result.webhookDeliveries, "webhook deliveries"],
    [result.webhookEndpoints, "webhook endpoint(s)"],
  ];
  const counts = kinds.map(([n, kind]) => `${n} ${kind}`).join(", ");
  const name = JSON.stringify(result.namespace);
  if (result.dryRun) {
    const active =
      result.cancelled.length === 0
        ? ""
        : `\n${result.cancelled.length} run(s) have not ended (${result.cancelled.join(", ")}): erase with --cancel to cancel them first`;
    return `would erase from ${name}: ${counts}; nothing was deleted (dry run)${active}`;
  }
  const cancelled = result.cancelled.length === 0 ? "" : `\ncancelled first: ${result.cancelled.join(", ")}`;
  const compacted = result.compacted
    ? "the database files were compacted: the deleted bytes are gone"
    : "the files were not compacted here (PostgreSQL recycles its own; or a reader held a SQLite WAL)";
  return `erased from ${name}: ${counts}, in ${result.batches} batch(es)${cancelled}\n${compacted}`;
}
