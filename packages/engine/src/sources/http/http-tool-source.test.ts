import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { JsonObject, ToolFailure } from "@tapedeck/protocol";
import { fetchCall, startLoopbackServer, tableResolver, type LoopbackServer } from "../../test-support/loopback-http.js";
import type { ToolOutcome } from "../tool-source.js";
import { HttpToolSource } from "./http-tool-source.js";

/**
 * The `http` tool against a real server on loopback, reached through the test-only allowance
 * and a fake resolver that maps allowed names to 127.0.0.1. No sleeps: a slow server is a route
 * that never answers, and the tool's time bound is configured short.
 */

let server: LoopbackServer;
const DNS = {
  "api.test.example": ["127.0.0.1"],
  "other.test.example": ["127.0.0.1"],
  "private.test.example": ["10.0.0.7"],
};
const ALLOW = ["api.test.example", "other.test.example", "private.test.example"];

before(async () => {
  server = await startLoopbackServer({
    "/hello": (req, res) => {
      res.setHeader("content-type", "text/plain; charset=utf-8");
      res.setHeader("set-cookie", ["a=1", "b=2"]);
      res.end(`hello ${req.method}`);
    },
    "/json": (_req, res) => res.writeHead(201, { "content-type": "application/json" }).end('{"ok":true}'),
    "/missing": (_req, res) => res.writeHead(404).end("nope"),
    "/latin1": (_req, res) => res.writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" }).end(Buffer.from([0x63, 0x61, 0x66, 0xe9])),
    "/to-private": (_req, res) => res.writeHead(302, { location: "http://10.0.0.1/admin" }).end(),
    "/to-metadata": (_req, res) => res.writeHead(301, { location: "http://169.254.169.254/latest/meta-data/" }).end(),
    "/to-private-name": (_req, res) => res.writeHead(307, { location: `http://private.test.example:${server.port}/` }).end(),
    "/to-unlisted": (_req, res) => res.writeHead(302, { location: "https://evil.example.org/" }).end(),
    "/to-file": (_req, res) => res.writeHead(302, { location: "file:///etc/passwd" }).end(),
    "/to-creds": (_req, res) => res.writeHead(302, { location: `http://user:pw@api.test.example:${server.port}/hello` }).end(),
    "/relative": (_req, res) => res.writeHead(302, { location: "/hello" }).end(),
    "/see-other": (_req, res) => res.writeHead(303, { location: "/echo" }).end(),
    "/keep-post": (_req, res) => res.writeHead(307, { location: "/echo" }).end(),
    "/cross-origin": (_req, res) => res.writeHead(302, { location: `http://other.test.example:${server.port}/echo` }).end(),
    "/echo": (req, res) =>
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ method: req.method, headers: req.headers, body: req.body })),
    "/loop": (req, res) => {
      const n = Number(new URL(req.path, "http://x").searchParams.get("n") ?? "0");
      res.writeHead(302, { location: `/loop?n=${n + 1}` }).end();
    },
    "/chain": (req, res) => {
      const n = Number(new URL(req.path, "http://x").searchParams.get("n") ?? "0");
      if (n < 5) res.writeHead(302, { location: `/chain?n=${n + 1}` }).end();
      else res.end(`after ${n} redirects`);
    },
    "/declared-big": (_req, res) => {
      res.writeHead(200, { "content-length": String(6 * 1024 * 1024) });
      res.write("x".repeat(1024)); // the rest never comes: the declared length is enough to refuse
    },
    "/streamed-big": (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      for (let i = 0; i < 64; i++) res.write("y".repeat(1024));
      res.end();
    },
    "/exactly-limit": (_req, res) => res.end("z".repeat(4096)),
    "/never": () => {
      // Never answers: a slow server.
    },
    "/slow-body": (_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("partial"); // and never ends
    },
  });
});
after(() => server.close());

function source(options: ConstructorParameters<typeof HttpToolSource>[0] = {}): HttpToolSource {
  return new HttpToolSource({ resolver: tableResolver(DNS), unsafeAllowLoopbackForTests: true, ...options });
}

function url(path: string, host = "api.test.example"): string {
  return `http://${host}:${server.port}${path}`;
}

type Response = { status: number; statusText: string; url: string; redirected: boolean; headers: Record<string, string>; body: string };

function resultOf(outcome: ToolOutcome): Response {
  if (outcome.kind !== "result") assert.fail(JSON.stringify(outcome));
  return outcome.value as unknown as Response;
}

