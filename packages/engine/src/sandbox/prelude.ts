/**
 * The guest half of the sandbox: JavaScript evaluated in every QuickJS context before the
 * script. It is one file because it is one closure: the script can reach only what it puts on
 * `globalThis` (console, Math.random, the tools module), never the internals it returns to
 * the host (`run`, `fail`, `deliver`, `collect`).
 *
 * Invariants it keeps:
 * - No host function is exposed to the guest at all: calls and log lines are buffered as JSON
 *   text here and read by the host with `collect()` after each step.
 * - Everything it calls after the script has started is captured first (`JSON.stringify`,
 *   `Promise.prototype.then`, …) and its buffers are arrays without a prototype, so a script
 *   that replaces built-ins breaks only itself: `collect()` still returns valid JSON.
 * - `seq` counts calls from 1 in issue order; each seq is settled at most once.
 * - Once the script has ended, calls are no longer recorded and deliveries are ignored.
 * - Every value handed to the host (arguments, output, an error's details) nests at most
 *   `maxDepth` levels, and arguments hold no lone surrogate (they must be canonical JSON): the
 *   script gets a clear error where it made such a value (the worker checks again).
 * - Nothing the script throws can make the prelude throw: any value, a Proxy whose traps throw
 *   included, ends the script with an error that says what it could read of it.
 * - A `ToolError` is reported with the seq of the call it failed only when the prelude itself
 *   delivered it (a private registry, out of the script's reach): a script can make and throw a
 *   ToolError of its own, but never one that passes for a tool's failure.
 *
 * `config` is `{ tools: { group: [name…] }, features: ["fetch"?], workflows: [name…], seed: string, logLineChars: number, maxDepth: number }`.
 * `fetch` exists only when `features` has it: a toolset without `http` has no network at all.
 * `workflows` exists only when the toolset pins workflows.
 */
export const PRELUDE_FILENAME = "tapedeck:prelude";

/** Where the tools module finds its exports; a one-shot getter, deleted when read. */
export const TOOLS_GLOBAL = "__tapedeck_tools__";

/** What `deliver` answers (the host reads the number). */
export const DeliverStatus = {
  /** The call's promise was settled. */
  delivered: 0,
  /** The script has not issued this seq yet. */
  notIssued: 1,
  /** The script has ended: the delivery was ignored. */
  ended: 2,
  /** This seq was settled before: a host bug. */
  alreadySettled: 3,
} as const;

