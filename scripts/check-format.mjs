// Checks the formatting of the files git tracks, nothing else: `prettier --check .` also read
// untracked scratch files (a probe script, a log) and failed `npm run check` for them.
// `.prettierignore` still applies to the files named here. Usage: node scripts/check-format.mjs
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";

const tracked = spawnSync("git", ["ls-files", "-z"], { encoding: "utf8" });
if (tracked.status !== 0) {
  console.error(`check-format: git ls-files failed (run it in the repository): ${tracked.stderr}`);
  process.exit(2);
}
// A tracked file deleted in the work tree is not there to check (git status shows it).
const files = tracked.stdout.split("\0").filter((file) => file !== "" && existsSync(file));
const prettier = createRequire(import.meta.url).resolve("prettier/bin/prettier.cjs");
// --ignore-unknown: tracked files prettier has no parser for (a .wasm, a .sh) are not its to check.
const checked = spawnSync(process.execPath, [prettier, "--check", "--ignore-unknown", ...files], { stdio: "inherit" });
process.exit(checked.status ?? 1);
