/**
 * Regular expressions of approval rules, run by a linear-time engine: a rule's pattern comes
 * from a harness author, the text it is tested against from a model, and V8's backtracking
 * engine takes exponential time on patterns like `(a|a)*b` — a single call's arguments could
 * then hold the process. Refusing "dangerous" patterns instead needs a ReDoS detector, which is a
 * heuristic (false negatives let a bad pattern through); matching in linear time needs no guess.
 *
 * How: the pattern is checked by V8 (`new RegExp(pattern, flags + "u")`, so only valid
 * JavaScript patterns are accepted, with their meaning), parsed into its structure (sequence,
 * `|`, groups, quantifiers, `^ $ \b \B`), and compiled to an NFA run as a Pike VM: every position
 * of the text is visited once, with at most one thread per instruction, so a test costs
 * O(text length × program size) whatever the pattern. Each atom that consumes one character (a
 * literal, `.`, a class `[…]`, `\d \w \s \p{…}` and their negations, escapes) is tested by V8
 * itself, as a one-character regex: one character cannot backtrack, and its meaning (case
 * folding under `i`, Unicode properties, `.` under `s`) is exactly JavaScript's.
 *
 * Invariants:
 * - `compileRegex` never throws; what it refuses comes back as a `problem` saying what to write.
 * - A compiled regex answers `test` as ECMAScript specifies `new RegExp(source, flags + "u").test`
 *   (checked against V8 by a differential property test), for every pattern it accepts. One
 *   known difference with V8 itself: V8's search also tries positions inside a surrogate pair,
 *   where a zero-width `\B` can match (`/\B/u.test("a😀a")`); the specification, and this
 *   engine, never look inside a character.
 * - Refused: backreferences (`\1`, `\k<name>`) and lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`),
 *   which no linear-time engine can run; the flags `g` and `y` (they make `test` stateful) and `v`;
 *   patterns longer than `MAX_PATTERN_LENGTH` or compiling to more than `MAX_PROGRAM` instructions.
 * - Texts longer than `MAX_SUBJECT_LENGTH` are not tested: `test` says so (`tooLong`), and the
 *   approval rule that asked cannot be evaluated (it denies).
 */

/** Longest pattern accepted: rules match operation names and short fields, not documents. */
export const MAX_PATTERN_LENGTH = 1000;
/** Most NFA instructions a pattern may compile to (counted repetitions `{m,n}` multiply it): bounds the cost per character. */
export const MAX_PROGRAM = 2000;
/** Longest text (UTF-16 code units) tested: with `MAX_PROGRAM`, a test takes at most about 10^8 steps. */
export const MAX_SUBJECT_LENGTH = 64 * 1024;

/** Flags accepted: `i` (case-insensitive), `m` (`^ $` at line ends), `s` (`.` matches line ends), `u` (always on). */
const ALLOWED_FLAGS = /^[imsu]*$/;

export interface LinearRegex {
  readonly source: string;
  readonly flags: string;
  /** Whether the pattern matches somewhere in `text`; `tooLong` when `text` is over `MAX_SUBJECT_LENGTH`. */
  test(text: string): boolean | "tooLong";
}

/** A compiled pattern, or why it is refused and which part (`pattern` or `flags`) is wrong. */
export type CompiledRegex =
  { readonly ok: true; readonly regex: LinearRegex } | { readonly ok: false; readonly field: "pattern" | "flags"; readonly problem: string };

export function compileRegex(source: string, flags = ""): CompiledRegex {
  if (typeof source !== "string") return refuse("must be a string");
  if (source.length > MAX_PATTERN_LENGTH) return refuse(`is longer than ${MAX_PATTERN_LENGTH} characters`);
  if (!ALLOWED_FLAGS.test(flags) || new Set(flags).size !== flags.length) {
    return refuse(`has flags ${JSON.stringify(flags)}: only "i", "m", "s" and "u" are allowed (each at most once; "u" is always on)`, "flags");
  }
  const jsFlags = [...new Set(`${flags}u`)].sort().join("");
  try {
    new RegExp(source, jsFlags);
  } catch (error) {
    return refuse(`is not a valid regular expression: ${(error as Error).message}`);
  }
  const parsed = new Parser(source, jsFlags.replace("m", "")).parse();
  if (typeof parsed === "string") return refuse(parsed);
  const program = compileProgram(parsed);
  if (program === undefined) return refuse(`is too large: it compiles to more than ${MAX_PROGRAM} steps (counted repetitions like {2,50} multiply the size)`);
  const multiline = flags.includes("m");
  const word = oneCharTester("\\w", jsFlags.replace("m", ""));
  return {
    ok: true,
    regex: {
      source,
      flags: jsFlags,
      test: (text) => (text.length > MAX_SUBJECT_LENGTH ? "tooLong" : run(program, Array.from(text, codePoint), multiline, word)),
    },
  };
}