export const PRELUDE = String.raw`(function tapedeckPrelude(configText) {
"use strict";
const global = globalThis;
const JSONParse = JSON.parse, JSONStringify = JSON.stringify;
const apply = Reflect.apply;
const defineProperty = Object.defineProperty, freeze = Object.freeze, hasOwn = Object.hasOwn;
const setPrototypeOf = Object.setPrototypeOf, objectKeys = Object.keys;
const arrayJoin = Array.prototype.join;
const stringSlice = String.prototype.slice, stringIndexOf = String.prototype.indexOf;
const symbolToString = Symbol.prototype.toString;
const PromiseCtor = Promise, promiseThen = Promise.prototype.then;
const DateCtor = Date;
const ErrorCtor = Error, TypeErrorCtor = TypeError, ReferenceErrorCtor = ReferenceError;
const InternalErrorCtor = InternalError;
const WeakSetCtor = WeakSet, weakSetAdd = WeakSet.prototype.add, weakSetHas = WeakSet.prototype.has;
const WeakMapCtor = WeakMap, weakMapSet = WeakMap.prototype.set, weakMapGet = WeakMap.prototype.get;
const imul = Math.imul;
const dateNow = Date.now;
const regExpExec = RegExp.prototype.exec;
const numberIsFinite = Number.isFinite;
const config = JSONParse(configText);
const logLineChars = config.logLineChars;
const maxDepth = config.maxDepth;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function list() { const a = []; setPrototypeOf(a, null); return a; }
function push(a, value) { a[a.length] = value; }
function join(a, separator) { return apply(arrayJoin, a, [separator]); }
function define(target, key, value) {
  defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}
function read(object, key) { try { return object[key]; } catch { return undefined; } }
function isLimit(e) { try { return e instanceof InternalErrorCtor; } catch { return false; } }
function isError(e) { try { return e instanceof ErrorCtor; } catch { return false; } }
// Drops the prelude's own frames (issue, the tool function, main) from a stack.
function scriptFrames(stack) {
  if (typeof stack !== "string") return stack;
  let kept = "", from = 0;
  while (from < stack.length) {
    let to = apply(stringIndexOf, stack, ["\n", from]);
    to = to < 0 ? stack.length : to + 1;
    const line = apply(stringSlice, stack, [from, to]);
    if (apply(stringIndexOf, line, ["${PRELUDE_FILENAME}"]) < 0) kept += line;
    from = to;
  }
  return kept;
}

// ---- values as text ----
function errorText(e) {
  const name = read(e, "name"), message = read(e, "message");
  const head = typeof name === "string" && name !== "" ? name : "Error";
  return typeof message === "string" && message !== "" ? head + ": " + message : head;
}
function functionText(f) {
  const name = read(f, "name");
  return "[Function: " + (typeof name === "string" && name !== "" ? name : "(anonymous)") + "]";
}
function inspectJson(root) {
  const ancestors = list();
  function replacer(key, value) {
    // JSON.stringify walks depth-first: 'this' (the holder) is the last ancestor still open.
    while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.length--;
    switch (typeof value) {
      case "function": return functionText(value);
      case "bigint": return "" + value + "n";
      case "symbol": return apply(symbolToString, value, []);
      case "object":
        if (value === null) return value;
        if (key !== "" && isError(value)) return errorText(value);
        for (let i = 0; i < ancestors.length; i++) if (ancestors[i] === value) return "[Circular]";
        if (ancestors.length >= maxDepth) return "[nested too deep]";
        push(ancestors, value);
    }
    return value;
  }
  try { return JSONStringify(root, replacer); } catch (e) {
    if (isLimit(e)) throw e;
    return "[unprintable: " + errorText(e) + "]";
  }
}
function formatValue(v) {
  try { return formatAny(v); } catch (e) {
    if (isLimit(e)) throw e;
    return "[unprintable]";
  }
}
function formatAny(v) {
  switch (typeof v) {
    case "string": return v;
    case "number": case "boolean": case "undefined": return "" + v;
    case "bigint": return "" + v + "n";
    case "symbol": return apply(symbolToString, v, []);
    case "function": return functionText(v);
  }
  if (v === null) return "null";
  if (isError(v)) return errorText(v);
  return inspectJson(v);
}
// Errors that say a value is out of bounds (too deep, a lone surrogate): their message is the whole story.
const boundsErrors = new WeakSetCtor();
function boundsError(message) {
  const error = new TypeErrorCtor(message);
  apply(weakSetAdd, boundsErrors, [error]);
  return error;
}
function isBoundsError(e) { try { return apply(weakSetHas, boundsErrors, [e]); } catch { return false; } }
// JSON text of plain data, nested at most maxDepth levels; with canonical set, without lone surrogates.
function strictJson(value, canonical) {
  const ancestors = list();
  function strictReplacer(key, value) {
    const where = key === "" ? "it is" : "the value at key " + JSONStringify(key) + " is";
    switch (typeof value) {
      case "function": throw new TypeErrorCtor(where + " a function");
      case "symbol": throw new TypeErrorCtor(where + " a symbol");
      case "bigint": throw new TypeErrorCtor(where + " a BigInt (convert it to a string)");
      case "string":
        if (canonical && apply(regExpExec, LONE_SURROGATE, [value]) !== null) throw boundsError("hold a lone UTF-16 surrogate (in " + (key === "" ? "the value itself" : "the string at key " + JSONStringify(key)) + "), which JSON text cannot carry; pass well-formed Unicode.");
        break;
      case "object":
        if (value === null) break;
        // JSON.stringify walks depth-first: 'this' (the holder) is the last ancestor still open.
        while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.length--;
        if (ancestors.length >= maxDepth) throw boundsError("nest arrays and objects more than " + maxDepth + " levels deep; pass flatter data.");
        push(ancestors, value);
    }
    if (canonical && key !== "" && apply(regExpExec, LONE_SURROGATE, [key]) !== null) throw boundsError("hold a lone UTF-16 surrogate in a key, which JSON text cannot carry; pass well-formed Unicode.");
    return value;
  }
  return JSONStringify(value, strictReplacer);
}
const PLAIN_DATA = "plain data: objects, arrays, strings, numbers, booleans and null";

// ---- state ----
let lastSeq = 0;
const pending = { __proto__: null };
let calls = list(), logs = list();
let ordinal = 0;
let endText;
let endReported = false;

// ---- ToolError ----
const toolErrors = new WeakSetCtor();
// The ToolErrors this prelude delivered as the failure of a call, to that call's seq.
const deliveredFailures = new WeakMapCtor();
class ToolError extends ErrorCtor {
  constructor(code, message, options) {
    super(message);
    define(this, "name", "ToolError");
    define(this, "code", code);
    if (options !== undefined && options !== null) {
      const retryable = options.retryable, details = options.details;
      if (retryable !== undefined) define(this, "retryable", retryable);
      if (details !== undefined) define(this, "details", details);
    }
    apply(weakSetAdd, toolErrors, [this]);
  }
}
freeze(ToolError);
freeze(ToolError.prototype);
function failedCall(failure, entry, seq) {
  const options = {
    retryable: hasOwn(failure, "retryable") ? failure.retryable : undefined,
    details: hasOwn(failure, "details") ? failure.details : undefined,
  };
  const error = new ToolError(failure.code, failure.message, options);
  define(error, "tool", entry.tool);
  define(error, "seq", seq);
  // The stack of the call site: where the script asked for this call.
  defineProperty(error, "stack", { value: scriptFrames(entry.site), writable: true, configurable: true });
  apply(weakMapSet, deliveredFailures, [error, seq]);
  return error;
}

// ---- calls ----
function issue(tool, args) {
  let argsJson;
  try { argsJson = args === undefined ? "{}" : strictJson(args, true); } catch (e) {
    if (isLimit(e)) throw e;
    if (isBoundsError(e)) throw new TypeErrorCtor(tool + ": the arguments " + read(e, "message"));
    throw new TypeErrorCtor(tool + ": the arguments are not JSON (" + errorText(e) + "). Pass " + PLAIN_DATA + ".");
  }
  if (argsJson === undefined) argsJson = "{}";
  if (endText !== undefined) return new PromiseCtor(function () {});
  const seq = ++lastSeq;
  const site = new ErrorCtor().stack;
  push(calls, '{"seq":' + seq + ',"tool":' + JSONStringify(tool) + ',"args":' + argsJson + "}");
  return new PromiseCtor(function (resolve, reject) {
    pending[seq] = { resolve, reject, tool, site };
  });
}
function deliver(text) {
  if (endText !== undefined) return 2;
  const delivery = JSONParse(text);
  const seq = delivery.seq;
  if (seq > lastSeq) return 1;
  const entry = pending[seq];
  if (entry === undefined) return 3;
  delete pending[seq];
  if (delivery.ok === true) entry.resolve(delivery.value);
  else entry.reject(failedCall(delivery.error, entry, seq));
  return 0;
}

// ---- the end ----
function describeError(e) {
  try { return describeAny(e); } catch (e2) {
    if (isLimit(e2)) throw e2;
    // A value whose every read throws (a Proxy with throwing traps): say what it is, no more.
    return JSONStringify({ kind: "script", name: "Error", message: "Uncaught exception: the script threw a value that cannot be read (" + errorText(e2) + ")." });
  }
}
function describeAny(e) {
  if (e === null || (typeof e !== "object" && typeof e !== "function")) {
    return JSONStringify({ kind: "script", name: "Error", message: "Uncaught " + formatValue(e) });
  }
  const name = read(e, "name"), message = read(e, "message"), stack = read(e, "stack");
  const info = {
    kind: "script",
    name: typeof name === "string" ? name : "Error",
    message: typeof message === "string" ? message : "Uncaught " + formatValue(e),
    stack: typeof stack === "string" ? stack : undefined,
    failure: undefined,
    seq: undefined,
  };
  if (apply(weakSetHas, toolErrors, [e])) {
    const code = read(e, "code");
    info.failure = {
      code: typeof code === "string" ? code : formatValue(code),
      message: info.message,
      retryable: read(e, "retryable") === true ? true : read(e, "retryable") === false ? false : undefined,
      details: read(e, "details"),
    };
    // Only from the registry: a seq the script set on an error of its own is not believed.
    const seq = apply(weakMapGet, deliveredFailures, [e]);
    if (typeof seq === "number") info.seq = seq;
  }
  try { return strictJson(info, false); } catch (e2) {
    if (isLimit(e2)) throw e2;
    if (info.failure !== undefined) info.failure.details = undefined;
    return strictJson(info, false);
  }
}
function finishError(e) {
  if (endText !== undefined) return;
  endText = '{"ok":false,"error":' + describeError(e) + "}";
}
function finishOk(value) {
  if (endText !== undefined) return;
  let json;
  try { json = strictJson(value === undefined ? null : value, false); } catch (e) {
    if (isLimit(e)) return finishError(e);
    endText = '{"ok":false,"error":' + JSONStringify({
      kind: "output",
      name: "TypeError",
      message: isBoundsError(e) ? "The script's output must not " + read(e, "message") : "The script's output is not JSON: " + errorText(e) + ". Return " + PLAIN_DATA + ".",
    }) + "}";
    return;
  }
  endText = '{"ok":true,"output":' + (json === undefined ? "null" : json) + "}";
}
function run(evaluated, inputText) {
  const input = JSONParse(inputText);
  function main(namespace) {
    const entry = namespace.default;
    return typeof entry === "function" ? entry(input) : entry;
  }
  // A module with top-level await evaluates to a promise of its namespace.
  const settled = evaluated instanceof PromiseCtor
    ? apply(promiseThen, evaluated, [main])
    : new PromiseCtor(function (resolve) { resolve(main(evaluated)); });
  apply(promiseThen, settled, [finishOk, finishError]);
}
function collect() {
  let text = '{"calls":[' + join(calls, ",") + '],"logs":[' + join(logs, ",") + "]";
  calls = list();
  logs = list();
  if (endText !== undefined && !endReported) {
    endReported = true;
    text += ',"end":' + endText;
  }
  return text + "}";
}

// ---- console ----
function record(level, data) {
  let message = "";
  for (let i = 0; i < data.length; i++) message += (i === 0 ? "" : " ") + formatValue(data[i]);
  if (message.length > logLineChars) {
    const more = message.length - logLineChars;
    message = apply(stringSlice, message, [0, logLineChars]) + "… [cut: " + more + " more characters]";
  }
  push(logs, '{"level":"' + level + '","message":' + JSONStringify(message) + ',"ordinal":' + ordinal++ + "}");
}
const consoleObject = {
  debug(...data) { record("debug", data); },
  info(...data) { record("info", data); },
  log(...data) { record("log", data); },
  warn(...data) { record("warn", data); },
  error(...data) { record("error", data); },
};
defineProperty(global, "console", { value: freeze(consoleObject), writable: true, configurable: true });

// ---- durable waits: primitive calls, journaled and replayed like tool calls ----
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)$/;
const UNIT_MS = { __proto__: null, ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000, w: 604800000, y: 31536000000 };
const MAX_WAIT_MS = 10 * 366 * 86400000;
const DURATION_HELP = 'a number of milliseconds or a string like "500ms", "30s", "10m", "2h", "10d", "1w", "1y"';
function durationMs(value, what) {
  let ms;
  if (typeof value === "number") ms = value;
  else if (typeof value === "string") {
    const match = apply(regExpExec, DURATION, [value]);
    if (match === null) throw new TypeErrorCtor(what + ": " + JSONStringify(value) + " is not a duration; use " + DURATION_HELP + ".");
    ms = +match[1] * UNIT_MS[match[2]];
  } else {
    throw new TypeErrorCtor(what + ": the duration is " + formatValue(value) + "; use " + DURATION_HELP + ".");
  }
  if (!numberIsFinite(ms) || ms < 0) throw new TypeErrorCtor(what + ": the duration " + formatValue(value) + " is not a finite number of milliseconds >= 0.");
  if (ms > MAX_WAIT_MS) throw new TypeErrorCtor(what + ": " + formatValue(value) + " is longer than 10 years, the longest wait.");
  return ms;
}
function sleep(duration) {
  const ms = durationMs(duration, "sleep");
  // Date.now() is the time of the step, from the journal: the same on replay.
  return apply(promiseThen, issue("tapedeck.sleep", { ms, until: apply(dateNow, DateCtor, []) + ms }), [function () { return undefined; }]);
}
function signal(name, options) {
  if (typeof name !== "string" || name === "") throw new TypeErrorCtor("signal: the name must be a non-empty string.");
  const timeout = options === undefined || options === null ? undefined : read(options, "timeout");
  if (timeout === undefined) return issue("tapedeck.signal", { name });
  const ms = durationMs(timeout, "signal timeout");
  return issue("tapedeck.signal", { name, timeoutMs: ms, until: apply(dateNow, DateCtor, []) + ms });
}
function webhook(name) {
  if (typeof name !== "string" || name === "") throw new TypeErrorCtor("webhook: the name must be a non-empty string (the signal its POSTs become).");
  return issue("tapedeck.webhook", { name });
}
let lastTimeout = 0;
const clearedTimeouts = { __proto__: null };
function setTimeoutImpl(callback, ms, ...args) {
  if (typeof callback !== "function") throw new TypeErrorCtor("setTimeout: the callback must be a function (strings are not evaluated).");
  const id = ++lastTimeout;
  const slept = sleep(ms === undefined ? 0 : ms);
  apply(promiseThen, slept, [function () {
    if (clearedTimeouts[id] === true) { delete clearedTimeouts[id]; return; }
    // Like an uncaught exception in a timer in Node: the run fails.
    try { apply(callback, undefined, args); } catch (e) { finishError(e); }
  }]);
  return id;
}
function clearTimeoutImpl(id) {
  if (typeof id === "number" && id > 0 && id <= lastTimeout) clearedTimeouts[id] = true;
}
for (const [name, fn] of [["sleep", sleep], ["signal", signal], ["webhook", webhook], ["setTimeout", setTimeoutImpl], ["clearTimeout", clearTimeoutImpl]]) {
  defineProperty(fn, "name", { value: name });
  defineProperty(global, name, { value: freeze(fn), writable: true, configurable: true });
}

// ---- fetch: only when the toolset enables http; each request is a journaled call of http.fetch ----
const stringToUpperCase = String.prototype.toUpperCase, stringToLowerCase = String.prototype.toLowerCase;
const arrayIsArray = Array.isArray, arraySort = Array.prototype.sort, arrayValues = Array.prototype.values;
const promiseResolve = Promise.resolve;
const iteratorSymbol = Symbol.iterator;
const FETCH_METHODS = { __proto__: null, GET: 1, HEAD: 1, POST: 1, PUT: 1, PATCH: 1, DELETE: 1, OPTIONS: 1 };
const FETCH_OPTIONS = { __proto__: null, method: 1, headers: 1, body: 1, credential: 1 };
function lower(text) { return apply(stringToLowerCase, text, []); }
function headerText(value, name) {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return "" + value;
  throw new TypeErrorCtor("fetch: the value of header " + JSONStringify(name) + " is " + formatValue(value) + "; header values are strings.");
}
function addHeader(headers, name, value) {
  if (typeof name !== "string") throw new TypeErrorCtor("fetch: header names are strings; got " + formatValue(name) + ".");
  const key = lower(name), text = headerText(value, name);
  // Like Headers.append: a repeated name joins its values.
  define(headers, key, hasOwn(headers, key) ? headers[key] + ", " + text : text);
}
function fetchArgs(url, init) {
  if (typeof url !== "string") throw new TypeErrorCtor("fetch: the URL must be a string; got " + formatValue(url) + ".");
  const headers = { __proto__: null };
  const args = { url, method: "GET", headers };
  if (init === undefined || init === null) return args;
  if (typeof init !== "object") throw new TypeErrorCtor("fetch: the second argument must be an object { method, headers, body }.");
  const keys = objectKeys(init);
  for (let i = 0; i < keys.length; i++) {
    if (FETCH_OPTIONS[keys[i]] !== 1) throw new TypeErrorCtor("fetch: the option " + JSONStringify(keys[i]) + " is not supported; use method, headers, body and credential.");
  }
  const method = read(init, "method");
  if (method !== undefined) {
    const upper = typeof method === "string" ? apply(stringToUpperCase, method, []) : "";
    if (FETCH_METHODS[upper] !== 1) throw new TypeErrorCtor("fetch: the method " + formatValue(method) + " is not supported; use GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS.");
    args.method = upper;
  }
  const given = read(init, "headers");
  if (arrayIsArray(given)) {
    for (let i = 0; i < given.length; i++) {
      const pair = given[i];
      if (!arrayIsArray(pair) || pair.length !== 2) throw new TypeErrorCtor("fetch: headers given as an array must be [name, value] pairs.");
      addHeader(headers, pair[0], pair[1]);
    }
  } else if (given !== undefined && given !== null) {
    if (typeof given !== "object") throw new TypeErrorCtor("fetch: headers must be an object { name: value } or [name, value] pairs.");
    const names = objectKeys(given);
    for (let i = 0; i < names.length; i++) addHeader(headers, names[i], given[names[i]]);
  }
  const credential = read(init, "credential");
  if (credential !== undefined) {
    if (typeof credential !== "string" || credential === "") throw new TypeErrorCtor("fetch: credential is the name of a credential (a string), such as \"GITHUB\"; got " + formatValue(credential) + ".");
    define(args, "credential", credential);
  }
  const body = read(init, "body");
  if (body === undefined || body === null) return args;
  if (args.method === "GET" || args.method === "HEAD") throw new TypeErrorCtor("fetch: a " + args.method + " request cannot have a body.");
  if (typeof body === "string") { define(args, "body", body); return args; }
  let json;
  try { json = strictJson(body, false); } catch (e) {
    if (isLimit(e)) throw e;
    throw new TypeErrorCtor("fetch: the body is neither a string nor JSON (" + errorText(e) + ").");
  }
  if (json === undefined) throw new TypeErrorCtor("fetch: the body is " + formatValue(body) + "; pass a string or " + PLAIN_DATA + ".");
  define(args, "body", json);
  if (!hasOwn(headers, "content-type")) define(headers, "content-type", "application/json");
  return args;
}
function responseHeaders(record) {
  const names = objectKeys(record);
  apply(arraySort, names, []);
  function pairs(pick) {
    const out = [];
    for (let i = 0; i < names.length; i++) out[out.length] = pick(names[i], record[names[i]]);
    return apply(arrayValues, out, []);
  }
  const headers = {
    get(name) { const key = lower("" + name); return hasOwn(record, key) ? record[key] : null; },
    has(name) { return hasOwn(record, lower("" + name)); },
    forEach(callback, thisArg) { for (let i = 0; i < names.length; i++) apply(callback, thisArg, [record[names[i]], names[i], headers]); },
    entries() { return pairs(function (name, value) { return [name, value]; }); },
    keys() { return pairs(function (name) { return name; }); },
    values() { return pairs(function (name, value) { return value; }); },
    [iteratorSymbol]() { return headers.entries(); },
  };
  return freeze(headers);
}
function response(result) {
  // A recorded response has every field; a test scenario's mock may leave some out.
  const record = result !== null && typeof result === "object" ? result : {};
  const status = typeof record.status === "number" ? record.status : 0;
  const body = typeof record.body === "string" ? record.body : "";
  const headers = record.headers !== null && typeof record.headers === "object" ? record.headers : {};
  return freeze({
    status,
    statusText: typeof record.statusText === "string" ? record.statusText : "",
    ok: status >= 200 && status < 300,
    url: typeof record.url === "string" ? record.url : "",
    redirected: record.redirected === true,
    headers: responseHeaders(headers),
    text() { return apply(promiseResolve, PromiseCtor, [body]); },
    json() { return new PromiseCtor(function (resolve) { resolve(JSONParse(body)); }); },
  });
}
function fetch(url, init) {
  let args;
  try { args = fetchArgs(url, init); } catch (e) {
    if (isLimit(e)) throw e;
    return new PromiseCtor(function (resolve, reject) { reject(e); });
  }
  return apply(promiseThen, issue("http.fetch", args), [response]);
}
for (let i = 0; i < config.features.length; i++) {
  if (config.features[i] !== "fetch") continue;
  defineProperty(fetch, "name", { value: "fetch" });
  defineProperty(global, "fetch", { value: freeze(fetch), writable: true, configurable: true });
}

// ---- workflows: only when the toolset pins some; start, result and signal are journaled primitive calls ----
function nullIfUndefined(value) { return value === undefined ? null : value; }
function workflowHandle(name, id) {
  let result;
  return freeze({
    id,
    // One call however often it is asked: the same promise, so a replay makes the same calls.
    result() {
      if (result === undefined) result = issue("tapedeck.workflow.result", { name, id });
      return result;
    },
  });
}
function workflowEntry(name) {
  const start = (input) =>
    apply(promiseThen, issue("tapedeck.workflow.start", { name, input: nullIfUndefined(input) }), [function (started) { return workflowHandle(name, started.id); }]);
  const signal = (id, signalName, payload) => {
    const where = "workflows." + name + ".signal";
    if (typeof id !== "string" || id === "") throw new TypeErrorCtor(where + ": the first argument is the id of a run start() gave (a string); got " + formatValue(id) + ".");
    if (typeof signalName !== "string" || signalName === "") throw new TypeErrorCtor(where + ": the second argument is the signal's name (a non-empty string); got " + formatValue(signalName) + ".");
    return apply(promiseThen, issue("tapedeck.workflow.signal", { name, id, signal: signalName, payload: nullIfUndefined(payload) }), [function () { return undefined; }]);
  };
  defineProperty(start, "name", { value: "start" });
  defineProperty(signal, "name", { value: "signal" });
  return freeze({ start, signal });
}
const workflowNames = config.workflows === undefined ? [] : config.workflows;
if (workflowNames.length > 0) {
  const workflows = {};
  for (let i = 0; i < workflowNames.length; i++) define(workflows, workflowNames[i], workflowEntry(workflowNames[i]));
  defineProperty(global, "workflows", { value: freeze(workflows), writable: true, configurable: true });
}

// ---- Math.random: sfc32 seeded from a 128-bit hash of the seed ----
function hash128(text) {
  let h1 = 1779033703, h2 = 3144134277, h3 = 1013904242, h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ imul(h1 ^ k, 597399067);
    h2 = h3 ^ imul(h2 ^ k, 2869860233);
    h3 = h4 ^ imul(h3 ^ k, 951274213);
    h4 = h1 ^ imul(h4 ^ k, 2716044179);
  }
  h1 = imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  return [h1, h2 ^ h1, h3 ^ h1, h4 ^ h1];
}
let [a, b, c, d] = hash128(config.seed);
function random() {
  const t = (((a + b) | 0) + d) | 0;
  d = (d + 1) | 0;
  a = b ^ (b >>> 9);
  b = (c + (c << 3)) | 0;
  c = (c << 21) | (c >>> 11);
  c = (c + t) | 0;
  return (t >>> 0) / 4294967296;
}
for (let i = 0; i < 12; i++) random();
defineProperty(Math, "random", { value: random, writable: true, configurable: true });

// ---- no garbage-collection observers ----
for (const name of ["WeakRef", "FinalizationRegistry"]) {
  delete global[name];
  defineProperty(global, name, {
    configurable: true,
    get() {
      throw new ReferenceErrorCtor(name + " is not available: scripts are replayed, and garbage collection timing is not deterministic.");
    },
  });
}

// ---- the tools module's exports ----
const groups = { __proto__: null };
for (const group of objectKeys(config.tools)) {
  const tools = {};
  for (const name of config.tools[group]) {
    const tool = group + "." + name;
    const fn = (args) => issue(tool, args);
    defineProperty(fn, "name", { value: name });
    define(tools, name, fn);
  }
  groups[group] = freeze(tools);
}
const toolsExports = freeze({ groups: freeze(groups), ToolError });
defineProperty(global, "${TOOLS_GLOBAL}", {
  configurable: true,
  get() { delete global["${TOOLS_GLOBAL}"]; return toolsExports; },
});

return { run, fail: finishError, deliver, collect };
})`;
