import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import Database from "better-sqlite3";
import type { LibraryTool, ToolContext } from "../library-tool.js";
import { failureOf, resultOf } from "../test-support/call-tool.js";
import { openAiEmbedder, type Embedder } from "./embeddings.js";
import { MemorySpace } from "./memory-space.js";
import { memoryTools } from "./memory-tools.js";
import { SqliteMemoryStore } from "./sqlite-memory-store.js";
import { startEmbeddingsServer, type EmbeddingsServer } from "./test-support/concept-embeddings-server.js";

let dir: string;
let server: EmbeddingsServer;
let n = 0;
const signal = new AbortController().signal;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "tapedeck-memory-"));
  server = await startEmbeddingsServer();
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function embedder(batchSize?: number): Embedder {
  return openAiEmbedder({
    baseUrl: server.url,
    model: "concepts-1",
    fetch: (url, init) => fetch(url, init),
    ...(batchSize === undefined ? {} : { batchSize }),
  });
}

function open(withEmbeddings: boolean): {
  db: Database.Database;
  store: SqliteMemoryStore;
  tools: readonly LibraryTool<"memory">[];
  ctx: ToolContext<"memory">;
} {
  const db = new Database(join(dir, `m${n++}.db`));
  const store = new SqliteMemoryStore(db);
  const memory = new MemorySpace(store, "alice", withEmbeddings ? embedder() : undefined);
  return { db, store, tools: memoryTools({ embeddings: withEmbeddings }), ctx: { now: () => Date.UTC(2026, 0, 1), signal, memory } };
}

const tool = (tools: readonly LibraryTool<"memory">[], name: string) => tools.find((t) => t.name === name)!;

void describe("memory tools, full-text only", () => {
  it("write, append, read, tree and search a namespace's documents", async () => {
    const { tools, ctx } = open(false);
    assert.deepEqual(await resultOf(tool(tools, "write"), { path: "people/sofia.md", content: "Sofia: product manager" }, ctx), {
      path: "people/sofia.md",
      version: 1,
      chunks: 1,
      embedded: false,
    });
    await resultOf(tool(tools, "write"), { path: "people/sofia.md", content: "Likes written agendas.", mode: "append" }, ctx);
    await resultOf(tool(tools, "write"), { path: "people/ken.md", content: "Ken: designer in Tokyo" }, ctx);
    await resultOf(tool(tools, "write"), { path: "todo.md", content: "buy a present for Marco" }, ctx);
    const read = await resultOf(tool(tools, "read"), { path: "people/sofia.md" }, ctx);
    assert.deepEqual(read, {
      path: "people/sofia.md",
      content: "Sofia: product manager\nLikes written agendas.",
      version: 2,
      updatedAt: "2026-01-01T00:00:00.000Z",
      totalChars: 45,
    });
    assert.deepEqual(await resultOf(tool(tools, "tree"), {}, ctx), {
      entries: [
        { path: "people", type: "folder", documents: 2 },
        { path: "todo.md", type: "document", sizeChars: 23 },
      ],
      truncated: false,
    });
    assert.deepEqual(
      ((await resultOf(tool(tools, "tree"), { path: "people", recursive: true }, ctx)).entries as { path: string }[]).map((e) => e.path),
      ["people/ken.md", "people/sofia.md"],
    );
    const found = await resultOf(tool(tools, "search"), { query: "who writes agendas" }, ctx);
    assert.equal(found.mode, "full_text");
    assert.deepEqual(
      (found.results as { path: string }[]).map((r) => r.path),
      ["people/sofia.md"],
    );
  });

  it("says it is full-text only, stores no vectors, and does not find paraphrases", async () => {
    const { db, tools, ctx } = open(false);
    assert.match(tool(tools, "search").description, /Full-text search only .* does NOT find synonyms or paraphrases/);
    await resultOf(tool(tools, "write"), { path: "garage.md", content: "The automobile needs new tyres before winter." }, ctx);
    assert.deepEqual((await resultOf(tool(tools, "search"), { query: "car maintenance" }, ctx)).results, []);
    const embedded = db.prepare("SELECT count(*) AS n FROM memory_chunks WHERE embedding IS NOT NULL OR model IS NOT NULL").get() as { n: number };
    assert.equal(embedded.n, 0, "no vector is made up");
  });

  it("appends racing each other all land", async () => {
    const { store, ctx } = open(false);
    const other = new MemorySpace(store, "alice");
    await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? ctx.memory : other).write("log.md", `entry ${i}`, true, 0, signal)));
    const lines = ((await ctx.memory.read("log.md")) as { content: string }).content.split("\n").sort();
    assert.deepEqual(lines, Array.from({ length: 16 }, (_, i) => `entry ${i}`).sort());
  });

  it("paths follow the workspace rules; a missing document says how to find one", async () => {
    const { tools, ctx } = open(false);
    assert.equal((await failureOf(tool(tools, "write"), { path: "../escape.md", content: "x" }, ctx)).code, "refused");
    assert.equal((await failureOf(tool(tools, "read"), { path: "/abs.md" }, ctx)).code, "refused");
    const missing = await failureOf(tool(tools, "read"), { path: "nope.md" }, ctx);
    assert.equal(missing.code, "not_found");
    assert.match(missing.message, /memory\.tree lists them/);
  });

  it("namespaces are separate", async () => {
    const { store, tools, ctx } = open(false);
    await resultOf(tool(tools, "write"), { path: "secret.md", content: "alice's plans" }, ctx);
    const bob = { ...ctx, memory: new MemorySpace(store, "bob") };
    assert.deepEqual((await resultOf(tool(tools, "search"), { query: "plans" }, bob)).results, []);
    assert.equal((await failureOf(tool(tools, "read"), { path: "secret.md" }, bob)).code, "not_found");
  });
});

