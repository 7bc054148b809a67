/**
 * Server-Sent Events over fetch: the browser's EventSource cannot send an Authorization header,
 * and the console's key must never be in a URL (it would reach logs and history). Reconnects with
 * Last-Event-ID after a dropped connection, so no event is lost.
 */

export interface SseEvent {
  readonly event: string;
  readonly id?: string;
  readonly data: unknown;
}

/** Follows `path` until `signal` aborts or the server ends the stream (an `end` event ends it for good). */
export async function follow(
  token: string,
  path: string,
  signal: AbortSignal,
  onEvent: (event: SseEvent) => void,
  onError: (message: string) => void,
): Promise<void> {
  let lastId: string | undefined;
  let ended = false;
  while (!signal.aborted && !ended) {
    try {
      const response = await fetch(`/v1${path}`, {
        headers: { authorization: `Bearer ${token}`, accept: "text/event-stream", ...(lastId === undefined ? {} : { "last-event-id": lastId }) },
        signal,
      });
      if (!response.ok || response.body === null) {
        const text = await response.text();
        onError(errorMessage(text, response.status));
        return;
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut: number;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const parsed = parseBlock(block);
          if (parsed === undefined) continue;
          if (parsed.id !== undefined) lastId = parsed.id;
          onEvent(parsed);
          if (parsed.event === "end" || parsed.event === "lost") ended = true;
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      onError(error instanceof Error ? error.message : String(error));
    }
    // The server closed the stream (a restart, a stop) without an end: reconnect after a breath.
    if (!signal.aborted && !ended) await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function parseBlock(block: string): SseEvent | undefined {
  let event = "message";
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "id") id = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0 && id === undefined) return undefined;
  const text = data.join("\n");
  return { event, ...(id === undefined ? {} : { id }), data: text === "" ? undefined : (JSON.parse(text) as unknown) };
}

function errorMessage(text: string, status: number): string {
  try {
    return (JSON.parse(text) as { error: { message: string } }).error.message;
  } catch {
    return `HTTP ${status}`;
  }
}