function failureOf(outcome: ToolOutcome): ToolFailure & { details: JsonObject } {
  if (outcome.kind !== "failure") assert.fail(JSON.stringify(outcome));
  return outcome.failure as ToolFailure & { details: JsonObject };
}

async function withSource<T>(fn: (http: HttpToolSource) => Promise<T>, options: ConstructorParameters<typeof HttpToolSource>[0] = {}): Promise<T> {
  const http = source(options);
  try {
    return await fn(http);
  } finally {
    await http.close();
  }
}

describe("http tool: an allowed host on loopback (test-only allowance)", () => {
  it("sends the request to the checked address with the name as Host, the key and the trace context", async () => {
    await withSource(async (http) => {
      const call = fetchCall(ALLOW, { url: url("/hello"), headers: { "x-custom": "1" } });
      const response = resultOf(await http.call(call));
      assert.equal(response.status, 200);
      assert.equal(response.statusText, "OK");
      assert.equal(response.body, "hello GET");
      assert.equal(response.url, url("/hello"));
      assert.equal(response.redirected, false);
      assert.equal(response.headers["content-type"], "text/plain; charset=utf-8");
      assert.equal(response.headers["set-cookie"], "a=1, b=2");
      const received = server.received.at(-1)!;
      assert.equal(received.headers.host, `api.test.example:${server.port}`);
      assert.equal(received.headers["idempotency-key"], call.idempotencyKey);
      assert.equal(received.headers.traceparent, call.traceparent);
      assert.equal(received.headers["x-custom"], "1");
      assert.match(String(received.headers["user-agent"]), /^tapedeck-http/);
    });
  });

  it("sends a name written with a trailing dot without it, and no fragment", async () => {
    await withSource(async (http) => {
      const response = resultOf(await http.call(fetchCall(ALLOW, { url: `http://api.test.example.:${server.port}/hello#part` })));
      assert.equal(response.url, url("/hello"));
      assert.equal(server.received.at(-1)!.headers.host, `api.test.example:${server.port}`);
    });
  });

  it("answers any status as a response, decodes the declared charset, and sends bodies", async () => {
    await withSource(async (http) => {
      assert.equal(resultOf(await http.call(fetchCall(ALLOW, { url: url("/missing") }))).status, 404);
      assert.equal(resultOf(await http.call(fetchCall(ALLOW, { url: url("/latin1") }))).body, "café");
      const created = resultOf(
        await http.call(fetchCall(ALLOW, { url: url("/json"), method: "POST", body: '{"a":1}', headers: { "content-type": "application/json" } })),
      );
      assert.equal(created.status, 201);
      assert.equal(server.received.at(-1)!.body, '{"a":1}');
    });
  });

  it("is refused for loopback without the allowance, which is off by default", async () => {
    const http = new HttpToolSource({ resolver: tableResolver(DNS) });
    try {
      const before = server.received.length;
      const failure = failureOf(await http.call(fetchCall(ALLOW, { url: url("/hello") })));
      assert.equal(failure.code, "refused");
      assert.match(failure.message, /resolves to 127\.0\.0\.1, which is loopback/);
      assert.equal(server.received.length, before);
    } finally {
      await http.close();
    }
  });

  it("refuses the request without sending it when the host is not allowed, even on loopback", async () => {
    await withSource(async (http) => {
      const before = server.received.length;
      const failure = failureOf(await http.call(fetchCall(["other.test.example"], { url: url("/hello") })));
      assert.equal(failure.details.rule, "host-not-allowed");
      assert.equal(server.received.length, before);
    });
  });
});

