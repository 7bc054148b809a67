import { hash, randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/**
 * A run id: `run_` + 48 bits of time + 80 random bits, base32. Ids sort by creation time and
 * cannot be guessed, which matters once ids appear in URLs.
 */
export function newRunId(now: number = Date.now()): string {
  return `run_${timeSortedRandom(now)}`;
}

/** A schedule id: `sch_` and the same 128 bits as a run id's. */
export function newScheduleId(now: number = Date.now()): string {
  return `sch_${timeSortedRandom(now)}`;
}

function timeSortedRandom(now: number): string {
  const bytes = new Uint8Array(16);
  const time = BigInt(Math.max(0, Math.floor(now)));
  for (let i = 0; i < 6; i++) bytes[i] = Number((time >> BigInt(8 * (5 - i))) & 0xffn);
  bytes.set(randomBytes(10), 6);
  return base32(bytes);
}

/** Hex SHA-256 of a string. (`hash` is the one-shot form of `createHash`: no Hash object, a third of the time.) */
export function sha256Hex(text: string): string {
  return hash("sha256", text);
}
