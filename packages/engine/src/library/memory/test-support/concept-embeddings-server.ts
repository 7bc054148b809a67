import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An OpenAI-compatible `/v1/embeddings` endpoint on loopback for tests, standing in for a real
 * embedding model: each text becomes a bag of concepts, where words of one synonym group
 * ("car", "automobile", "vehicle") share a dimension and every other word gets one of its own
 * (by hash). So texts that say the same thing in other words are similar, as a real model
 * makes them, and the test can tell vector search from word matching. It answers the items in
 * reverse order (with their `index`), as the API allows; `fail` makes it answer 503.
 */

const GROUPS = [
  ["car", "cars", "automobile", "vehicle", "tyres", "tires"],
  ["money", "cash", "budget", "spending", "costs", "expenses"],
  ["doctor", "physician", "clinic", "appointment"],
  ["holiday", "vacation", "trip", "journey"],
];
const DIMENSIONS = 64;

export interface EmbeddingsServer {
  readonly url: string;
  readonly requests: { model: string; input: string[] }[];
  fail: boolean;
  close(): Promise<void>;
}

export async function startEmbeddingsServer(): Promise<EmbeddingsServer> {
  const requests: { model: string; input: string[] }[] = [];
  const state = { fail: false };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/embeddings") return void res.writeHead(404).end();
      if (state.fail) return void res.writeHead(503).end("overloaded");
      const parsed = JSON.parse(body) as { model: string; input: string[] };
      requests.push(parsed);
      const data = parsed.input.map((text, index) => ({ object: "embedding", index, embedding: conceptVector(text) })).reverse();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data, model: parsed.model }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get fail() {
      return state.fail;
    },
    set fail(value: boolean) {
      state.fail = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function conceptVector(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const group = GROUPS.findIndex((words) => words.includes(word));
    const dimension = group >= 0 ? group : GROUPS.length + (hash(word) % (DIMENSIONS - GROUPS.length));
    vector[dimension]! += 1;
  }
  return vector;
}

function hash(word: string): number {
  let h = 2166136261;
  for (const c of word) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  return h;
}
