import type { Engine } from "@tapedeck/engine";
import type { FastifyReply, FastifyRequest } from "fastify";
import { InProcessChannel } from "./in-process-channel.js";
import type { ServerContext } from "../runtime/server-context.js";

/**
 * Holds a request until the run ends or parks (`engine.settled`; with `next`, a parked run's
 * next end or park after it wakes), at most `seconds`, or until one of `stops` aborts (the
 * server stops, the client hangs up). Never throws: the caller answers with the run as it is
 * then, whatever happened.
 */
export async function holdUntilSettled(engine: Engine, runId: string, seconds: number, stops: readonly AbortSignal[], next = false): Promise<void> {
  if (seconds <= 0 || stops.some((s) => s.aborted)) return;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const timer = setTimeout(release, seconds * 1000);
  for (const stop of stops) stop.addEventListener("abort", release, { once: true });
  try {
    await Promise.race([engine.settled(runId, { next }).catch(() => undefined), released]);
  } finally {
    clearTimeout(timer);
    for (const stop of stops) stop.removeEventListener("abort", release);
  }
}

/** An AbortSignal that aborts when the client's connection closes before the answer is sent. */
export function clientGone(raw: { once(event: "close", listener: () => void): unknown; readonly writableFinished: boolean }): AbortSignal {
  const controller = new AbortController();
  raw.once("close", () => {
    if (!raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * Aborted when a held request must answer now: the server stops, or the client hung up (its
 * connection closed; for an embedded client, its fetch was aborted).
 */
export function holdEnds(context: ServerContext, request: FastifyRequest, reply: FastifyReply): AbortSignal {
  const ends = [context.stopping, clientGone(reply.raw)];
  const inProcess = context.inProcess?.signalOf(request.headers[InProcessChannel.REQUEST_HEADER]);
  if (inProcess) ends.push(inProcess);
  return AbortSignal.any(ends);
}
