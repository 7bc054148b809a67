/** One block of a Server-Sent Events stream: an event (`data` set), or an `id:` line alone (`data` undefined). */
export interface SseBlock {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string | undefined;
}

/**
 * The blocks of a Server-Sent Events body, as the standard parses them (comments skipped, `data`
 * lines joined), until the body ends. Throws what reading the body throws (a dropped connection).
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseBlock> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      for (let cut = text.indexOf("\n\n"); cut >= 0; cut = text.indexOf("\n\n")) {
        const block = parseBlock(text.slice(0, cut));
        text = text.slice(cut + 2);
        if (block !== undefined) yield block;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

function parseBlock(text: string): SseBlock | undefined {
  let id: string | undefined;
  let event = "message";
  const data: string[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") id = value;
    else if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  if (id === undefined && data.length === 0) return undefined;
  return { id, event, data: data.length === 0 ? undefined : data.join("\n") };
}