describe("http tool: DNS", () => {
  it("resolves the name once and connects to the answer it checked, whatever a second lookup says (rebinding)", async () => {
    const resolver = tableResolver({ "api.test.example": (lookup) => (lookup === 1 ? ["127.0.0.1"] : ["169.254.169.254"]) });
    await withSource(
      async (http) => {
        const before = server.received.length;
        assert.equal(resultOf(await http.call(fetchCall(ALLOW, { url: url("/hello") }))).body, "hello GET");
        assert.deepEqual(resolver.lookups, ["api.test.example"]);
        assert.equal(server.received.length, before + 1);
        // The next request resolves again, and its answer is checked again.
        const failure = failureOf(await http.call(fetchCall(ALLOW, { url: url("/hello") })));
        assert.match(failure.message, /resolves to 169\.254\.169\.254, which is cloud metadata/);
        assert.equal(server.received.length, before + 1);
      },
      { resolver },
    );
  });

  it("refuses a name whose second answer is private, without connecting", async () => {
    const resolver = tableResolver({ "api.test.example": ["127.0.0.1", "10.0.0.1"] });
    await withSource(
      async (http) => {
        const before = server.received.length;
        const failure = failureOf(await http.call(fetchCall(ALLOW, { url: url("/hello") })));
        assert.equal(failure.details.rule, "address");
        assert.equal(failure.details.address, "10.0.0.1");
        assert.equal(server.received.length, before);
      },
      { resolver },
    );
  });

  it("answers network_error when a name does not resolve or nothing listens", async () => {
    await withSource(async (http) => {
      const unresolved = failureOf(await http.call(fetchCall(["nowhere.test.example"], { url: "http://nowhere.test.example/" })));
      assert.equal(unresolved.code, "network_error");
      assert.match(unresolved.message, /Could not resolve nowhere\.test\.example .*ENOTFOUND/);
      const closed = await startLoopbackServer({});
      const port = closed.port;
      await closed.close();
      const refused = failureOf(await http.call(fetchCall(ALLOW, { url: `http://api.test.example:${port}/` })));
      assert.equal(refused.code, "network_error");
      assert.equal(refused.retryable, true);
      assert.match(refused.message, /ECONNREFUSED/);
    });
  });
});

