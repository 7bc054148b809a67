import type { Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { Dispatcher } from "undici";

/**
 * Reading a response body within the `http` tool's bound. A compressed body (Content-Encoding
 * gzip, deflate or br: servers send it whether asked or not) is decoded as it arrives, and the
 * bound holds for both the bytes on the wire and the bytes decoded: a gzip bomb (5 MiB that
 * decode to 5 GiB) stops at the bound, not at the wire's 5 MiB. Another encoding, or several,
 * is left as received.
 *
 * Events, not `for await`: the async iterator costs more than the rest of a small request's
 * handling.
 */

export type BodyRead =
  /** The whole body, decoded. */
  | { readonly kind: "read"; readonly bytes: Buffer }
  /** Past the bound: `what` says which bytes ("went past N bytes", "decoded past N bytes (gzip)"). */
  | { readonly kind: "too_large"; readonly what: string }
  /** The body says it is compressed but does not decode. */
  | { readonly kind: "undecodable"; readonly encoding: string; readonly reason: string };

const DECODERS: Readonly<Record<string, () => Transform>> = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** The body of `response`, read and decoded within `max` bytes. Rejects if the stream fails or is aborted. */
export function readBody(body: Dispatcher.ResponseData["body"], contentEncoding: string | undefined, max: number): Promise<BodyRead> {
  const encoding = contentEncoding?.trim().toLowerCase() ?? "";
  const decoder = DECODERS[encoding]?.();
  const wire = readBounded(body, max, decoder);
  if (decoder === undefined) return wire;
  return new Promise<BodyRead>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (read: BodyRead) => {
      if (done) return;
      done = true;
      resolve(read);
    };
    decoder.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) return void chunks.push(chunk);
      decoder.destroy();
      body.destroy();
      finish({ kind: "too_large", what: `decoded past ${max} bytes (its Content-Encoding is ${encoding})` });
    });
    decoder.once("end", () => finish({ kind: "read", bytes: Buffer.concat(chunks, size) }));
    decoder.once("error", (error: Error) => {
      body.destroy();
      finish({ kind: "undecodable", encoding, reason: error.message });
    });
    wire.then((read) => {
      if (read.kind !== "read") {
        decoder.destroy();
        finish(read);
      }
    }, reject);
  });
}

/**
 * The whole body, or `too_large` once it goes past `max` bytes (then it is destroyed, and the
 * connection with it). With a `decoder`, each chunk goes to it as it arrives and the decoder is
 * ended with the body.
 */
function readBounded(body: Dispatcher.ResponseData["body"], max: number, decoder: Transform | undefined): Promise<BodyRead> {
  return new Promise<BodyRead>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    body.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        ended = true;
        body.destroy();
        return void resolve({ kind: "too_large", what: `went past ${max} bytes` });
      }
      if (decoder === undefined) chunks.push(chunk);
      else if (!decoder.destroyed) decoder.write(chunk);
    });
    body.once("end", () => {
      ended = true;
      decoder?.end();
      resolve({ kind: "read", bytes: decoder === undefined ? Buffer.concat(chunks, size) : Buffer.alloc(0) });
    });
    body.once("error", reject);
    // `close` follows `end` on every response: an Error (and its stack) only when it came first.
    body.once("close", () => {
      if (!ended) reject(new Error("the response body was closed before its end"));
    });
  });
}
