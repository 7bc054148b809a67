import type { JsonValue } from "@tapedeck/protocol";
import { canonicalJson } from "../util/canonical-json.js";
import { parsePointer, readPointer } from "../toolset/json-pointer.js";

/**
 * The one line an approver reads for a call waiting for approval: a template of an `ask` rule,
 * with `{/pointer}` replaced by that argument (`"TikTok {/tool_name}"` → `TikTok campaign_delete`),
 * `{tool}` by the tool's path, `{}` by all the arguments, and `{{` `}}` by braces. Without a
 * template: the tool's path and its arguments.
 *
 * Invariants: the line is at most `MAX_SUMMARY_LENGTH` characters (cut with "…", never inside a
 * surrogate pair) and has no line breaks or other control characters (an argument cannot forge a
 * second line of the approval prompt).
 */

/** What an approver reads fits one line of a list. */
export const MAX_SUMMARY_LENGTH = 200;
/** Templates are short sentences; this bounds the work of rendering one. */
export const MAX_TEMPLATE_LENGTH = 1000;

type Piece = { readonly text: string } | { readonly pointer: readonly string[]; readonly spelled: string } | { readonly tool: true };

/** A parsed template: its text and placeholders in order. */
export type TemplatePieces = readonly Piece[];

export type ParsedTemplate = { readonly ok: true; readonly pieces: TemplatePieces } | { readonly ok: false; readonly problem: string };

export function parseTemplate(template: string): ParsedTemplate {
  if (template.length > MAX_TEMPLATE_LENGTH) return { ok: false, problem: `is longer than ${MAX_TEMPLATE_LENGTH} characters` };
  const pieces: Piece[] = [];
  let text = "";
  for (let i = 0; i < template.length; i++) {
    const char = template[i]!;
    if ((char === "{" || char === "}") && template[i + 1] === char) {
      text += char;
      i++;
    } else if (char === "}") {
      return { ok: false, problem: `has a "}" at character ${i + 1} that closes nothing (write "}}" for a brace)` };
    } else if (char === "{") {
      const end = template.indexOf("}", i);
      if (end < 0) return { ok: false, problem: `has a "{" at character ${i + 1} that is never closed (write "{{" for a brace)` };
      const inside = template.slice(i + 1, end);
      if (text !== "") pieces.push({ text });
      text = "";
      if (inside === "tool") {
        pieces.push({ tool: true });
      } else {
        const parsed = parsePointer(inside);
        if (!parsed.ok)
          return { ok: false, problem: `has {${inside}}: a placeholder is {tool}, {} or a JSON Pointer like {/tool_name}; this one ${parsed.problem}` };
        pieces.push({ pointer: parsed.tokens, spelled: inside });
      }
      i = end;
    } else {
      text += char;
    }
  }
  if (text !== "") pieces.push({ text });
  return { ok: true, pieces };
}

/** The approver's line for a call of `toolPath` with `args`, from a parsed template (or the default). */
export function renderSummary(pieces: TemplatePieces | undefined, toolPath: string, args: JsonValue): string {
  if (pieces === undefined) return oneLine(`${toolPath} ${canonicalJson(args)}`);
  const parts = pieces.map((piece) => {
    if ("text" in piece) return piece.text;
    if ("tool" in piece) return toolPath;
    const found = readPointer(args, piece.pointer);
    if (!found.found) return `(no ${piece.spelled === "" ? "arguments" : piece.spelled})`;
    return typeof found.value === "string" ? found.value : canonicalJson(found.value);
  });
  return oneLine(parts.join(""));
}

/** `text` on one line (control characters become spaces) and cut to `MAX_SUMMARY_LENGTH`. */
export function oneLine(text: string): string {
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ");
  return cutText(flat, MAX_SUMMARY_LENGTH);
}

/** `text` cut to at most `max` UTF-16 code units, the cut marked with "…" and never between the halves of a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}
