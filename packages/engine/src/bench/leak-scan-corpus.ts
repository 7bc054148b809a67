/**
 * Adversarial inputs for the leak scanner, shared by its fuzz test (correctness on them) and the
 * benchmark (its time on them must grow linearly): near misses of every key shape, repeated so
 * that a token could start at every position.
 */

/** Prefixes and fragments of every shape, each one character or one segment short of a match. */
export const NEAR_MISSES = [
  "sk-",
  "sk-ant-",
  "sk-proj-",
  "sk_live_",
  "rk_test_",
  "whsec_",
  "ghp_",
  "github_pat_",
  "xoxb-",
  "AKIA",
  "ASIA",
  "AIza",
  "eyJ",
  "eyJhbGciOiJI.",
  ".eyJzdWIiOiIx",
  "-----BEGIN RSA PRIVATE KEY-----\n",
  "-----BEGIN ",
  "-----END ",
  "-----",
  "Bearer ",
  "bearer\t",
  "aws_secret_access_key=",
  '"SecretAccessKey":"',
  "awssecretkey",
  "/",
  "+",
  "=",
  ".",
  " ",
  "\n",
  "_",
  "-",
];

export const HANDCRAFTED = [
  "sk-",
  "sk-ant-a",
  "ghp_a",
  "-----BEGIN RSA PRIVATE KEY-----\n",
  "-----BEGIN RSA PRIVATE KEY-----",
  "-----BEGIN X PRIVATE KEY-----\n-----END ",
  "bearer ",
  "Bearer a/",
  "eyJaaaaaaaaaaa.",
  "eyJaaaaaaaaaaa.eyJbbbbbbbbbbb",
  "aws_secret_access_key=",
  "/awssecretkey",
  "secret_access_key: a/",
  "AKIAAAAAAAAAAAAAAAAAA",
  "AIza",
  "a".repeat(1000),
  "-",
];

export const KB = 1024;

/** `text` repeated to exactly `size` characters. */
export function grow(text: string, size: number): string {
  return text.repeat(Math.ceil(size / text.length)).slice(0, size);
}
