import type { Labels } from "@tapedeck/protocol/api";

/**
 * The idempotency key of what one tool call of the model starts or sends: a SHA-256 of the
 * agent's labels (sorted, so their order does not matter), the tool and the model's tool call
 * id. The same tool call handled twice gets the same key; an agent with other labels, another.
 * Tool call ids are unique within a conversation (some APIs' only there): labels should name the
 * conversation, as seed 001's examples do.
 * Web Crypto, so it works wherever the SDK does.
 */
export async function agentToolKey(labels: Labels, tool: string, toolCallId: string): Promise<string> {
  // Without an id, two different calls would share a key (and one of them would get the other's run).
  if (typeof toolCallId !== "string" || toolCallId === "")
    throw new TypeError(`agentTools: ${tool} needs the model's tool call id ({ toolCallId }): it is the call's idempotency key.`);
  const sorted = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const bytes = new TextEncoder().encode(JSON.stringify(["tapedeck agent tool call v1", sorted, tool, toolCallId]));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `agent_${[...digest].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}
