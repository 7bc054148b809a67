import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { getEncoding } from "js-tiktoken";
import { DEFAULT_POLICY } from "../toolset/policy.js";
import { toolsetOf } from "../toolset/pin.js";
import { searchCorpus } from "../test-support/tool-search-corpus.js";
import { MemoryBlobStore } from "../store/blob-store.js";
import { bindDirectTools } from "./direct-binding.js";
import { checkDirectOptions } from "./direct-options.js";
import { blobPage, fetchBlob } from "./fetch-blob.js";
import { genericToolResult } from "./result-blocks.js";
import type { ModelContent } from "./model-content.js";
import { PREVIEW_LINES, PREVIEW_LINE_MAX, blobHandle, withinBudget } from "./spill.js";
import { estimateTokens } from "./token-estimate.js";

const text = (t: string): ModelContent => ({ parts: [{ type: "text", text: t }], isError: false });
const lines = (n: number, width = 10) => Array.from({ length: n }, (_, i) => `line ${i + 1} ${"x".repeat(width)}`).join("\n");
const spill = { maxTokens: 1000, overflow: "spill" } as const;

/** Reads a blob through `fetch_blob` as the model would, page after page from offset 0. */
async function readAll(handle: string, session: string, blobs: MemoryBlobStore, pageBytes?: number): Promise<string> {
  let out = "";
  let pages = 0;
  for (let offset: number | undefined = 0; offset !== undefined; pages++) {
    const page = genericToolResult(await fetchBlob({ handle, offset }, session, blobs, pageBytes)).text;
    const header =
      /^(blob_[0-9a-f]{40}), characters (\d+)–(\d+) of (\d+) \((?:next: fetch_blob\(\{ "handle": "blob_[0-9a-f]{40}", "offset": (\d+) \}\)|this is the end)\):\n/.exec(
        page,
      );
    assert.ok(header, page.slice(0, 200));
    out += page.slice(header[0].length);
    offset = header[5] === undefined ? undefined : Number(header[5]);
  }
  if (pageBytes !== undefined) assert.ok(pages >= Math.ceil(Buffer.byteLength(out) / pageBytes), "pages of at most pageBytes");
  return out;
}

