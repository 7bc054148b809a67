import { sensitiveParamsProblems } from "./sensitive-params.js";
import { ToolsetSpecError } from "./spec-error.js";

/**
 * Checks a toolset policy's `sensitiveParams` as a file writes it: a list of JSON pointers
 * (RFC 6901) into the tool's arguments, each naming a part (not the whole arguments). A pointer
 * that does not parse would redact nothing, and a secret the author meant to hide would be
 * journaled in clear: so the registration is refused, naming the pointer.
 */
export function checkSensitiveParams(value: unknown, where: string): void {
  if (value === undefined) return;
  if (!Array.isArray(value) || value.some((pointer) => typeof pointer !== "string"))
    throw new ToolsetSpecError(`${where}.sensitiveParams must be a list of JSON pointers into the tool's arguments, such as ["/password", "/card/number"]`);
  const problems = sensitiveParamsProblems(value as string[]);
  if (problems.length > 0) throw new ToolsetSpecError(problems.map((problem) => `${where}.${problem}`).join("; "));
}
