import { schemaFor } from "./schema-for.js";

/** Run-bound webhook URLs (`webhook(name)` in a script): `POST /hooks/:token`, whose JSON body becomes the signal. */
export interface HookParams {
  /** The unguessable token of the URL: the capability, instead of an API key. */
  readonly token: string;
}

export const hookParams = schemaFor<HookParams>()({
  type: "object",
  properties: { token: { type: "string", minLength: 1, maxLength: 200 } },
  required: ["token"],
  additionalProperties: false,
});

/** `POST /hooks/:token` answers: the signal was delivered to the run. */
export interface HookDelivered {
  readonly delivered: true;
}

export const hookDelivered = schemaFor<HookDelivered>()({ type: "object", properties: { delivered: { type: "boolean" } }, required: ["delivered"] });
