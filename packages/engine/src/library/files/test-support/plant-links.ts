import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The secret a hostile path would reach: it must never appear in any result. */
export const SECRET = "TOP SECRET: outside the workspace";

/** Makes `outside` (with secret.txt) and, inside `root`, the links `path-corpus.ts` names. */
export function plantLinks(root: string, outside: string): void {
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(outside, "secret.txt"), SECRET);
  mkdirSync(join(root, "inner"), { recursive: true });
  writeFileSync(join(root, "inner", "real.txt"), "real");
  symlinkSync(outside, join(root, "evil"));
  symlinkSync(join(outside, "secret.txt"), join(root, "evil-file"));
  symlinkSync(join(outside, "nonexistent"), join(root, "dangling"));
  symlinkSync("loop", join(root, "loop"));
  symlinkSync(outside, join(root, "inner", "evil"));
  symlinkSync("inner/real.txt", join(root, "inside-link"));
}
