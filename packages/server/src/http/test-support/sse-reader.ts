/** One Server-Sent Event as a test reads it off the wire. */
export interface SseEvent {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: unknown;
}

/**
 * Opens an event stream with `fetch` and reads its events one by one (`next`), for tests that
 * look at what the server sends (the SDK has its own reader). `close` drops the connection, as a
 * client whose network failed.
 */
export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #abort: AbortController;
  readonly #decoder = new TextDecoder();
  #text = "";
  #ended = false;

  private constructor(reader: ReadableStreamDefaultReader<Uint8Array>, abort: AbortController) {
    this.#reader = reader;
    this.#abort = abort;
  }

  /** Opens `url`; rejects with the status and body when the answer is not a stream. */
  static async open(url: string, credential: string, headers: Readonly<Record<string, string>> = {}): Promise<SseReader> {
    const abort = new AbortController();
    const response = await fetch(url, { headers: { authorization: `Bearer ${credential}`, accept: "text/event-stream", ...headers }, signal: abort.signal });
    if (response.status !== 200 || response.body === null) throw new Error(`${response.status} ${await response.text()}`);
    return new SseReader(response.body.getReader(), abort);
  }

  /** The next event (comments skipped), or undefined once the server ended the stream. */
  async next(): Promise<SseEvent | undefined> {
    for (;;) {
      const cut = this.#text.indexOf("\n\n");
      if (cut >= 0) {
        const block = this.#text.slice(0, cut);
        this.#text = this.#text.slice(cut + 2);
        const event = parseBlock(block);
        if (event !== undefined) return event;
        continue;
      }
      if (this.#ended) return undefined;
      const { done, value } = await this.#reader.read();
      if (done) this.#ended = true;
      else this.#text += this.#decoder.decode(value, { stream: true });
    }
  }

  /** Events until one `until` accepts (included) or the stream ends. */
  async collect(until: (event: SseEvent) => boolean = () => false): Promise<SseEvent[]> {
    const events: SseEvent[] = [];
    for (let event = await this.next(); event !== undefined; event = await this.next()) {
      events.push(event);
      if (until(event)) break;
    }
    return events;
  }

  close(): void {
    this.#abort.abort();
  }
}

function parseBlock(block: string): SseEvent | undefined {
  let id: string | undefined;
  let event = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":") || line === "") continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") id = value;
    else if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0) return undefined;
  return { id, event, data: JSON.parse(data.join("\n")) as unknown };
}
