// The route schemas carry OpenAPI fields (summary, tags, security): @fastify/swagger declares them on FastifySchema.
import type {} from "@fastify/swagger";
import { errorBody } from "@tapedeck/protocol/api";

/**
 * What the routes add to the API's JSON Schemas (`@tapedeck/protocol/api`, where every request
 * and answer is described once): the error answers each route documents. Schemas validate
 * requests (see `validation.ts`) and document answers in `GET /openapi.json`; answers are
 * serialised with plain `JSON.stringify`, so a response schema never drops or reshapes a field.
 */

/** The error answers a route documents, by status. */
export function errors(...statuses: number[]): Record<number, typeof errorBody> {
  return Object.fromEntries(statuses.map((status) => [status, errorBody]));
}
