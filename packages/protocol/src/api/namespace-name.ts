import { NAMESPACE_MAX_LENGTH } from "./limits.js";

/**
 * The one rule for how a namespace (an end user's id) may be spelled, applied wherever one enters:
 * the HTTP API's fields and the namespace header (the server), `tapedeck keys create` and the
 * other CLI flags, `Tapedeck.namespace()` and the embedded client (the SDK), the engine's starts.
 *
 * Why: a namespace is compared byte for byte (it keys runs, tokens, credentials, workspaces and
 * memory), so two spellings a person reads as one name would be two end users, and an operator
 * acting as `"alice "` or `"alice\u200b"` would see, or be taken for, someone they did not mean.
 * So a name is refused, never silently changed, unless it has exactly one spelling: no space at
 * either end, no control character, no invisible character (zero-width, bidi controls, byte order
 * mark, fillers, variation selectors: Unicode's default-ignorable code points), no line or
 * paragraph separator, no lone surrogate, and unchanged by NFKC (full-width letters, ligatures and
 * decomposed accents have another, canonical spelling, which is the one to use).
 */

/** The JSON Schema `format` of a namespace field (`labels.ts`), checked with `namespaceProblem`. */
export const NAMESPACE_FORMAT = "tapedeck-namespace";

/** Characters no end user's id holds: controls, default-ignorable (invisible) code points, line and paragraph separators. */
const INVISIBLE = /[\p{Cc}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}]/u;

/** What is wrong with `name` as a namespace, as a phrase after the name ("ends with a space …"); undefined when it is one. */
export function namespaceProblem(name: string): string | undefined {
  if (name === "") return "is empty: give the end user's id";
  if (name.length > NAMESPACE_MAX_LENGTH) return `is ${name.length} characters long; a namespace has at most ${NAMESPACE_MAX_LENGTH}`;
  if (/\p{Cs}/u.test(name)) return "holds a lone UTF-16 surrogate, which is no character: send the id as valid Unicode";
  const invisible = INVISIBLE.exec(name);
  if (invisible !== null) return `holds the invisible or control character ${codePoint(invisible[0])} at index ${invisible.index}: remove it`;
  if (/^\s/u.test(name)) return `starts with a space (${codePoint(name[0]!)}): remove it`;
  if (/\s$/u.test(name)) return `ends with a space (${codePoint(name.at(-1)!)}): remove it`;
  const normal = name.normalize("NFKC");
  if (normal !== name) return `is not in Unicode normal form (NFKC): it is spelled ${quoteNamespace(normal)} there, so write that`;
  return undefined;
}

/** The sentence that refuses `name` given as `where` (`"body.namespace"`, `"the tapedeck-namespace header"`), or undefined when it is a namespace. */
export function namespaceError(name: string, where: string): string | undefined {
  const problem = namespaceProblem(name);
  if (problem === undefined) return undefined;
  return `${where} ${quoteNamespace(name)} ${problem}. An end user's id is compared exactly, so it must have only one spelling.`;
}

/** `name` in quotes with every invisible or control character written as `\u{…}`, so that what was refused can be seen. */
export function quoteNamespace(name: string): string {
  const shown = [...name.slice(0, 80)]
    .map((char) => (INVISIBLE.test(char) || /\p{Cs}/u.test(char) ? `\\u{${char.codePointAt(0)!.toString(16).toUpperCase()}}` : char))
    .join("");
  return `"${shown.replaceAll('"', '\\"')}${name.length > 80 ? "…" : ""}"`;
}

function codePoint(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}
