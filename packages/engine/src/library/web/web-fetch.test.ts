import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { after, before, describe, it } from "node:test";
import { HttpToolSource } from "../../sources/http/http-tool-source.js";
import { startLoopbackServer, tableResolver, type LoopbackServer } from "../../test-support/loopback-http.js";
import type { ToolContext } from "../library-tool.js";
import { failureOf, resultOf } from "../test-support/call-tool.js";
import { guardedFetchFrom } from "./test-support/http-guarded-fetch.js";
import { HtmlConversionPool } from "./html-conversion-pool.js";
import { DEFAULT_MAX_CHARS, webFetchTool } from "./web-fetch.js";

/**
 * web.fetch through the real `http` tool source (allow-list, SSRF checks, pinned address) to a
 * server on loopback, reached by the test-only allowance and a resolver that maps test names to
 * 127.0.0.1.
 */

let server: LoopbackServer;
let source: HttpToolSource;
let ctx: ToolContext<"fetch" | "html">;
let pool: HtmlConversionPool;
let base: string;

const PAGE = `<!doctype html>
<html><head><title> Docs &amp; more </title><style>body { color: red }</style><script>document.write("injected")</script></head>
<body>
  <nav><a href="/">Home</a></nav>
  <article class="doc">
    <h1>API guide</h1>
    <p>Read the <a href="../reference/index.html">reference</a> or <a href="javascript:alert(1)">click</a>.</p>
    <img src="/img/diagram.png" alt="Request flow diagram">
    <img src="data:image/png;base64,AAAA" alt="Inline chart">
    <img src="data:image/gif;base64,R0lG" data-src="/img/lazy.jpg" alt="Lazy photo">
    <table><tr><th>Code</th><th>Meaning</th></tr><tr><td>200</td><td>OK</td></tr></table>
    <ul><li>one</li><li><del>two</del></li></ul>
    <pre><code class="language-js">fetch(url)\n</code></pre>
    <p hidden>secret hidden text</p>
    <noscript>enable javascript</noscript>
  </article>
  <footer>© 2026</footer>
</body></html>`;

/** Each hiding technique wraps one instruction a reader of the page never sees; every `visible-N` must stay. */
const HIDDEN_TEXT_PAGE = `<!doctype html><html><head><title>Shop\u202E\u200B</title>
<style>
  .sneaky { display: none }
  /* a comment { with braces } */
  #gone, .also-gone { visibility : hidden !important; }
  @media screen { .screen-hidden { font-size: 0 } }
  @media print { .print-only-hidden { display: none } }
  @font-face { font-family: x; src: url(x.woff) }
</style></head><body>
<p>visible-1</p>
<p style="display:none">hidden-display</p>
<p style="visibility: hidden">hidden-visibility</p>
<p style="font-size:0px">hidden-font-size</p>
<p style="font: 0/0 a">hidden-font-shorthand</p>
<p style="opacity: 0">hidden-opacity</p>
<p style="color: transparent">hidden-transparent</p>
<p aria-hidden="true">hidden-aria</p>
<p aria-hidden="false">visible-2</p>
<p hidden>hidden-attribute</p>
<div style="position:absolute; left:-9999px">hidden-offscreen-left</div>
<div style="position:absolute; top: -10000px">hidden-offscreen-top</div>
<div style="text-indent:-9999px">hidden-text-indent</div>
<div style="transform: translateX(-10000px)">hidden-translate</div>
<div style="position:absolute; width:1px; height:0; overflow:hidden">hidden-zero-box</div>
<div style="clip: rect(0 0 0 0); position: absolute">hidden-clip</div>
<div style="transform: scale(0)">hidden-scale</div>
<div class="sneaky">hidden-class-rule</div>
<div id="gone">hidden-id-rule</div>
<span class="also-gone">hidden-list-rule</span>
<span class="screen-hidden">hidden-media-screen</span>
<span class="print-only-hidden">visible-3</span>
<dialog>hidden-dialog</dialog>
<dialog open>visible-4</dialog>
<div style="position:absolute; left: 1200px; margin-left: -20px">visible-5</div>
<p>visible-6: esc\u001b[2J bel\u0007 rlo\u202Egnp.exe zwsp\u200Bx tag\u{E0049}\u{E0047}x vs\u{E0101}x bom\uFEFFx nul\u0000x del\u007Fx c1\u009Bx emoji 👨\u200D👩\u200D👧 ❤\uFE0F</p>
</body></html>`;

