import type { RunRecord } from "@tapedeck/engine";
import type { Run } from "@tapedeck/protocol/api";

/** A run as the API shows it: the record without what is internal (the compiled JS, its source map). */
export function runView(record: RunRecord): Run {
  return {
    id: record.id,
    toolset: record.toolsetId,
    status: record.status,
    source: record.source,
    input: record.input,
    ...(record.output === undefined ? {} : { output: record.output }),
    ...(record.error === undefined ? {} : { error: record.error }),
    ...(record.waits === undefined ? {} : { waits: record.waits }),
    ...(record.wakeAt === undefined ? {} : { wakeAt: record.wakeAt }),
    labels: record.labels ?? {},
    ...(record.namespace === undefined ? {} : { namespace: record.namespace }),
    ...(record.parentId === undefined ? {} : { parent: record.parentId }),
    ...(record.caller === undefined ? {} : { caller: { run: record.caller.runId, seq: record.caller.seq } }),
    ...(record.expiresAt === undefined ? {} : { expiresAt: record.expiresAt }),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    journalLength: record.journalLength,
    ...(record.damaged === undefined ? {} : { damaged: record.damaged }),
  };
}