describe("http tool: redirects", () => {
  it("follows redirects to allowed hosts (relative too) and says so", async () => {
    await withSource(async (http) => {
      const relative = resultOf(await http.call(fetchCall(ALLOW, { url: url("/relative") })));
      assert.equal(relative.body, "hello GET");
      assert.equal(relative.redirected, true);
      assert.equal(relative.url, url("/hello"));
      assert.equal(resultOf(await http.call(fetchCall(ALLOW, { url: url("/chain") }))).body, "after 5 redirects");
    });
  });

  it("checks every redirect again: private addresses, metadata, unlisted hosts, other schemes, credentials", async () => {
    await withSource(async (http) => {
      const cases: [string, string, RegExp][] = [
        ["/to-private", "address", /the address 10\.0\.0\.1 is private/],
        ["/to-metadata", "address", /169\.254\.169\.254 is cloud metadata/],
        ["/to-private-name", "address", /the name private\.test\.example resolves to 10\.0\.0\.7/],
        ["/to-unlisted", "host-not-allowed", /evil\.example\.org is not in the toolset's http allow-list/],
        ["/to-file", "scheme", /the scheme "file" is not allowed/],
        ["/to-creds", "credentials", /user name or password/],
      ];
      for (const [path, rule, message] of cases) {
        const failure = failureOf(await http.call(fetchCall(ALLOW, { url: url(path) })));
        assert.equal(failure.code, "refused", path);
        assert.equal(failure.details.rule, rule, path);
        assert.match(failure.message, message);
        assert.match(failure.message, new RegExp(`came from a redirect of ${url(path).replace(/[.?]/g, "\\$&")}`));
        assert.equal(failure.details.redirectedFrom, url(path));
      }
    });
  });

  it("asks the call's targetCheck about every hop with its method before sending it: a refused redirect target is never requested", async () => {
    await withSource(async (http) => {
      const asked: string[] = [];
      const targetCheck = (target: string, method: string) => {
        asked.push(`${method} ${new URL(target).pathname}`);
        return new URL(target).pathname === "/hello" ? "only /relative and /see-other may be reached" : undefined;
      };
      const before = server.received.length;
      const failure = failureOf(await http.call({ ...fetchCall(ALLOW, { url: url("/relative") }), targetCheck }));
      assert.equal(failure.details.rule, "outside-grant");
      assert.match(failure.message, /only \/relative and \/see-other may be reached/);
      assert.equal(failure.details.redirectedFrom, url("/relative"));
      assert.deepEqual(
        server.received.slice(before).map((r) => r.path),
        ["/relative"],
        "the refused target was not requested",
      );
      assert.deepEqual(asked, ["GET /relative", "GET /hello"]);
      asked.length = 0;
      const seeOther = resultOf(await http.call({ ...fetchCall(ALLOW, { url: url("/see-other"), method: "POST", body: "x" }), targetCheck }));
      assert.equal(seeOther.status, 200);
      assert.deepEqual(asked, ["POST /see-other", "GET /echo"], "a 303 is checked with the method it is sent with");
    });
  });

  it("follows at most 5 redirects", async () => {
    await withSource(async (http) => {
      const before = server.received.length;
      const failure = failureOf(await http.call(fetchCall(ALLOW, { url: url("/loop") })));
      assert.equal(failure.details.rule, "too-many-redirects");
      assert.match(failure.message, /redirected more than 5 times/);
      assert.equal(server.received.length - before, 6);
    });
  });

  it("turns a 303 into a GET without a body, keeps the method on 307, and drops credentials across origins", async () => {
    await withSource(async (http) => {
      const seeOther = JSON.parse(
        resultOf(await http.call(fetchCall(ALLOW, { url: url("/see-other"), method: "POST", body: "x", headers: { "content-type": "text/plain" } }))).body,
      ) as { method: string; body: string; headers: Record<string, string> };
      assert.deepEqual([seeOther.method, seeOther.body, seeOther.headers["content-type"]], ["GET", "", undefined]);
      const kept = JSON.parse(resultOf(await http.call(fetchCall(ALLOW, { url: url("/keep-post"), method: "POST", body: "x" }))).body) as {
        method: string;
        body: string;
      };
      assert.deepEqual([kept.method, kept.body], ["POST", "x"]);
      const call = fetchCall(ALLOW, { url: url("/cross-origin"), headers: { authorization: "Bearer t", cookie: "c=1", "x-keep": "k" } });
      const crossed = JSON.parse(resultOf(await http.call(call)).body) as { headers: Record<string, string> };
      assert.equal(crossed.headers.authorization, undefined);
      assert.equal(crossed.headers.cookie, undefined);
      assert.equal(crossed.headers["x-keep"], "k");
      assert.equal(crossed.headers.host, `other.test.example:${server.port}`);
      assert.equal(crossed.headers["idempotency-key"], call.idempotencyKey);
    });
  });
});

describe("http tool: bounds", () => {
  it("fails a response that declares more than 5 MiB without reading it", async () => {
    await withSource(async (http) => {
      const failure = failureOf(await http.call(fetchCall(ALLOW, { url: url("/declared-big") })));
      assert.equal(failure.code, "result_too_large");
      assert.match(failure.message, /declares 6291456 bytes; the http tool reads at most 5242880 bytes/);
    });
  });

  it("fails a streamed response past the configured limit, and reads one at the limit", async () => {
    await withSource(
      async (http) => {
        const failure = failureOf(await http.call(fetchCall(ALLOW, { url: url("/streamed-big") })));
        assert.equal(failure.code, "result_too_large");
        assert.match(failure.message, /went past 4096 bytes/);
        assert.equal(resultOf(await http.call(fetchCall(ALLOW, { url: url("/exactly-limit") }))).body.length, 4096);
      },
      { maxResponseBytes: 4096 },
    );
  });

  it("fails a request whose server never answers, or never ends its body, at the time bound", async () => {
    await withSource(
      async (http) => {
        for (const path of ["/never", "/slow-body"]) {
          const failure = failureOf(await http.call(fetchCall(ALLOW, { url: url(path) })));
          assert.equal(failure.code, "timeout", path);
          assert.equal(failure.retryable, true);
          assert.match(failure.message, /did not complete within 150 ms, the http tool's limit/);
        }
      },
      { timeoutMs: 150 },
    );
  });

  it("ends as interrupted when the run stops waiting", async () => {
    await withSource(async (http) => {
      const controller = new AbortController();
      const pending = http.call(fetchCall(ALLOW, { url: url("/never") }, controller.signal));
      controller.abort(new Error("the run no longer wants this result"));
      assert.equal((await pending).kind, "interrupted");
    });
  });
});

describe("http tool: arguments", () => {
  it("refuses headers the engine owns, invalid headers, and a body on GET, without sending", async () => {
    await withSource(async (http) => {
      const before = server.received.length;
      for (const [headers, pattern] of [
        [{ host: "internal" }, /the header "host" is set by Tapedeck/],
        [{ "Idempotency-Key": "mine" }, /the header "idempotency-key" is set by Tapedeck/],
        [{ "proxy-foo": "x" }, /the header "proxy-foo" is set by Tapedeck/],
        [{ "x-bad": "a\r\nInjected: 1" }, /line breaks/],
        [{ "bad name": "x" }, /not a valid header name/],
      ] as const) {
        const failure = failureOf(await http.call(fetchCall(ALLOW, { url: url("/hello"), headers })));
        assert.equal(failure.code, "invalid_arguments");
        assert.match(failure.message, pattern);
      }
      const body = failureOf(await http.call(fetchCall(ALLOW, { url: url("/hello"), body: "x" })));
      assert.match(body.message, /a GET request cannot have a body/);
      const method = failureOf(await http.call(fetchCall(ALLOW, { url: url("/hello"), method: "TRACE" })));
      assert.match(method.message, /"TRACE" is not supported/);
      assert.equal(server.received.length, before);
    });
  });
});
