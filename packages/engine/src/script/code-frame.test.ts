import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { codeFrame } from "./code-frame.js";

void describe("codeFrame", () => {
  const source = "a\nb\nc\nd\ne\nf\ng\nh\ni\nten = 1;\neleven";

  void it("marks the line and puts a caret under the column, with aligned line numbers", () => {
    assert.equal(codeFrame(source, 10, 5), ["   8 | h", "   9 | i", "> 10 | ten = 1;", "     |     ^", "  11 | eleven"].join("\n"));
  });

  void it("honours context, tabs and out-of-range positions", () => {
    assert.equal(codeFrame("\tx = 1;", 1, 2, { context: 0 }), "> 1 | \tx = 1;\n    | \t^");
    assert.equal(codeFrame("ab", 1, 99, { context: 0 }), "> 1 | ab\n    |   ^");
    assert.equal(codeFrame("ab", 2, 1), "");
    assert.equal(codeFrame("a\r\nb", 2, 1, { context: 0 }), "> 2 | b\n    | ^");
  });
});