function refuse(problem: string, field: "pattern" | "flags" = "pattern"): CompiledRegex {
  return { ok: false, field, problem };
}

function codePoint(char: string): number {
  return char.codePointAt(0)!;
}

// ---------------------------------------------------------------------------------------------
// Structure

type Assertion = "start" | "end" | "wordBoundary" | "notWordBoundary";

type RegexNode =
  | { readonly kind: "empty" }
  /** Consumes one character that `test` accepts. */
  | { readonly kind: "char"; readonly test: (cp: number) => boolean }
  | { readonly kind: "assert"; readonly what: Assertion }
  | { readonly kind: "concat"; readonly items: readonly RegexNode[] }
  | { readonly kind: "alt"; readonly options: readonly RegexNode[] }
  | { readonly kind: "repeat"; readonly node: RegexNode; readonly min: number; readonly max: number };

const EMPTY: RegexNode = { kind: "empty" };

/**
 * Parses a pattern V8 has accepted (so syntax errors are not re-diagnosed here), in Unicode
 * mode. Returns the structure, or why the pattern is refused.
 */
class Parser {
  private pos = 0;

  constructor(
    private readonly source: string,
    private readonly atomFlags: string,
  ) {}

  parse(): RegexNode | string {
    try {
      const node = this.alternation();
      if (this.pos < this.source.length) throw new Refusal(`has an unexpected ")" at character ${this.pos + 1}`);
      return node;
    } catch (error) {
      if (error instanceof Refusal) return error.message;
      throw error;
    }
  }

  private peek(offset = 0): string | undefined {
    return this.source[this.pos + offset];
  }

  private alternation(): RegexNode {
    const options = [this.sequence()];
    while (this.peek() === "|") {
      this.pos++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0]! : { kind: "alt", options };
  }

  private sequence(): RegexNode {
    const items: RegexNode[] = [];
    while (this.pos < this.source.length && this.peek() !== "|" && this.peek() !== ")") items.push(this.quantified());
    return items.length === 0 ? EMPTY : items.length === 1 ? items[0]! : { kind: "concat", items };
  }

  private quantified(): RegexNode {
    let node = this.atom();
    for (;;) {
      const bounds = this.quantifier();
      if (bounds === undefined) return node;
      if (this.peek() === "?") this.pos++; // lazy: the same set of matches, so the same answer to `test`
      node = { kind: "repeat", node, min: bounds.min, max: bounds.max };
    }
  }

