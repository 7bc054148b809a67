/**
 * Which elements of a page a reader never sees, so that web.fetch can drop them before the page
 * becomes Markdown: a prompt-injection defence. A page can hide text from the person who reads
 * it (instructions to the model, links to follow) while a converter that ignores CSS hands it
 * to the model; dropping what is hidden makes the model read what a person reads.
 *
 * What counts as hidden, by the `hidden` attribute, `aria-hidden="true"`, an unopened
 * `<dialog>`, and CSS declarations in a `style` attribute or in simple rules of the page's own
 * `<style>` elements (top level, or in `@media all|screen` without conditions):
 * `display: none`, `visibility: hidden | collapse`, `opacity: 0`, a zero font size (`font-size`
 * or the `font` shorthand), `color: transparent`, zero width or height with `overflow: hidden`,
 * `clip: rect(…)` / `clip-path: inset(50%…)` (the "visually hidden" pattern), `transform:
 * scale(0)`, and off-screen positioning (`left`, `top`, `right`, `bottom`, `margin-*`,
 * `text-indent` at least 999 px, or 99 em, negative; a translation that far either way).
 *
 * Not covered (said so in the design note): CSS that hides through the cascade in ways a rule's
 * own text does not show (selectors that fail to parse here, `@import`ed or external style
 * sheets, conditional `@media` blocks, text the colour of its background).
 */

/** The slice of the DOM this file uses (the engine compiles without the DOM's types). */
export interface HidableElement {
  readonly tagName: string;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  remove(): void;
}

export interface HidableDocument {
  querySelectorAll(selector: string): ArrayLike<HidableElement> & Iterable<HidableElement>;
}

/** Removes from `document` every element a reader would not see (see the file's comment); returns how many. */
export function removeHiddenElements(document: HidableDocument, styleSheets: readonly string[]): number {
  const hidden = new Set<HidableElement>();
  for (const element of document.querySelectorAll("[hidden], [aria-hidden], dialog, [style]")) {
    if (isHiddenByMarkup(element)) hidden.add(element);
  }
  for (const selector of hidingSelectors(styleSheets)) {
    let matched: Iterable<HidableElement>;
    try {
      matched = document.querySelectorAll(selector);
    } catch {
      // A selector this DOM cannot evaluate (a pseudo-class of a browser): no element known hidden by it.
      continue;
    }
    for (const element of matched) hidden.add(element);
  }
  for (const element of hidden) element.remove();
  return hidden.size;
}

function isHiddenByMarkup(element: HidableElement): boolean {
  if (element.hasAttribute("hidden")) return true;
  if (element.getAttribute("aria-hidden")?.trim().toLowerCase() === "true") return true;
  if (element.tagName.toLowerCase() === "dialog" && !element.hasAttribute("open")) return true;
  const style = element.getAttribute("style");
  return style !== null && hides(style);
}

