import { defineTool, failure, result } from "../library-tool.js";
import { readLines } from "./read-lines.js";

/**
 * `files.read`: lines of a workspace file. Never refused for being large: the window is
 * clamped to `MAX_LINES` lines and `MAX_CHARS` characters, and the result says what was cut
 * and the offset to read on from.
 */

/** Lines returned by default and at most: a screenful of a long source file, many of a short one. */
export const MAX_LINES = 2_000;
/** Characters returned at most (IronClaw cuts tool output at 100,000 bytes). */
export const MAX_CHARS = 100_000;
/** A longer line is cut (minified code, a JSON file on one line): the rest is unreadable here, and the result says so. */
export const MAX_LINE_CHARS = 4_000;

interface ReadArgs {
  readonly path: string;
  readonly offset?: number;
  readonly limit?: number;
}

export const readFileTool = defineTool<ReadArgs, "workspace">({
  name: "read",
  description:
    `Reads a text file of the workspace: lines from \`offset\` (1-based, default 1), at most \`limit\` (default and most ${MAX_LINES}) ` +
    `and ${MAX_CHARS} characters. A larger file is never refused: the result gives \`nextOffset\` to read on from. ` +
    `Lines longer than ${MAX_LINE_CHARS} characters are cut. Paths are relative to the workspace (src/app.ts).`,
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string", minLength: 1, description: "Relative to the workspace." },
      offset: { type: "integer", minimum: 1, description: "The first line to read, 1-based. Default 1." },
      limit: { type: "integer", minimum: 1, description: `Lines to read. Default and most ${MAX_LINES}.` },
    },
    required: ["path"],
    additionalProperties: false,
  },
  outputSchema: {
    type: "object",
    properties: {
      path: { type: "string" },
      content: { type: "string", description: "The lines, joined with \\n." },
      startLine: { type: "integer" },
      endLine: { type: "integer", description: "The last line returned (startLine - 1 when none)." },
      totalLines: { type: "integer", description: "Present when the read reached the end of the file." },
      sizeBytes: { type: "integer" },
      nextOffset: { type: "integer", description: "Present when more lines follow: the offset to read on from." },
      note: { type: "string" },
    },
    required: ["path", "content", "startLine", "endLine", "sizeBytes"],
    additionalProperties: false,
  },
  risk: "low",
  approval: { kind: "never" },
  rateLimit: { perMinute: 120, perHour: 1_200 },
  needs: ["workspace"],
  execute: async ({ path, offset = 1, limit = MAX_LINES }, { workspace }) => {
    const opened = await workspace.openFile(path);
    if (!opened.ok) return failure(opened.code, opened.message);
    try {
      const window = await readLines(opened.file, { offset, limit: Math.min(limit, MAX_LINES), maxChars: MAX_CHARS, maxLineChars: MAX_LINE_CHARS });
      const notes: string[] = [];
      if (limit > MAX_LINES) notes.push(`limit ${limit} was lowered to ${MAX_LINES}, the most one read returns.`);
      if (window.binary) notes.push(`${opened.relative} is a binary file (${opened.size} bytes); its content is not shown.`);
      const endLine = offset + window.lines.length - 1;
      const more = !window.binary && window.totalLines === undefined;
      if (more) {
        const why = window.budgetSpent ? `the ${MAX_CHARS}-character budget was spent` : `${window.lines.length} lines were read`;
        notes.push(`More lines follow (${why}): call again with offset ${endLine + 1}.`);
      }
      if (window.totalLines !== undefined && offset > window.totalLines && !window.binary) {
        notes.push(`The file has ${window.totalLines} lines; offset ${offset} is past its end.`);
      }
      if (window.cutLines.length > 0) {
        const shown = window.cutLines.slice(0, 10).join(", ");
        notes.push(
          `Lines longer than ${MAX_LINE_CHARS} characters were cut (${shown}${window.cutLines.length > 10 ? ", …" : ""}); read them with the shell or json tools.`,
        );
      }
      return result({
        path: opened.relative,
        content: window.lines.join("\n"),
        startLine: offset,
        endLine,
        ...(window.totalLines === undefined ? {} : { totalLines: window.totalLines }),
        sizeBytes: opened.size,
        ...(more ? { nextOffset: endLine + 1 } : {}),
        ...(notes.length === 0 ? {} : { note: notes.join(" ") }),
      });
    } finally {
      await opened.file.close();
    }
  },
});