void describe("memory tools with an embeddings endpoint", () => {
  it("hybrid search finds a note written in other words, and ranks notes found both ways first (RRF)", async () => {
    const { db, tools, ctx } = open(true);
    assert.match(tool(tools, "search").description, /Hybrid search: full-text \(BM25\) and meaning/);
    const written = await resultOf(tool(tools, "write"), { path: "garage.md", content: "The automobile needs new tyres before winter." }, ctx);
    assert.equal(written.embedded, true);
    await resultOf(tool(tools, "write"), { path: "car-loan.md", content: "The car loan is paid off in March." }, ctx);
    await resultOf(tool(tools, "write"), { path: "recipes.md", content: "Lentils, cumin and rice." }, ctx);
    const found = await resultOf(tool(tools, "search"), { query: "car maintenance" }, ctx);
    assert.equal(found.mode, "hybrid");
    const paths = (found.results as { path: string }[]).map((r) => r.path);
    assert.equal(paths[0], "car-loan.md", "found by its words and its meaning");
    assert.ok(paths.includes("garage.md"), "found by meaning only");
    const stored = db.prepare("SELECT model, length(embedding) AS bytes FROM memory_chunks WHERE path = 'garage.md'").get() as { model: string; bytes: number };
    assert.deepEqual(stored, { model: "concepts-1", bytes: 64 * 4 });
  });

  it("sends chunks in batches and keeps their order whatever order the endpoint answers in", async () => {
    const store = new SqliteMemoryStore(new Database(join(dir, `m${n++}.db`)));
    const space = new MemorySpace(store, "alice", embedder(2));
    const before = server.requests.length;
    const long = Array.from({ length: 5 }, (_, i) => Array.from({ length: 700 }, () => (i === 3 ? "vacation" : `w${i}`)).join(" ")).join(" ");
    const written = await space.write("long.md", long, false, 0, signal);
    assert.ok(written.ok && written.chunks === 5 && written.embedded);
    assert.deepEqual(
      server.requests.slice(before).map((r) => r.input.length),
      [2, 2, 1],
    );
    const hits = await space.search("holiday", 1, signal);
    assert.deepEqual(
      hits.hits.map((h) => [h.path, h.chunk]),
      [["long.md", 3]],
      "the chunk about vacation, by meaning and at its own position",
    );
  });

  it("when the endpoint fails, writes are kept for full-text search and say so, and search says it fell back", async () => {
    const { tools, ctx } = open(true);
    server.fail = true;
    try {
      const written = await resultOf(tool(tools, "write"), { path: "n.md", content: "quarterly budget review" }, ctx);
      assert.equal(written.embedded, false);
      assert.match(written.note as string, /not embedded \(the embeddings endpoint .* answered 503: overloaded\); full-text search finds it/);
      const found = await resultOf(tool(tools, "search"), { query: "budget" }, ctx);
      assert.equal(found.mode, "full_text");
      assert.match(found.note as string, /Only full-text search ran: the query could not be embedded/);
      assert.deepEqual(
        (found.results as { path: string }[]).map((r) => r.path),
        ["n.md"],
      );
    } finally {
      server.fail = false;
    }
  });
});

void describe("openAiEmbedder", () => {
  it("asks the endpoint with the model and the texts, and gives unit vectors", async () => {
    const result = await embedder().embed(["car", "car car"], signal);
    assert.ok(result.ok);
    const [a, b] = result.vectors;
    assert.ok(Math.abs(a!.reduce((s, x) => s + x * x, 0) - 1) < 1e-6);
    assert.deepEqual([...a!], [...b!], "same direction, same unit vector");
    assert.deepEqual(server.requests.at(-1), { model: "concepts-1", input: ["car", "car car"] });
  });

  it("says what is wrong with an answer it cannot use", async () => {
    const answering = (status: number, body: string) =>
      openAiEmbedder({ baseUrl: "http://x/v1/", model: "m", fetch: () => Promise.resolve({ status, text: () => Promise.resolve(body) }) });
    const problem = async (status: number, body: string) => {
      const result = await answering(status, body).embed(["a", "b"], signal);
      assert.ok(!result.ok);
      return result.problem;
    };
    assert.match(await problem(401, "bad key"), /http:\/\/x\/v1\/embeddings answered 401: bad key/);
    assert.match(await problem(200, "not json"), /not JSON/);
    assert.match(await problem(200, '{"data":[{"index":0,"embedding":[1]}]}'), /answered 1 vectors for 2 texts/);
    assert.match(await problem(200, '{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}'), /wrong index/);
    assert.match(await problem(200, '{"data":[{"index":0,"embedding":["x"]},{"index":1,"embedding":[1]}]}'), /not a list of numbers/);
    const unreachable = await openAiEmbedder({ baseUrl: "http://x", model: "m", fetch: () => Promise.reject(new Error("ECONNREFUSED")) }).embed(["a"], signal);
    assert.ok(!unreachable.ok && /could not be reached \(ECONNREFUSED\)/.test(unreachable.problem));
  });
});
