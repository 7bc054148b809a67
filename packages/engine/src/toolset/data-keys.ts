/**
 * Whether an object key is data rather than a name a program was written with: an email, an id,
 * a hash, a number, a date, a path, a header name. Observed result types (`observed-shape.ts`)
 * keep only names as property names, because a declaration is shown to every user of the
 * toolset and to the model: a key that is data would copy one user's data into everyone's
 * prompt, and would describe one result instead of the tool.
 *
 * A judgement on one key, from its shape only; keys that look like names but are data (user
 * names used as keys) are caught by the shape's merge rule instead (keys that never recur).
 */

/** A name a program writes as a property: an identifier. */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** Longer than this, a key is a sentence, a token or a digest, not a property name. */
const MAX_NAME_LENGTH = 40;
/** Digits in a name: `utf8`, `sha256`, `line2`; four or more make an id (`user_12345`, `a1b2c3d4`). */
const MAX_NAME_DIGITS = 3;

export function looksLikeData(key: string): boolean {
  if (key === "__proto__" || key.length > MAX_NAME_LENGTH || !IDENTIFIER.test(key)) return true;
  let digits = 0;
  let upper = false;
  let lower = false;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
    else if (c >= 65 && c <= 90) upper = true;
    else if (c >= 97 && c <= 122) lower = true;
  }
  if (digits > MAX_NAME_DIGITS) return true;
  // A hex digest or id (`deadbeef01`): eight or more hex characters, digits among them.
  if (key.length >= 8 && digits > 0 && /^[0-9a-fA-F]+$/.test(key)) return true;
  // A random token (`Xk9pQz2mLw7R`): long, both cases and digits, no word separators.
  return key.length >= 12 && digits >= 2 && upper && lower && !key.includes("_");
}