/** 100,000 nested elements: linkedom took 9 s to parse it and turndown minutes to recurse through it. */
const DEEP_PAGE = `<html><body><p>before</p>${"<div>".repeat(100_000)}deep text${"</div>".repeat(100_000)}<p>after</p></body></html>`;
/** About 1.6 MiB of short paragraphs, within the element bound: seconds of conversion. */
const HUGE_PAGE = `<html><body>${"<p>some ordinary paragraph text</p>".repeat(45_000)}</body></html>`;
/** 6 MiB of HTML that gzip makes about 6 KB: past the http tool's 5 MiB only once decoded. */
const GZIP_BOMB = gzipSync(Buffer.from(`<html><body>${"<p>a</p>".repeat(800_000)}</body></html>`));

/** Ticks of a 1 ms interval, counted while `during` runs from when `startCounting` is first called. */
async function ticksWhile<T>(during: (startCounting: () => void) => Promise<T>): Promise<{ result: T; ticks: number }> {
  let ticks = 0;
  let counting = false;
  const interval = setInterval(() => {
    if (counting) ticks++;
  }, 1);
  try {
    const result = await during(() => (counting = true));
    return { result, ticks };
  } finally {
    clearInterval(interval);
  }
}

/** Called when the server has sent the whole of a page (`res.end` flushed). */
let onPageSent: () => void = () => {};

