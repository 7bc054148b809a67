import { toolFailure, type ToolFailure } from "@tapedeck/protocol";

/**
 * The failure of an `at_most_once` call that was interrupted: it is never sent again, whoever
 * sent it (the dispatcher for a script's call, the user tool source for a tool's invocation), so
 * the words for it are one.
 */
export function outcomeUnknown(reason: string): ToolFailure {
  return toolFailure(
    "outcomeUnknown",
    `The call was interrupted (${reason}) and its policy is at_most_once, so it was not sent again: it may or may not have taken effect. Check with the tool before trying again.`,
  );
}
