import gfmPlugin from "@joplin/turndown-plugin-gfm";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";
import type { ConversionOutcome, ConversionRequest } from "./html-converter.js";
import { removeHiddenElements } from "./hidden-elements.js";
import { withoutInvisibleCharacters } from "./invisible-characters.js";
import { boundMarkup } from "./markup-bounds.js";

/**
 * HTML to Markdown for a model to read: linkedom parses the page and applies the CSS selector,
 * turndown (with GitHub-flavoured tables, strikethrough and task lists) writes the Markdown.
 *
 * It runs in a conversion worker (`html-conversion-pool.ts`), never on the engine's event loop:
 * a page costs seconds at some sizes the `http` tool lets through.
 *
 * Invariants:
 * - The markup is bounded before it is parsed (`markup-bounds.ts`): depth and element count.
 * - What a reader never sees is dropped before conversion: scripts, styles, templates, frames,
 *   embedded objects, SVG, and elements hidden by markup or CSS (`hidden-elements.ts`); and
 *   after it, invisible and control characters (`invisible-characters.ts`). Both are a
 *   prompt-injection defence: the model reads what a person sees.
 * - Links and images point at absolute URLs (resolved against `<base href>` or the page's URL),
 *   so the model can fetch what a link names; `javascript:` links keep their text only.
 * - An image keeps its alt text: `![alt](url)`, or `[image: alt]` when it has no URL worth
 *   keeping (a `data:` URI is never copied into the text).
 * - Nothing here runs the page's JavaScript: this is the HTML as the server sent it.
 */

/** The slice of the DOM this file uses (the engine compiles without the DOM's types). */
interface Element {
  readonly tagName: string;
  readonly outerHTML: string;
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  remove(): void;
}

interface Document {
  readonly body: Element | null;
  readonly documentElement: Element;
  querySelector(selector: string): Element | null;
  querySelectorAll(selector: string): ArrayLike<Element> & Iterable<Element>;
}

/** Never part of what a reader sees. */
const INVISIBLE = "script, style, noscript, template, iframe, frame, frameset, object, embed, svg, canvas, link, meta";

/** Lazy-loading pages keep the real image URL in one of these and put a placeholder in `src`. */
const LAZY_SOURCES = ["data-src", "data-original", "data-lazy-src"];

const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "_" });
turndown.use(gfmPlugin.gfm);
turndown.addRule("image-with-alt", {
  filter: "img",
  replacement: (_content: string, node: Element) => {
    const alt = (node.getAttribute("alt") ?? "").replace(/\s+/g, " ").trim();
    const src = node.getAttribute("src") ?? "";
    if (src === "") return alt === "" ? "" : `[image: ${alt}]`;
    const title = node.getAttribute("title");
    return `![${alt}](${src}${title ? ` "${title.replace(/"/g, '\\"')}"` : ""})`;
  },
});

/** The Markdown of `html` (of the elements `selector` matches, when given), with URLs resolved against `pageUrl`. */
export function htmlToMarkdown({ html, pageUrl, selector }: ConversionRequest): Exclude<ConversionOutcome, { kind: "stopped" }> {
  const bounded = boundMarkup(html);
  // linkedom parses whole documents; a fragment is put into one first.
  const source = /<html[\s>]/i.test(bounded.html) ? bounded.html : `<!doctype html><html><head></head><body>${bounded.html}</body></html>`;
  const { document } = parseHTML(source) as unknown as { document: Document };
  const title = withoutInvisibleCharacters(document.querySelector("title")?.textContent ?? "")
    .replace(/\s+/g, " ")
    .trim();
  const base = baseUrl(document, pageUrl);
  const styleSheets = [...document.querySelectorAll("style")].map((style) => style.textContent ?? "");
  removeHiddenElements(document, styleSheets);
  for (const element of [...document.querySelectorAll(INVISIBLE)]) element.remove();
  absolutize(document, base);
  let roots: Element[];
  if (selector === undefined) roots = [document.body ?? document.documentElement];
  else {
    try {
      roots = [...document.querySelectorAll(selector)];
    } catch (error) {
      return {
        kind: "bad_selector",
        problem: `"${selector}" is not a CSS selector (${(error as Error).message}); give one like "article", "main .content" or "#docs h2"`,
      };
    }
  }
  const markdown = roots.length === 0 ? "" : tidy(withoutInvisibleCharacters(turndown.turndown(roots.map((root) => root.outerHTML).join("\n"))));
  return {
    kind: "converted",
    ...(title ? { title } : {}),
    markdown,
    ...(selector === undefined ? {} : { matched: roots.length }),
    tooDeep: bounded.tooDeep,
    truncated: bounded.truncated,
  };
}

function baseUrl(document: Document, pageUrl: string): URL | undefined {
  const page = parseUrl(pageUrl);
  const declared = document.querySelector("base[href]")?.getAttribute("href");
  return (declared ? parseUrl(declared, page) : undefined) ?? page;
}

function absolutize(document: Document, base: URL | undefined): void {
  for (const link of document.querySelectorAll("a[href]")) {
    const url = parseUrl(link.getAttribute("href") ?? "", base);
    if (url === undefined || !["http:", "https:", "mailto:"].includes(url.protocol)) link.removeAttribute("href");
    else link.setAttribute("href", url.href);
  }
  for (const image of document.querySelectorAll("img")) {
    const declared = image.getAttribute("src") ?? "";
    const lazy = LAZY_SOURCES.map((name) => image.getAttribute(name)).find((value) => value);
    const raw = lazy && (declared === "" || declared.startsWith("data:")) ? lazy : declared;
    const url = raw === "" ? undefined : parseUrl(raw, base);
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) image.removeAttribute("src");
    else image.setAttribute("src", url.href);
  }
}

function parseUrl(text: string, base?: URL): URL | undefined {
  try {
    return new URL(text.trim(), base);
  } catch {
    return undefined;
  }
}

/** At most one blank line in a row; no blank lines at either end. */
function tidy(markdown: string): string {
  return markdown.replace(/\n{3,}/g, "\n\n").trim();
}
