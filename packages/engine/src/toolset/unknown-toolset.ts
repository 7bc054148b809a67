import { EngineError } from "../errors.js";

/**
 * The `not_found` of a toolset id the engine has not registered. The server answers a toolset
 * outside a caller's scope with this very error, so the two cannot be told apart.
 */
export function unknownToolset(id: string): EngineError {
  return new EngineError("not_found", `No toolset ${id}. Register it first (tapedeck toolset register <file>).`);
}
