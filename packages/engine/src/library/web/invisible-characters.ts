/**
 * Characters that a page's reader does not see but a model reads, removed from everything
 * web.fetch returns: a prompt-injection defence. Escape sequences (ESC, BEL and the other C0/C1
 * controls) can rewrite a terminal that shows the text; bidirectional controls (U+202E) make
 * text read differently than it displays; zero-width, tag (U+E0000–U+E007F) and variation
 * selector characters can carry a whole hidden message inside visible text ("ASCII smuggling").
 *
 * Kept: tab and line feed; U+FE0F and a zero-width joiner between two pictographs (emoji
 * sequences: 👨‍👩‍👧 stays one family). U+2028/U+2029 become a line feed; CR is dropped (a CRLF
 * is a line feed).
 */

const INVISIBLE = new RegExp(
  [
    // C0 controls but tab and line feed; DEL; C1 controls.
    "[\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F]",
    // Soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul fillers, Khmer inherent vowels, Mongolian selectors.
    "[\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F\\u3164\\uFFA0]",
    // Zero-width space and non-joiner, LRM/RLM; bidi embeddings and overrides; word joiner, invisible operators, isolates, deprecated format controls.
    "[\\u200B\\u200C\\u200E\\u200F\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u206F]",
    // A zero-width joiner that does not join two pictographs.
    "(?<!\\p{Extended_Pictographic}\\uFE0F?)\\u200D|\\u200D(?!\\p{Extended_Pictographic})",
    // Variation selectors 1–15 (16, U+FE0F, picks emoji presentation), zero-width no-break space, interlinear annotations.
    "[\\uFE00-\\uFE0E\\uFEFF\\uFFF9-\\uFFFB]",
    // Musical formatting, tag characters, variation selectors 17–256.
    "[\\u{1D173}-\\u{1D17A}\\u{E0000}-\\u{E007F}\\u{E0100}-\\u{E01EF}]",
  ].join("|"),
  "gu",
);

/** `text` without invisible and control characters (see above); the same string when it has none. */
export function withoutInvisibleCharacters(text: string): string {
  return text.replace(/[\u2028\u2029]/g, "\n").replace(INVISIBLE, "");
}
