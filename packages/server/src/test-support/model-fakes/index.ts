/**
 * Loopback fakes of model APIs (Anthropic Messages, OpenAI Responses, OpenAI Chat Completions)
 * that play scripted model turns, for tests that drive an agent loop with the official clients.
 * Anything exported here is the test-support surface; the rest of the folder is internal.
 */
export { startModelFake, type ModelFake } from "./model-fake.js";
export { readToolResults, type ModelApi } from "./model-apis.js";
export type { FakeFailure } from "./script-player.js";
export type { FakeRequest, JsonObject, ModelTurn, ScriptedToolCall, ScriptedToolSearch, ScriptedTurn, ToolResultSeen } from "./model-turn.js";
