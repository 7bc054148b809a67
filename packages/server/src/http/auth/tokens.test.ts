import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { TokenSigner, type TokenClaims } from "./tokens.js";

const signer = new TokenSigner(Buffer.alloc(32, 1));
const claims: TokenClaims = { v: 1, ns: "alice", labels: { conversation: "c1" }, exp: 2_000, key: "key_1" };

describe("end-user tokens", () => {
  it("a minted token checks out with its claims until it expires", () => {
    const token = signer.mint(claims);
    assert.match(token, /^tdt_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(signer.check(token, 1_999), { ok: true, claims });
    assert.deepEqual(signer.check(token, 2_000), { ok: false, reason: "expired", expiredAt: 2_000 });
  });

  it("another secret's token, or any change to a token, is forged", () => {
    assert.deepEqual(new TokenSigner(Buffer.alloc(32, 2)).check(signer.mint(claims), 0), { ok: false, reason: "forged" });
    const token = signer.mint(claims);
    // Every other spelling is refused, even one whose signature decodes to the same bytes
    // (base64url's last character carries unused bits; decoders skip what is not base64url).
    fc.assert(
      fc.property(fc.nat({ max: token.length - 1 }), fc.constantFrom(..."AQgw_-.x0"), (at, char) => {
        const changed = token.slice(0, at) + char + token.slice(at + 1);
        fc.pre(changed !== token);
        assert.deepEqual(signer.check(changed, 0), { ok: false, reason: "forged" }, changed);
      }),
    );
  });

  it("a token with anything appended or inserted is forged, not the same token", () => {
    const token = signer.mint(claims);
    const signature = token.slice(token.lastIndexOf(".") + 1);
    const last = signature.at(-1)!;
    // The signature's last character with other unused bits decodes to the same 32 bytes.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const sameBytes = [0, 1, 2, 3]
      .map((low) => `${token.slice(0, -1)}${alphabet[(alphabet.indexOf(last) & ~3) + low]!}`)
      .find((t) => t !== token && Buffer.from(t.slice(t.lastIndexOf(".") + 1), "base64url").equals(Buffer.from(signature, "base64url")));
    assert.ok(sameBytes !== undefined, `a respelling of the signature's last character "${last}"`);
    for (const changed of [
      `${token}!!!`,
      `${token}AAAA`,
      `${token}=`,
      `${token}%20`,
      `${token} `,
      `${token}.`,
      `${token.slice(0, -4)}!${token.slice(-4)}`,
      sameBytes,
    ]) {
      assert.deepEqual(signer.check(changed, 0), { ok: false, reason: "forged" }, changed);
    }
    assert.deepEqual(signer.check(token, 0), { ok: true, claims });
  });

  it("malformed tokens are forged, never a throw", () => {
    for (const text of ["", "tdt_", "tdt_.", "tdt_abc", "tdk_abc.def", `tdt_${Buffer.from("not json").toString("base64url")}.x`]) {
      assert.deepEqual(signer.check(text, 0), { ok: false, reason: "forged" }, text);
    }
    // Signed with the right secret, so only the claims' shape is at fault.
    const odd = (body: object) => signer.mint(body as TokenClaims);
    for (const body of [
      { ...claims, v: 2 },
      { ...claims, ns: 5 },
      { ...claims, labels: { a: 1 } },
      { ...claims, labels: [] },
      { ...claims, exp: "soon" },
    ]) {
      assert.deepEqual(signer.check(odd(body), 0), { ok: false, reason: "forged" }, JSON.stringify(body));
    }
  });
});