  private quantifier(): { min: number; max: number } | undefined {
    const char = this.peek();
    if (char === "*" || char === "+" || char === "?") {
      this.pos++;
      return { min: char === "+" ? 1 : 0, max: char === "?" ? 1 : Infinity };
    }
    if (char !== "{") return undefined;
    const match = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.pos));
    if (match === null) return undefined; // V8 (Unicode mode) rejected a lone "{" already
    this.pos += match[0].length;
    const min = Number(match[1]);
    const max = match[2] === undefined ? min : match[3] === "" ? Infinity : Number(match[3]);
    if (min > MAX_PROGRAM || (max !== Infinity && max > MAX_PROGRAM)) {
      throw new Refusal(`repeats something ${match[0]} times: at most ${MAX_PROGRAM} repetitions`);
    }
    return { min, max };
  }

  private atom(): RegexNode {
    const start = this.pos;
    const char = this.peek()!;
    switch (char) {
      case "(":
        return this.group();
      case "^":
        this.pos++;
        return { kind: "assert", what: "start" };
      case "$":
        this.pos++;
        return { kind: "assert", what: "end" };
      case "[":
        this.skipClass();
        return this.charAtom(start);
      case "\\":
        return this.escape(start);
      default:
        // One code point: an astral character is two code units of the source.
        this.pos += String.fromCodePoint(this.source.codePointAt(this.pos)!).length;
        return this.charAtom(start);
    }
  }

  private group(): RegexNode {
    this.pos++;
    if (this.peek() === "?") {
      const next = this.peek(1);
      if (next === ":") this.pos += 2;
      else if (next === "<" && this.peek(2) !== "=" && this.peek(2) !== "!") this.pos = this.source.indexOf(">", this.pos) + 1;
      else
        throw new Refusal(
          `uses lookaround ("(?${next}${next === "<" ? this.peek(2)! : ""}"): a linear-time engine cannot run it; match the text itself instead`,
        );
    }
    const inner = this.alternation();
    this.pos++; // ")": V8 checked the parentheses balance
    return inner;
  }

  private escape(start: number): RegexNode {
    const next = this.peek(1)!;
    if (next === "b" || next === "B") {
      this.pos += 2;
      return { kind: "assert", what: next === "b" ? "wordBoundary" : "notWordBoundary" };
    }
    if (/[1-9]/.test(next) || next === "k") throw new Refusal(`uses a backreference ("\\${next}"): a linear-time engine cannot run it`);
    const rest = this.source.slice(this.pos + 1);
    // Escapes longer than one character: \u{…}, \uXXXX (a pair of them is one astral character), \xXX, \cX, \p{…}.
    const long = /^(u\{[0-9A-Fa-f]+\}|u[0-9A-Fa-f]{4}(\\u[0-9A-Fa-f]{4})?|x[0-9A-Fa-f]{2}|c[A-Za-z]|[pP]\{[^}]*\})/.exec(rest);
    if (long !== null && long[2] !== undefined && !isSurrogatePair(long[0])) {
      this.pos += 6; // a \uXXXX not followed by its low half: one character
    } else {
      this.pos += 1 + (long?.[0].length ?? String.fromCodePoint(rest.codePointAt(0)!).length);
    }
    return this.charAtom(start);
  }

  /** Moves past a class `[…]` (V8 checked that it is closed). */
  private skipClass(): void {
    this.pos++;
    if (this.peek() === "^") this.pos++;
    while (this.peek() !== "]") this.pos += this.peek() === "\\" ? 2 : 1;
    this.pos++;
  }

  /** The atom from `start` to here, which consumes exactly one character, tested by V8. */
  private charAtom(start: number): RegexNode {
    return { kind: "char", test: oneCharTester(this.source.slice(start, this.pos), this.atomFlags) };
  }
}

class Refusal extends Error {}

function isSurrogatePair(escape: string): boolean {
  const high = parseInt(escape.slice(1, 5), 16);
  const low = parseInt(escape.slice(7, 11), 16);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}

/**
 * Whether one code point matches a one-character atom, answered by V8: the atom alone, anchored,
 * against one character. ASCII answers are cached per atom (most texts are mostly ASCII).
 */
function oneCharTester(atom: string, flags: string): (cp: number) => boolean {
  const regex = new RegExp(`^(?:${atom})$`, flags);
  const ascii = new Int8Array(128); // 0: not asked yet, 1: no, 2: yes
  return (cp) => {
    if (cp < 128) {
      if (ascii[cp] === 0) ascii[cp] = regex.test(String.fromCharCode(cp)) ? 2 : 1;
      return ascii[cp] === 2;
    }
    return regex.test(String.fromCodePoint(cp));
  };
}

// ---------------------------------------------------------------------------------------------
// Program

type Instruction =
  | { op: "char"; test: (cp: number) => boolean; next: number }
  | { op: "split"; a: number; b: number }
  | { op: "jump"; to: number }
  | { op: "assert"; what: Assertion; next: number }
  | { op: "match" };

class TooLarge extends Error {}

