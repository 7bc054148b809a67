import type { EventId, EventStore, StreamId } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** How many messages one session keeps for replay: a client that reconnects later than this many messages missed them. */
export const REPLAY_EVENTS = 256;

/**
 * Resumption of one MCP session's SSE streams (`Last-Event-ID`), in memory and bounded: the last
 * `limit` messages sent on any of its streams. A client whose stream broke reconnects with the
 * id of the last event it read and gets what followed on that stream. In memory because a
 * session is (a restart ends every session; the runs, in the store, go on); bounded because a
 * session lives as long as its host keeps it.
 */
export class BoundedEventStore implements EventStore {
  readonly #events = new Map<EventId, { readonly stream: StreamId; readonly message: JSONRPCMessage }>();
  #next = 0;

  constructor(private readonly limit = REPLAY_EVENTS) {}

  storeEvent(stream: StreamId, message: JSONRPCMessage): Promise<EventId> {
    // The stream is in the id, so a replay knows its stream even once older events are gone.
    const id = `${++this.#next}_${stream}`;
    this.#events.set(id, { stream, message });
    // A Map iterates in insertion order: the first key is the oldest.
    while (this.#events.size > this.limit) this.#events.delete(this.#events.keys().next().value!);
    return Promise.resolve(id);
  }

  getStreamIdForEventId(id: EventId): Promise<StreamId | undefined> {
    return Promise.resolve(streamOf(id));
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const stream = streamOf(lastEventId);
    if (stream === undefined) return "";
    const after = Number(lastEventId.slice(0, lastEventId.indexOf("_")));
    for (const [id, event] of this.#events) {
      if (event.stream === stream && Number(id.slice(0, id.indexOf("_"))) > after) await send(id, event.message);
    }
    return stream;
  }
}

function streamOf(id: EventId): StreamId | undefined {
  const at = id.indexOf("_");
  return at > 0 && /^\d+$/.test(id.slice(0, at)) ? id.slice(at + 1) : undefined;
}