before(async () => {
  server = await startLoopbackServer({
    "/docs/guide.html": (_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE),
    "/spa": (_req, res) =>
      res.writeHead(200, { "content-type": "text/html" }).end('<html><body><div id="root"></div><script src="/app.js"></script></body></html>'),
    "/long": (_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("0123456789".repeat(5_000)),
    "/data.json": (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"a":[1,2],"b":{"c":true}}'),
    "/image.png": (_req, res) => res.writeHead(200, { "content-type": "image/png" }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1])),
    "/missing": (_req, res) => res.writeHead(404, { "content-type": "text/html" }).end("<html><body><h1>Not here</h1></body></html>"),
    "/untyped": (_req, res) => res.writeHead(200, { "content-type": "" }).end("<!DOCTYPE html><html><body><p>sniffed</p></body></html>"),
    "/to-private": (_req, res) => res.writeHead(302, { location: "http://10.0.0.1/admin" }).end(),
    "/emoji": (_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("a😀b"),
    "/deep": (_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(DEEP_PAGE),
    "/huge": (_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(HUGE_PAGE, () => onPageSent()),
    "/gzip-bomb": (_req, res) => res.writeHead(200, { "content-type": "text/html", "content-encoding": "gzip" }).end(GZIP_BOMB),
    "/gzipped": (_req, res) =>
      res.writeHead(200, { "content-type": "text/html", "content-encoding": "gzip" }).end(gzipSync("<html><body><h1>Packed</h1></body></html>")),
    "/not-gzip": (_req, res) => res.writeHead(200, { "content-type": "text/html", "content-encoding": "gzip" }).end("<p>plain, not gzip</p>"),
    "/table": (_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(`<table>${"<tr><td>a</td><td>b</td></tr>".repeat(3_000)}</table>`),
    "/hidden-text": (_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(HIDDEN_TEXT_PAGE),
    "/controls.txt": (_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("plain\u001b]0;title\u0007 \u202Etxt\r\nline\u2028two"),
    "/controls.json": (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"a":"\\u001b[31mred\\u202e"}'),
  });
  source = new HttpToolSource({ resolver: tableResolver({ "docs.test.example": ["127.0.0.1"] }), unsafeAllowLoopbackForTests: true });
  pool = new HtmlConversionPool();
  ctx = { now: () => 0, signal: new AbortController().signal, fetch: guardedFetchFrom(source, ["docs.test.example"]), html: pool };
  base = `http://docs.test.example:${server.port}`;
});
after(async () => {
  await pool.close();
  await source.close();
  await server.close();
});

void describe("web.fetch", () => {
  it("turns HTML into Markdown: headings, absolute links, tables, code, alt text; scripts, styles and hidden text dropped", async () => {
    const page = await resultOf(webFetchTool, { url: `${base}/docs/guide.html` }, ctx);
    const content = page.content as string;
    assert.equal(page.title, "Docs & more");
    assert.equal(page.status, 200);
    assert.equal(page.contentType, "text/html");
    assert.match(content, /^# API guide$/m);
    assert.ok(content.includes(`[reference](${base}/reference/index.html)`), content);
    assert.ok(content.includes("or click."), "a javascript: link keeps its text only");
    assert.ok(content.includes(`![Request flow diagram](${base}/img/diagram.png)`));
    assert.ok(content.includes("[image: Inline chart]"), "a data: image keeps its alt text, not its bytes");
    assert.ok(content.includes(`![Lazy photo](${base}/img/lazy.jpg)`), "a lazy image's real URL is used");
    assert.match(content, /\| Code +\| Meaning +\|\n\| -+ \| -+ \|\n\| 200 +\| OK +\|/);
    assert.ok(content.includes("~~two~~") && content.includes("```js\nfetch(url)\n```"));
    for (const gone of ["color: red", "injected", "secret hidden text", "enable javascript", "base64"]) assert.ok(!content.includes(gone), gone);
  });

  it("drops text a reader never sees (hidden by markup, inline style or the page's style rules) and invisible or control characters, and says so in its description", async () => {
    const page = await resultOf(webFetchTool, { url: `${base}/hidden-text` }, ctx);
    const content = page.content as string;
    for (let n = 1; n <= 6; n++) assert.ok(content.includes(`visible-${n}`), `visible-${n} is kept: ${content}`);
    const leaked = [...content.matchAll(/hidden-[a-z-]+/g)].map((m) => m[0]);
    assert.deepEqual(leaked, [], "no hidden text reaches the Markdown");
    assert.equal(page.title, "Shop");
    assert.ok(
      content.includes("visible-6: esc\\[2J bel rlognp.exe zwspx tagx vsx bomx nulx delx c1x emoji 👨\u200D👩\u200D👧 ❤\uFE0F"),
      JSON.stringify(content),
    );
    assert.doesNotMatch(content, /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u200B\u202A-\u202E\uFEFF]|[\u{E0000}-\u{E01EF}]/u);
    const text = await resultOf(webFetchTool, { url: `${base}/controls.txt` }, ctx);
    assert.equal(text.content, "plain]0;title txt\nline\ntwo");
    const json = await resultOf(webFetchTool, { url: `${base}/controls.json` }, ctx);
    assert.equal(json.content, '{\n  "a": "\\u001b[31mred"\n}', "JSON escapes stay visible; a raw bidi control goes");
    const raw = await resultOf(webFetchTool, { url: `${base}/hidden-text`, format: "html" }, ctx);
    assert.doesNotMatch(raw.content as string, /[\u001b\u0007\u202E\u200B]/);
    assert.match(webFetchTool.description, /defence against instructions hidden in pages/);
  });

  it("a page nested 100,000 deep converts, the part past the depth bound left out and said so", async () => {
    const page = await resultOf(webFetchTool, { url: `${base}/deep` }, ctx);
    assert.equal(page.content, "before\n\nafter");
    assert.match(page.note as string, /1 element nested deeper than 512 levels \(with all it holds\) was left out of the Markdown/);
  });

  it("a huge page converts off the event loop: timers keep firing while it converts", async () => {
    const { result, ticks } = await ticksWhile(async (startCounting) => {
      onPageSent = startCounting;
      return resultOf(webFetchTool, { url: `${base}/huge` }, ctx);
    });
    assert.equal(result.totalChars, 45_000 * "some ordinary paragraph text\n\n".length - 2);
    // On the event loop, the interval could not fire between the page's arrival and its Markdown.
    assert.ok(ticks >= 50, `the event loop ticked ${ticks} times while the page was read and converted`);
  });

  it("a gzip bomb is refused at the decoded bound, naming it; a gzipped page is decoded", async () => {
    const bomb = await failureOf(webFetchTool, { url: `${base}/gzip-bomb` }, ctx);
    assert.equal(bomb.code, "result_too_large");
    assert.match(bomb.message, /decoded past 5242880 bytes \(its Content-Encoding is gzip\)/);
    assert.equal((await resultOf(webFetchTool, { url: `${base}/gzipped` }, ctx)).content, "# Packed");
    const broken = await failureOf(webFetchTool, { url: `${base}/not-gzip` }, ctx);
    assert.equal(broken.code, "tool_error");
    assert.match(broken.message, /says its body is gzip-encoded, but it does not decode/);
  });

  it("a conversion past its deadline is stopped with a failure naming the bound; the next page converts", async () => {
    const short = new HtmlConversionPool({ deadlineMs: 500 });
    try {
      const slow = await failureOf(webFetchTool, { url: `${base}/table` }, { ...ctx, html: short });
      assert.equal(slow.code, "page_too_complex");
      assert.match(slow.message, /took longer than 0\.5 s \(web\.fetch's bound per page\)/);
      assert.equal((await resultOf(webFetchTool, { url: `${base}/missing` }, { ...ctx, html: short })).content, "# Not here");
    } finally {
      await short.close();
    }
  });

  it("a selector keeps only what it matches, says how many matched, and refuses a selector that is not CSS", async () => {
    const article = await resultOf(webFetchTool, { url: `${base}/docs/guide.html`, selector: "article.doc h1, footer" }, ctx);
    assert.equal(article.content, "# API guide\n\n© 2026");
    assert.equal(article.matched, 2);
    const none = await resultOf(webFetchTool, { url: `${base}/docs/guide.html`, selector: "aside" }, ctx);
    assert.equal(none.matched, 0);
    assert.match(none.note as string, /No element matches the selector "aside"/);
    const bad = await failureOf(webFetchTool, { url: `${base}/docs/guide.html`, selector: "[[[" }, ctx);
    assert.equal(bad.code, "invalid_arguments");
    assert.match(bad.message, /"\[\[\[" is not a CSS selector/);
  });

  it("says that JavaScript is not run — in its description and when a page is empty without it", async () => {
    assert.match(webFetchTool.description, /does NOT run JavaScript/);
    const spa = await resultOf(webFetchTool, { url: `${base}/spa` }, ctx);
    assert.equal(spa.content, "");
    assert.match(spa.note as string, /built by JavaScript, which web\.fetch does not run/);
  });

  it("is bounded: long text comes in parts, each saying where the next starts, and the parts rebuild the text", async () => {
    const first = await resultOf(webFetchTool, { url: `${base}/long` }, ctx);
    assert.equal((first.content as string).length, DEFAULT_MAX_CHARS);
    assert.equal(first.totalChars, 50_000);
    assert.equal(first.nextOffset, DEFAULT_MAX_CHARS);
    let text = first.content as string;
    for (let offset = first.nextOffset as number | undefined; offset !== undefined;) {
      const part = await resultOf(webFetchTool, { url: `${base}/long`, offset, maxChars: 12_345 }, ctx);
      text += part.content as string;
      offset = part.nextOffset as number | undefined;
    }
    assert.equal(text, "0123456789".repeat(5_000));
    const emoji = await resultOf(webFetchTool, { url: `${base}/emoji`, maxChars: 2 }, ctx);
    assert.equal(emoji.content, "a", "a cut never splits a character");
    assert.equal(emoji.nextOffset, 1);
  });

  it("JSON is indented, an error page is returned with its status, a page without a type is sniffed, binary is refused", async () => {
    assert.equal(
      (await resultOf(webFetchTool, { url: `${base}/data.json` }, ctx)).content,
      '{\n  "a": [\n    1,\n    2\n  ],\n  "b": {\n    "c": true\n  }\n}',
    );
    const missing = await resultOf(webFetchTool, { url: `${base}/missing` }, ctx);
    assert.equal(missing.status, 404);
    assert.equal(missing.content, "# Not here");
    assert.match(missing.note as string, /The server answered 404 Not Found/);
    assert.equal((await resultOf(webFetchTool, { url: `${base}/untyped` }, ctx)).content, "sniffed");
    const image = await failureOf(webFetchTool, { url: `${base}/image.png` }, ctx);
    assert.equal(image.code, "unsupported_content");
    assert.match(image.message, /is image\/png .* not text or HTML/);
    const raw = await resultOf(webFetchTool, { url: `${base}/docs/guide.html`, format: "html" }, ctx);
    assert.ok((raw.content as string).includes("<script>"), "format html returns the page as received");
  });

  it("the http tool's rules apply: an unlisted host and a redirect to a private address are refused", async () => {
    const unlisted = await failureOf(webFetchTool, { url: "https://elsewhere.example.org/" }, ctx);
    assert.equal(unlisted.code, "refused");
    const redirect = await failureOf(webFetchTool, { url: `${base}/to-private` }, ctx);
    assert.equal(redirect.code, "refused");
    assert.match(redirect.message, /10\.0\.0\.1/);
  });
});
