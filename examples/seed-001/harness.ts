/**
 * What seed 001's samples take from the harness around them: the end user the runs belong to,
 * the conversation, the question, and the system prompt the other tabs call `instructions`.
 * Environment: as examples/agent (TAPEDECK_URL, TAPEDECK_API_KEY, TAPEDECK_USER).
 */
import type { RegisteredToolset } from "@tapedeck/sdk";

export const user = { id: process.env.TAPEDECK_USER ?? "seed-user" };
export const conversation = { id: process.env.TAPEDECK_CONVERSATION ?? `conv-${Date.now()}` };
export const question = process.argv.slice(2).join(" ") || "How many stars does nodejs/node have?";

/** The Anthropic tab's system prompt, for the tabs that use one without saying how it is made. */
export function instructionsFor(toolset: RegisteredToolset): string {
  return [
    "You answer questions about GitHub repositories.",
    "Solve each task by writing one TypeScript script and running it with run_script: the script",
    "makes every call the task needs, in loops and in parallel, and returns only the answer.",
    "If a run fails, read the error, fix the script and call retry_run: calls already made are reused.",
    "",
    "What scripts can use:",
    toolset.declarations.prompt,
  ].join("\n");
}