/** The selectors of the style sheets' rules whose declarations hide what they match. */
export function hidingSelectors(styleSheets: readonly string[]): string[] {
  const selectors: string[] = [];
  for (const sheet of styleSheets) {
    for (const { selector, declarations } of simpleRules(sheet.replace(/\/\*[\s\S]*?\*\//g, ""))) {
      if (hides(declarations)) selectors.push(selector);
    }
  }
  return selectors;
}

interface Rule {
  readonly selector: string;
  readonly declarations: string;
}

/** `@media` blocks whose rules apply on every screen. */
const UNCONDITIONAL_MEDIA = /^@media\s+(all|screen)\s*$/i;

/**
 * The style rules of `css` at top level and in unconditional `@media` blocks; other at-rules'
 * blocks are skipped. One pass over the text, tracking brace depth.
 */
function simpleRules(css: string): Rule[] {
  const rules: Rule[] = [];
  let depth = 0;
  /** Depth at which rules apply: 0, or 1 inside an unconditional `@media`. */
  let ruleDepth = 0;
  let start = 0;
  let prelude = "";
  for (let i = 0; i < css.length; i++) {
    const char = css[i];
    if (char === "{") {
      const text = css.slice(start, i).trim();
      if (depth === 0 && UNCONDITIONAL_MEDIA.test(text)) ruleDepth = 1;
      prelude = text;
      depth++;
      start = i + 1;
    } else if (char === "}") {
      if (depth === ruleDepth + 1 && prelude !== "" && !prelude.startsWith("@")) {
        rules.push({ selector: prelude, declarations: css.slice(start, i) });
      }
      depth = Math.max(0, depth - 1);
      if (depth === 0) ruleDepth = 0;
      prelude = "";
      start = i + 1;
    } else if (char === ";" && depth === 0) start = i + 1;
  }
  return rules;
}

/** Whether CSS declarations (`display: none; color: red`) hide their element. */
export function hides(declarations: string): boolean {
  const style = new Map<string, string>();
  for (const declaration of declarations.split(";")) {
    const colon = declaration.indexOf(":");
    if (colon < 0) continue;
    const name = declaration.slice(0, colon).trim().toLowerCase();
    const value = declaration
      .slice(colon + 1)
      .replace(/!\s*important/i, "")
      .trim()
      .toLowerCase()
      .replace(/\s+/g, " ");
    style.set(name, value);
  }
  const is = (name: string, ...values: string[]) => values.includes(style.get(name) ?? "");
  if (is("display", "none") || is("visibility", "hidden", "collapse") || is("color", "transparent")) return true;
  if (isZero(style.get("opacity")) || isZero(style.get("font-size")) || fontShorthandIsZero(style.get("font"))) return true;
  const clipped = is("overflow", "hidden", "clip") || is("overflow-x", "hidden", "clip") || is("overflow-y", "hidden", "clip");
  if (clipped && ["width", "height", "max-width", "max-height"].some((name) => isZero(style.get(name)))) return true;
  if (/^rect\(/.test(style.get("clip") ?? "") || /^(inset\((50|100)%|circle\(0)/.test(style.get("clip-path") ?? "")) return true;
  if (/scale[xy]?\(\s*0(\.0+)?\s*[,)]/.test(style.get("transform") ?? "")) return true;
  const offsets = ["left", "top", "right", "bottom", "margin-left", "margin-top", "text-indent"];
  if (offsets.some((name) => isFarOff(style.get(name), "negative"))) return true;
  const translated = /translate[xy3d]*\(([^)]*)\)/.exec(style.get("transform") ?? "")?.[1];
  return translated !== undefined && translated.split(",").some((part) => isFarOff(part.trim(), "either"));
}

/** `0`, `0px`, `0.0em`, `0%`: a length or number that is zero. */
function isZero(value: string | undefined): boolean {
  return value !== undefined && /^[+-]?0*(\.0+)?([a-z]+|%)?$/.test(value) && /\d/.test(value);
}

/** `font: 0/0 a` and the like: the shorthand's size is zero. */
function fontShorthandIsZero(value: string | undefined): boolean {
  if (value === undefined) return false;
  const size = value.split(" ").find((token) => /^[+-]?\d/.test(token) || /^\.\d/.test(token));
  return size !== undefined && isZero(size.split("/")[0]);
}

/** Off-screen distances: at least this far, a box is out of any viewport. */
const FAR_PX = 999;
const FAR_EM = 99;

/**
 * A length that puts its box out of any viewport (`-9999px`, `-100em`). An offset must be
 * negative (`left: 1200px` is a sidebar on a wide screen); a translation may go either way.
 */
function isFarOff(value: string | undefined, direction: "negative" | "either"): boolean {
  const match = /^([+-]?\d*\.?\d+)(px|em|rem|vw|vh|%|pt)?$/.exec(value ?? "");
  if (match === null) return false;
  const number = Number(match[1]);
  if (direction === "negative" && number >= 0) return false;
  const magnitude = Math.abs(number);
  const unit = match[2] ?? "px";
  return unit === "px" || unit === "pt" ? magnitude >= FAR_PX : magnitude >= FAR_EM;
}
