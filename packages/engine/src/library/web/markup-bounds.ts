import { Tokenizer } from "htmlparser2";

/**
 * Bounds a page's markup before it is parsed into a DOM: a page nested 100,000 deep took
 * linkedom 9 s to parse and turndown minutes to recurse through (and then overflowed its stack),
 * and a page of a few hundred thousand elements costs seconds of conversion per call.
 *
 * The page is tokenised once with htmlparser2's tokeniser (linkedom builds its DOM from the
 * same tokens) and its elements are nested as htmlparser2's parser nests them (void elements,
 * the end tags an open tag implies, `</p>`), on a stack of our own: the parser's own keeps its
 * top at index 0 and `unshift`s onto it, so its time grows with the square of the depth (the
 * 9 s above). What lies past the bounds is cut out of the text before linkedom sees it: each
 * element nested deeper than `MAX_DEPTH`, with all it holds, and everything from the element
 * after the first `MAX_ELEMENTS` on; so are end tags that close nothing (the parser searches its
 * whole stack for each). Cut whole, not unwrapped into text: unwrapped, a script's source or an
 * element hidden by CSS past the bound would become text the model reads. The result says what
 * was cut, so the reader knows.
 *
 * Invariants: linear in the page's length (each element is pushed and popped once; an end tag
 * finds its element by a count per name, then pops what it passes); a page within both bounds
 * comes back unchanged (the same string).
 */

/** Levels of elements kept: Blink's own cut-off (it flattens deeper elements), far deeper than any page written for people. */
export const MAX_DEPTH = 512;

/**
 * Elements converted: a long article has a few thousand, a 5 MiB page of short paragraphs
 * about 170,000 (9 s of conversion for 100,000 on a loaded 2-core machine). Past this the rest of the page is cut, which bounds the
 * DOM (and its conversion) whatever a page holds.
 */
export const MAX_ELEMENTS = 50_000;

export interface BoundedMarkup {
  readonly html: string;
  /** Elements (outermost ones) cut with what they hold for nesting past `maxDepth`. */
  readonly tooDeep: number;
  /** Whether the page was cut after `maxElements` elements. */
  readonly truncated: boolean;
}

export interface MarkupLimits {
  /** Default `MAX_DEPTH`. */
  readonly maxDepth?: number;
  /** Default `MAX_ELEMENTS`. */
  readonly maxElements?: number;
}

/** htmlparser2's void elements: never on the stack. */
const VOID = new Set([
  "area",
  "base",
  "basefont",
  "br",
  "col",
  "command",
  "embed",
  "frame",
  "hr",
  "img",
  "input",
  "isindex",
  "keygen",
  "link",
  "meta",
  "param",
  "source",
  "track",
  "wbr",
]);

const P = ["p"];
const FORM = ["input", "option", "optgroup", "select", "button", "datalist", "textarea"];
/** htmlparser2's `openImpliesClose`: opening the key closes open elements of these names at the top of the stack. */
const IMPLIES_CLOSE = new Map<string, ReadonlySet<string>>(
  Object.entries({
    tr: ["tr", "th", "td"],
    th: ["th"],
    td: ["thead", "th", "td"],
    body: ["head", "link", "script"],
    li: ["li"],
    select: FORM,
    input: FORM,
    output: FORM,
    button: FORM,
    datalist: FORM,
    textarea: FORM,
    option: ["option"],
    optgroup: ["optgroup", "option"],
    dd: ["dd", "dt"],
    dt: ["dd", "dt"],
    rt: ["rt", "rp"],
    rp: ["rt", "rp"],
    tbody: ["thead", "tbody"],
    tfoot: ["thead", "tbody"],
    ...Object.fromEntries(
      ["h1", "h2", "h3", "h4", "h5", "h6", "p", "address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset"]
        .concat(["figcaption", "figure", "footer", "form", "header", "hr", "main", "nav", "ol", "pre", "section", "table", "ul"])
        .map((name) => [name, P]),
    ),
  }).map(([name, closes]) => [name, new Set(closes)]),
);

/** Elements whose content is not HTML: `<x/>` closes itself there. */
const FOREIGN = new Set(["math", "svg"]);

/** `html` with what lies past the bounds cut out (see the file's comment). */
export function boundMarkup(html: string, limits: MarkupLimits = {}): BoundedMarkup {
  return new MarkupBounder(html, limits.maxDepth ?? MAX_DEPTH, limits.maxElements ?? MAX_ELEMENTS).run();
}

class MarkupBounder {
  /** Open elements, innermost last. */
  readonly #stack: string[] = [];
  /** How many of each name `#stack` holds: an end tag of a name not open is known at once. */
  readonly #open = new Map<string, number>();
  /** Start and end (exclusive) of each range to cut, ascending. */
  readonly #cuts: number[] = [];
  /** Open `svg`/`math` elements. */
  #foreign = 0;
  #elements = 0;
  #tooDeep = 0;
  /** While cutting a too-deep element: where it starts and the depth of its parent. */
  #cut: { readonly from: number; readonly depth: number } | undefined;
  /** The tag being read: its name and where its `<` is. */
  #tag = { name: "", start: 0 };
  /** Where the text is cut off (past `maxElements`), else its length. */
  #end: number;

