import { PRELUDE_FILENAME } from "./prelude.js";

/**
 * Stacks as the script's author should read them: QuickJS's own frames (`    at f (file:1:2)`),
 * without the prelude's frames (the sandbox's machinery, with no source map behind it) nor
 * trailing native ones, and at most `maxFrames` long (a stack overflow has ~1,500 identical frames).
 */
export function cleanStack(stack: string, maxFrames = 50): string {
  const frames = stack.split("\n").filter((line) => line.trim() !== "" && !line.includes(PRELUDE_FILENAME));
  // Frames of built-ins below the script's outermost frame (`at Promise (native)`) say nothing.
  while (frames.length > 0 && frames[frames.length - 1]?.endsWith("(native)") === true) frames.pop();
  const kept = frames.slice(0, maxFrames);
  if (frames.length > maxFrames) kept.push(`    … ${frames.length - maxFrames} more frames`);
  return kept.map((line) => `${line}\n`).join("");
}
