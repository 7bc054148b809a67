import type { Approval } from "../../toolset/approval.js";

/**
 * The default approval of the files tools that change files: the seed's "approval by rule".
 * Writing most files in a workspace is an ordinary, reversible step; these paths are asked for
 * because a write there runs code or exposes secrets later (a git hook, a CI workflow, a shell
 * script, an environment file). A toolset's policy can widen or drop the rules.
 */

interface AskedPath {
  /** Why, for the approver. */
  readonly reason: string;
  /** Matches the path (relative to the workspace) of `files.write`. */
  readonly path: string;
  /** Matches a file header line of a unified diff (`--- a/…`, `+++ b/…`, optionally a tab and a date) naming such a path. */
  readonly header: string;
}

export const ASKED_PATHS: readonly AskedPath[] = [
  { reason: "Changes git's own files (hooks there run on every commit)", path: "(^|/)\\.git/", header: "^(---|\\+\\+\\+) (.*/)?\\.git/" },
  {
    reason: "Changes a CI workflow (it runs with the repository's secrets)",
    path: "(^|/)\\.github/workflows/",
    header: "^(---|\\+\\+\\+) (.*/)?\\.github/workflows/",
  },
  { reason: "Writes a shell script", path: "\\.(sh|bash|zsh|fish|ps1|bat|cmd)$", header: "^(---|\\+\\+\\+) .*\\.(sh|bash|zsh|fish|ps1|bat|cmd)(\\t.*)?$" },
  { reason: "Writes an environment file (where secrets are kept)", path: "(^|/)\\.env($|\\.)", header: "^(---|\\+\\+\\+) (.*/)?\\.env(\\.[^/\\s]*)?(\\t.*)?$" },
];

/** `files.write`: ask before writing the paths above, send the rest. */
export const WRITE_APPROVAL: Approval = {
  kind: "rules",
  rules: ASKED_PATHS.map(({ path, reason }) => ({ action: "ask", when: [{ pointer: "/path", matches: path }], reason, summary: "Write {/path}" })),
  otherwise: { kind: "never" },
};

/** `files.patch`: the same paths, found in the patch's file headers. */
export const PATCH_APPROVAL: Approval = {
  kind: "rules",
  rules: ASKED_PATHS.map(({ header, reason }) => ({ action: "ask", when: [{ pointer: "/patch", matches: header, flags: "m" }], reason })),
  otherwise: { kind: "never" },
};