/** The NFA of `node`, ending in `match`; `undefined` when it would exceed `MAX_PROGRAM` instructions. */
function compileProgram(node: RegexNode): Instruction[] | undefined {
  const program: Instruction[] = [];
  const emit = (instruction: Instruction): number => {
    if (program.length >= MAX_PROGRAM) throw new TooLarge();
    program.push(instruction);
    return program.length - 1;
  };
  // Each emitter leaves its exits pointing at `program.length` when it returns (the next instruction).
  const patchNext = (at: number): void => {
    const instruction = program[at]!;
    if (instruction.op === "char" || instruction.op === "assert") instruction.next = program.length;
    else if (instruction.op === "jump") instruction.to = program.length;
  };
  const compile = (n: RegexNode): void => {
    switch (n.kind) {
      case "empty":
        return;
      case "char":
        patchNext(emit({ op: "char", test: n.test, next: -1 }));
        return;
      case "assert":
        patchNext(emit({ op: "assert", what: n.what, next: -1 }));
        return;
      case "concat":
        for (const item of n.items) compile(item);
        return;
      case "alt": {
        const jumps: number[] = [];
        n.options.forEach((option, i) => {
          if (i === n.options.length - 1) return compile(option);
          const split = emit({ op: "split", a: -1, b: -1 });
          (program[split] as { a: number }).a = program.length;
          compile(option);
          jumps.push(emit({ op: "jump", to: -1 }));
          (program[split] as { b: number }).b = program.length;
        });
        for (const jump of jumps) (program[jump] as { to: number }).to = program.length;
        return;
      }
      case "repeat": {
        for (let i = 0; i < n.min; i++) compile(n.node);
        if (n.max === Infinity) {
          // L: split(body, out); body; jump L
          const split = emit({ op: "split", a: -1, b: -1 });
          (program[split] as { a: number }).a = program.length;
          compile(n.node);
          emit({ op: "jump", to: split });
          (program[split] as { b: number }).b = program.length;
          return;
        }
        const splits: number[] = [];
        for (let i = n.min; i < n.max; i++) {
          const split = emit({ op: "split", a: -1, b: -1 });
          (program[split] as { a: number }).a = program.length;
          splits.push(split);
          compile(n.node);
        }
        for (const split of splits) (program[split] as { b: number }).b = program.length;
        return;
      }
    }
  };
  try {
    compile(node);
    emit({ op: "match" });
  } catch (error) {
    if (error instanceof TooLarge) return undefined;
    throw error;
  }
  return program;
}

const LINE_TERMINATORS = new Set([0x0a, 0x0d, 0x2028, 0x2029]);

/**
 * Pike VM: the threads alive at each position, one per instruction at most, advanced together
 * one character at a time; a new thread starts at every position (an unanchored search).
 */
function run(program: readonly Instruction[], text: readonly number[], multiline: boolean, isWord: (cp: number) => boolean): boolean {
  const seen = new Uint32Array(program.length);
  let generation = 0;
  let current: number[] = [];
  let next: number[] = [];
  const stack: number[] = [];

  const holds = (what: Assertion, at: number): boolean => {
    switch (what) {
      case "start":
        return at === 0 || (multiline && LINE_TERMINATORS.has(text[at - 1]!));
      case "end":
        return at === text.length || (multiline && LINE_TERMINATORS.has(text[at]!));
      case "wordBoundary":
      case "notWordBoundary": {
        const boundary = (at > 0 && isWord(text[at - 1]!)) !== (at < text.length && isWord(text[at]!));
        return what === "wordBoundary" ? boundary : !boundary;
      }
    }
  };

  /** Adds the thread at `pc` (following jumps, splits and assertions at `at`) to `list`; true if one reaches `match`. */
  const add = (list: number[], pc: number, at: number): boolean => {
    stack.push(pc);
    while (stack.length > 0) {
      const at_pc = stack.pop()!;
      if (seen[at_pc] === generation) continue;
      seen[at_pc] = generation;
      const instruction = program[at_pc]!;
      switch (instruction.op) {
        case "match":
          stack.length = 0;
          return true;
        case "jump":
          stack.push(instruction.to);
          break;
        case "split":
          stack.push(instruction.b, instruction.a);
          break;
        case "assert":
          if (holds(instruction.what, at)) stack.push(instruction.next);
          break;
        case "char":
          list.push(at_pc);
          break;
      }
    }
    return false;
  };

  generation++;
  for (let at = 0; ; at++) {
    if (add(current, 0, at)) return true;
    if (at === text.length) return false;
    generation++;
    const cp = text[at]!;
    for (const pc of current) {
      const instruction = program[pc] as { test: (cp: number) => boolean; next: number };
      if (instruction.test(cp) && add(next, instruction.next, at + 1)) return true;
    }
    [current, next] = [next, []];
  }
}