  constructor(
    private readonly html: string,
    private readonly maxDepth: number,
    private readonly maxElements: number,
  ) {
    this.#end = html.length;
  }

  run(): BoundedMarkup {
    const ignore = () => {};
    const tokenizer = new Tokenizer(
      { xmlMode: false, decodeEntities: true },
      {
        onopentagname: (start, end) => this.#openName(start, end, tokenizer),
        onopentagend: (end) => this.#openEnd(end, false),
        onselfclosingtag: (end) => this.#openEnd(end, true),
        onclosetag: (start, end) => this.#close(start, end),
        onattribdata: ignore,
        onattribentity: ignore,
        onattribend: ignore,
        onattribname: ignore,
        oncdata: ignore,
        oncomment: ignore,
        ondeclaration: ignore,
        onend: ignore,
        onprocessinginstruction: ignore,
        ontext: ignore,
        ontextentity: ignore,
      },
    );
    tokenizer.write(this.html);
    if (this.#end === this.html.length) tokenizer.end();
    if (this.#cut !== undefined) this.#cuts.push(this.#cut.from, this.#end);
    const truncated = this.#end < this.html.length;
    if (this.#cuts.length === 0 && !truncated) return { html: this.html, tooDeep: 0, truncated: false };
    return { html: withoutRanges(this.html.slice(0, this.#end), this.#cuts), tooDeep: this.#tooDeep, truncated };
  }

  #openName(start: number, end: number, tokenizer: Tokenizer): void {
    const name = this.html.slice(start, end).toLowerCase();
    const tagStart = start - 1;
    const closes = IMPLIES_CLOSE.get(name);
    if (closes !== undefined) while (this.#stack.length > 0 && closes.has(this.#stack[this.#stack.length - 1]!)) this.#pop(tagStart);
    // Elements cut for their depth are not in the DOM: they do not count.
    if (this.#cut === undefined && this.#stack.length < this.maxDepth && ++this.#elements > this.maxElements) {
      this.#end = tagStart;
      tokenizer.pause();
      return;
    }
    this.#tag = { name, start: tagStart };
    if (this.#cut === undefined && this.#stack.length + 1 > this.maxDepth) {
      this.#cut = { from: tagStart, depth: this.#stack.length };
      this.#tooDeep++;
    }
  }

  /** The open tag ends at `end` (its `>`). */
  #openEnd(end: number, selfClosing: boolean): void {
    const { name } = this.#tag;
    if (VOID.has(name) || (selfClosing && this.#foreign > 0)) {
      if (this.#cut !== undefined && this.#cut.depth === this.#stack.length) this.#endCut(end + 1);
      return;
    }
    this.#stack.push(name);
    this.#open.set(name, (this.#open.get(name) ?? 0) + 1);
    if (FOREIGN.has(name)) this.#foreign++;
  }

  #close(start: number, end: number): void {
    const name = this.html.slice(start, end).toLowerCase();
    const tagStart = start - 2;
    if (VOID.has(name) || (this.#open.get(name) ?? 0) === 0) {
      // `</br>` and `</p>` make an element; any other end tag of nothing open is a no-op, cut
      // (a parser would search its whole stack for it).
      if (name !== "br" && name !== "p" && this.#cut === undefined) this.#cuts.push(tagStart, this.#tagEnd(end));
      return;
    }
    while (this.#stack.length > 0) {
      const top = this.#stack[this.#stack.length - 1]!;
      if (top === name) {
        this.#pop(this.#tagEnd(end));
        return;
      }
      this.#pop(tagStart);
    }
  }

  /** Closes the innermost element; `at`: where a cut that it ends stops. */
  #pop(at: number): void {
    const name = this.#stack.pop()!;
    this.#open.set(name, this.#open.get(name)! - 1);
    if (FOREIGN.has(name)) this.#foreign--;
    if (this.#cut !== undefined && this.#stack.length <= this.#cut.depth) this.#endCut(at);
  }

  #endCut(at: number): void {
    this.#cuts.push(this.#cut!.from, at);
    this.#cut = undefined;
  }

  /** Just past the `>` of the end tag whose name ends at `nameEnd`. */
  #tagEnd(nameEnd: number): number {
    const close = this.html.indexOf(">", nameEnd);
    return close < 0 ? this.html.length : close + 1;
  }
}

/** `text` without the ranges `[cuts[0], cuts[1])`, `[cuts[2], cuts[3])`, … (ascending; overlaps merged). */
function withoutRanges(text: string, cuts: readonly number[]): string {
  const parts: string[] = [];
  let from = 0;
  for (let i = 0; i < cuts.length; i += 2) {
    const start = cuts[i]!;
    const end = cuts[i + 1]!;
    if (start > from) parts.push(text.slice(from, start));
    from = Math.max(from, end);
  }
  parts.push(text.slice(from));
  return parts.join("");
}
