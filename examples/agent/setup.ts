/** What both examples share: the Tapedeck client, the toolset, the agent tools and the system prompt. */
import { Tapedeck, type AgentTools } from "@tapedeck/sdk";

export async function agentSetup(agent: string): Promise<{ agentTools: AgentTools; system: string }> {
  const apiKey = process.env.TAPEDECK_API_KEY;
  if (!apiKey) throw new Error("Set TAPEDECK_API_KEY to the key `tapedeck serve` printed (or one from `tapedeck keys create`).");
  const tapedeck = new Tapedeck({ baseUrl: process.env.TAPEDECK_URL ?? "http://127.0.0.1:7700", apiKey });
  const allow = (process.env.TAPEDECK_HTTP_ALLOW ?? "api.github.com")
    .split(",")
    .map((host) => host.trim())
    .filter(Boolean);
  const toolset = await tapedeck.toolsets.create({ http: { allow } });
  const conversation = `conv-${Date.now()}`;
  const agentTools = tapedeck.namespace(process.env.TAPEDECK_USER ?? "example-user").agentTools({
    toolset: toolset.id,
    labels: { agent, conversation },
  });
  const system = [
    "You answer questions by writing one TypeScript script and running it with run_script: the script",
    "makes every call the task needs, in loops and in parallel, and returns only the answer.",
    "If a run fails, read the error, fix the script and call retry_run: calls already made are reused.",
    "",
    "What scripts can use:",
    toolset.declarations.prompt,
  ].join("\n");
  return { agentTools, system };
}