describe("spill: results over their budget", () => {
  it("leave a result within its budget as it is", async () => {
    const content = text(lines(10));
    assert.equal(await withinBudget(content, spill, { session: "s", tool: "t", blobs: new MemoryBlobStore() }), content);
  });

  it("become the first and last 20 lines with the sizes, and a handle fetch_blob reads the whole result by", async () => {
    const blobs = new MemoryBlobStore();
    const whole = lines(1000);
    const result = await withinBudget(text(whole), spill, { session: "ses_1", tool: "github_list_issues", blobs });
    const preview = genericToolResult(result).text;
    const handle = blobHandle("ses_1", whole);
    assert.match(
      preview,
      new RegExp(
        `^The result of github_list_issues is too large to show whole \\(1,000 lines, ${whole.length.toLocaleString("en-US")} characters, about [\\d,]+ tokens; the budget is 1,000 tokens\\)\\. It is saved as ${handle}: read it with fetch_blob`,
      ),
    );
    const shown = preview.split("\n");
    assert.deepEqual(shown.slice(2, 2 + PREVIEW_LINES), whole.split("\n").slice(0, PREVIEW_LINES));
    assert.equal(shown[2 + PREVIEW_LINES], "[… 960 lines not shown …]");
    assert.deepEqual(shown.slice(-PREVIEW_LINES), whole.split("\n").slice(-PREVIEW_LINES));
    assert.ok(estimateTokens(preview) <= spill.maxTokens, "the preview fits the budget");
    assert.equal(await readAll(handle, "ses_1", blobs), whole);
    assert.equal(await readAll(handle, "ses_1", blobs, 1000), whole, "smaller pages for smaller budgets");
    const again = await withinBudget(text(whole), spill, { session: "ses_1", tool: "github_list_issues", blobs });
    assert.deepEqual(again, result, "spilling is a pure function of the result: the same handle, the same preview");
  });

  it("keep a blob readable only from the session that made it", async () => {
    const blobs = new MemoryBlobStore();
    const whole = lines(500);
    await withinBudget(text(whole), spill, { session: "ses_1", tool: "t", blobs });
    const other = await fetchBlob({ handle: blobHandle("ses_1", whole), offset: 0 }, "ses_2", blobs);
    assert.equal(other.isError, true);
    assert.match(genericToolResult(other).text, /no blob_[0-9a-f]{40} in this session: a handle is valid only in the session whose result made it/);
  });

  it("answer the model's mistakes with fetch_blob as isError results", async () => {
    const blobs = new MemoryBlobStore();
    const whole = lines(500);
    await withinBudget(text(whole), spill, { session: "s", tool: "t", blobs });
    const handle = blobHandle("s", whole);
    assert.match(genericToolResult(await fetchBlob({ offset: 0 }, "s", blobs)).text, /needs the handle/);
    assert.match(genericToolResult(await fetchBlob({ handle, offset: -1 }, "s", blobs)).text, /offset must be a whole number/);
    assert.match(genericToolResult(await fetchBlob({ handle, offset: 1e9 }, "s", blobs)).text, /past its end/);
    assert.equal((await fetchBlob({ handle }, "s", blobs)).isError, false, "offset defaults to 0");
  });

  it("under truncate, keep only the preview and say how to get less", async () => {
    const blobs = new MemoryBlobStore();
    const result = await withinBudget(text(lines(1000)), { maxTokens: 1000, overflow: "truncate" }, { session: "s", tool: "t", blobs });
    assert.match(genericToolResult(result).text, /Only this preview was kept: call the tool with narrower arguments/);
    assert.equal(await blobs.deleteSession("s"), 0, "nothing was stored");
  });

  it("cut long lines so that one line of a megabyte is previewed within the budget too", async () => {
    const blobs = new MemoryBlobStore();
    const json = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `item ${i}` })));
    const result = await withinBudget(text(json), spill, { session: "s", tool: "t", blobs });
    const preview = genericToolResult(result).text;
    assert.match(preview, new RegExp(`All 1 line, long lines cut at ${PREVIEW_LINE_MAX} characters:`));
    assert.match(preview, /… \[[\d,]+ more characters on this line\]$/);
    assert.ok(estimateTokens(preview) <= spill.maxTokens);
    assert.equal(await readAll(blobHandle("s", json), "s", blobs), json);
  });

  it("keep images, and the error flag, of a spilled result", async () => {
    const content: ModelContent = {
      parts: [
        { type: "text", text: lines(1000) },
        { type: "image", mimeType: "image/png", data: "AAAA" },
      ],
      isError: true,
    };
    const result = await withinBudget(content, spill, { session: "s", tool: "t", blobs: new MemoryBlobStore() });
    assert.deepEqual(result.parts[1], { type: "image", mimeType: "image/png", data: "AAAA" });
    assert.equal(result.isError, true);
  });

  it("apply each tool's own budget from the binding (a registry listing is raised, seed 002)", async () => {
    const tool = (name: string) => ({
      group: "tiktok",
      name,
      source: "mcp" as const,
      description: "",
      inputSchema: { type: "object" },
      policy: DEFAULT_POLICY,
    });
    const checked = checkDirectOptions({ results: { maxTokens: 1000, tools: [{ tool: "tool_list", maxTokens: 100_000 }] } });
    assert.ok(checked.ok);
    const table = bindDirectTools(toolsetOf([tool("tool_list"), tool("tool_get")]), checked.options);
    const listing = lines(1500, 30); // ~57 KB, like TikTok's registry listing
    const blobs = new MemoryBlobStore();
    const listed = await withinBudget(text(listing), table.tools.get("tiktok_tool_list")!.budget, { session: "s", tool: "tiktok_tool_list", blobs });
    assert.equal(genericToolResult(listed).text, listing);
    const got = await withinBudget(text(listing), table.tools.get("tiktok_tool_get")!.budget, { session: "s", tool: "tiktok_tool_get", blobs });
    assert.match(genericToolResult(got).text, /too large to show whole/);
  });

  it("pages reassemble the original exactly, never splitting a surrogate pair (property)", () => {
    const unit = fc.oneof(fc.string({ unit: "binary", maxLength: 8 }), fc.constantFrom("😀", "\ud800", "\udc00", "é", "漢", "\n"));
    fc.assert(
      fc.property(
        fc.array(unit, { maxLength: 60 }).map((parts) => parts.join("")),
        fc.integer({ min: 1, max: 16 }),
        fc.nat({ max: 200 }),
        (whole, maxBytes, start) => {
          let out = "";
          let offset: number | undefined = 0;
          while (offset !== undefined) {
            const page = blobPage(whole, offset, maxBytes);
            assert.equal(page.offset, offset);
            assert.ok(page.text.length > 0 || whole.length === 0, "never empty before the end");
            const last = page.text.charCodeAt(page.text.length - 1);
            const next = whole.charCodeAt(page.offset + page.text.length);
            assert.ok(!(last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff), "a pair is never split");
            out += page.text;
            offset = page.nextOffset;
          }
          assert.equal(out, whole);
          // From any offset, a page starts at a whole character.
          const from = blobPage(whole, Math.min(start, whole.length), maxBytes);
          assert.ok(from.offset <= start);
          assert.ok(whole.slice(from.offset).startsWith(from.text));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("token estimate", () => {
  it("is UTF-8 bytes / 3.5: within −15 % … +35 % of o200k_base on JSON, English, code, CJK and emoji", () => {
    const o200k = getEncoding("o200k_base");
    const corpus = searchCorpus();
    const samples = {
      json: JSON.stringify(corpus.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }))),
      english: corpus.tools.map((t) => t.description).join(" "),
      code: bindDirectTools.toString(),
      cjk: "这是一个测试文本，用于估计中文的令牌数量。日本語のテキストも少し含めます。".repeat(20),
      emoji: "😀🎉👍".repeat(100),
    };
    for (const [kind, sample] of Object.entries(samples)) {
      const ratio = estimateTokens(sample) / o200k.encode(sample).length;
      assert.ok(ratio >= 0.85 && ratio <= 1.35, `${kind}: estimate / o200k = ${ratio.toFixed(2)}`);
    }
  });
});
