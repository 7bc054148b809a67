import { EngineError } from "@tapedeck/engine";
import type { JsonValue } from "@tapedeck/protocol";
import { noExtraArguments, optionalFlag, parse, UsageError } from "../args.js";
import { parseJsonFlag, withEngine } from "../context.js";
import { followRun, printSettled } from "../follow-run.js";
import type { Output } from "../print.js";

/**
 * Sends the signal `name` (payload: `--payload`, default null) to a run; with a `--key` used
 * before for this run, nothing is sent again. A run parked on this signal wakes in this process
 * and goes on until it ends (printed as `run` prints) or parks again (its waiting line).
 */
export async function signalCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { payload: { type: "string" }, key: { type: "string" }, host: { type: "string" } });
  const [runId, name] = positionals;
  if (!runId) throw new UsageError("missing <run_id>");
  if (name === undefined) throw new UsageError("missing <name>");
  noExtraArguments(positionals, 2);
  const payload = (parseJsonFlag(optionalFlag(values.payload, "payload"), "payload") ?? null) as JsonValue;
  const key = optionalFlag(values.key, "key");
  const host = optionalFlag(values.host, "host");
  return withEngine(values.data, host, async (engine) => {
    const logsFrom = (await engine.getRun(runId)).journalLength;
    const sent = await engine.signal(runId, name, payload, key === undefined ? {} : { key }).catch((error: unknown) => {
      // Only waking the run can fail this way, and the signal is kept before it is woken.
      if (!(error instanceof EngineError) || error.code !== "misconfigured") throw error;
      throw new EngineError(
        "misconfigured",
        `${error.message} The signal was kept: do not send it again; the run takes it when it resumes (tapedeck resume ${runId} --host <module>).`,
      );
    });
    out.stderr(
      sent.duplicate
        ? `signal ${JSON.stringify(name)} was sent before with key ${JSON.stringify(key)}: not sent again`
        : `signal ${JSON.stringify(name)} sent to run ${runId}`,
    );
    if (sent.heldBy !== undefined) {
      out.stderr(`run ${runId} is kept by another process (${sent.heldBy}), which takes the signal and goes on there`);
      return 0;
    }
    const flags = { data: values.data, host };
    return printSettled(out, runId, await followRun(engine, runId, out, { until: "park", logsFrom, flags }), flags);
  });
}
