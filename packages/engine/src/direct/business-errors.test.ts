import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { businessErrorOf, withBusinessError } from "./business-errors.js";
import { contentOfMcpResult, contentOfValue } from "./model-content.js";
import { anthropicToolResult, genericToolResult } from "./result-blocks.js";

const envelope = { code: "/code", message: "/message" };

describe("business errors in successful results", () => {
  it("turn a result whose JSON has a non-zero code into an isError result, the original text kept and one Upstream error line", () => {
    const body = '{"code": 40001, "message": "advertiser_id is invalid", "data": {}}';
    const content = withBusinessError(contentOfMcpResult({ content: [{ type: "text", text: body }] }), envelope);
    assert.equal(content.isError, true);
    assert.equal(genericToolResult(content).text, `${body}\nUpstream error 40001: advertiser_id is invalid`);
    assert.equal(anthropicToolResult("toolu_1", content).is_error, true);
  });

  it("leave code 0, no code, a non-numeric code, text that is not JSON, and errors already flagged as they are", () => {
    for (const text of ['{"code": 0, "message": "OK", "data": [1]}', '{"data": 1}', '{"code": "OK"}', "not json {", "[1, 2]"]) {
      const content = contentOfValue(text);
      assert.equal(withBusinessError(content, envelope), content, text);
    }
    const flagged = { parts: [{ type: "text" as const, text: '{"code": 5}' }], isError: true };
    assert.equal(withBusinessError(flagged, envelope), flagged);
    assert.equal(withBusinessError(contentOfValue('{"code": 5}'), null).isError, false, "no envelope, no translation");
  });

  it("read the envelope at any JSON Pointer, and codes written as numeric strings", () => {
    const nested = { code: "/error/code", message: "/error/detail/text" };
    const content = withBusinessError(contentOfValue('{"error": {"code": "-7", "detail": {"text": "quota"}}}'), nested);
    assert.match(genericToolResult(content).text, /\nUpstream error -7: quota$/);
  });

  it("find the error in a journaled value: a JSON string, an object, or a text part of { content }", () => {
    assert.deepEqual(businessErrorOf('{"code": 40001, "message": "bad"}', envelope), { code: 40001, message: "bad" });
    assert.deepEqual(businessErrorOf({ code: 3, message: { why: "x" } }, envelope), { code: 3, message: '{"why":"x"}' });
    assert.deepEqual(businessErrorOf({ content: ["preamble", '{"code": 9}'] }, envelope), { code: 9, message: "" });
    assert.equal(businessErrorOf({ code: 0 }, envelope), undefined);
  });
});
