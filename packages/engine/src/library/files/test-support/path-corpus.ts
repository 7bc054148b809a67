/**
 * Paths a model (or whoever writes its prompt) might give the files tools. `HOSTILE_PATHS`
 * must all be refused, by every tool, with nothing read or written outside the workspace;
 * `LEGITIMATE_PATHS` must all work. The symbolic links the hostile list names are made by
 * `plantLinks` (an `evil` folder link to outside, an `evil-file` link to a file outside, a
 * `dangling` link, a `loop`, and a link inside a real folder). A test fixture only.
 */

const TRAVERSALS = [
  "..",
  "../",
  "../x",
  "../etc/passwd",
  "../../../../../../etc/passwd",
  "./../x",
  "a/..",
  "a/../..",
  "a/../../x",
  "a/b/../../../x",
  "a/./../../x",
  "a/../b",
  "..//x",
  "x/../../../../root/.ssh/id_rsa",
  "http://host/../../x",
];

const ENCODED = [
  "..%2fx",
  "..%2Fx",
  "%2e%2e/x",
  "%2E%2E/x",
  "%2e%2e%2fx",
  "%2e./x",
  ".%2e/x",
  "..%252fx",
  "%252e%252e/x",
  "..%c0%afx",
  "..%C0%AFx",
  "..%c1%9cx",
  "%c0%ae%c0%ae/x",
  "%e0%80%ae%e0%80%ae/x",
  "..%5cx",
  "a%2fb",
  "a%5cb",
  "%2f",
  "%2fetc%2fpasswd",
  "x%00.txt",
  "%00",
  "%25",
];

const SEPARATORS = [
  "..\\x",
  "..\\..\\windows\\win.ini",
  "a\\..\\b",
  "a\\b",
  "\\x",
  "\\\\server\\share\\x",
  "\\\\?\\C:\\x",
  "．．/x",
  "．．／x",
  "a／..／..／x",
  "..／x",
  "‥/x",
  "a/‥/‥/x",
  "．./x",
  "﹒﹒/x",
  "..＼x",
  "a﹨b",
];

const ABSOLUTE = [
  "/",
  "/etc/passwd",
  "//etc/passwd",
  "///etc",
  "/tmp",
  "/proc/self/environ",
  "~",
  "~/.ssh/id_rsa",
  "~/x",
  "C:\\Windows",
  "C:/Windows/x",
  "c:x",
  "Z:",
];

const CONTROL = ["a\u0000b", "\u0000", "x.txt\u0000.png", "\u0000../x", "a\nb", "a\rb", "\t", "x\u001b[31m", "a\u007fb", "\u0001", "dir/\u0008x"];

const LINKS = [
  "evil",
  "evil/",
  "evil/secret.txt",
  "evil/new.txt",
  "evil/sub/new.txt",
  "evil-file",
  "dangling",
  "dangling/x",
  "loop",
  "loop/x",
  "inner/evil",
  "inner/evil/secret.txt",
  "./evil/secret.txt",
  "inner/../evil/secret.txt",
];

const OVERLONG = ["a".repeat(256), "é".repeat(128), `dir/${"b".repeat(300)}`, `${"x/".repeat(2_100)}f`, `${"d/".repeat(65)}f`, "😀".repeat(64) + "x"];

/** The classic payloads again below ordinary folders: a check that only looks at the start of a path misses them. */
const NESTED = ["src/", "./src/", "src/lib/"].flatMap((prefix) =>
  ["../../../etc/passwd", "..%2f..%2fetc%2fpasswd", "..\\..\\etc", "．．/．．/etc", "x\u0000/../y", "%2e%2e/etc"].map((payload) => prefix + payload),
);

/** Every path that must be refused, each at most once. */
export const HOSTILE_PATHS: readonly string[] = [
  ...new Set([...TRAVERSALS, ...ENCODED, ...SEPARATORS, ...ABSOLUTE, ...CONTROL, ...LINKS, ...OVERLONG, ...NESTED]),
];

/** Paths that must work: written, read back, listed. */
export const LEGITIMATE_PATHS: readonly string[] = [
  "a.txt",
  "dir/b.txt",
  "deep/1/2/3/4/5/6/7/8/9/10/f.txt",
  "with space.txt",
  "ünïcödé.md",
  "日本語/ファイル.txt",
  "emoji-😀.txt",
  ".hidden",
  ".config/app.json",
  "...",
  "....txt",
  "a..b.txt",
  "..a",
  "a..",
  ".. ",
  "100%.txt",
  "100%20percent.txt",
  "name%41.txt",
  "./rel.txt",
  "a//double.txt",
  "trailing-dot.",
  "x".repeat(255),
  `${"é".repeat(127)}x`,
  "-dash",
  "#hash",
  "semi;colon",
  'quote"s',
  "back`tick",
  "$dollar",
  "CON",
  "ﬁle-ligature.txt",
  "a∕b-division-slash.txt",
  "．hidden-fullwidth-dot",
  "inner/real.txt",
  "inside-link",
];

/**
 * The spellings of `path` that the workspace accepts and writes to `path` itself (the corpus's
 * legitimate forms: `./`, `//`, `/.`, a trailing `/`), as a model may write them to slip past a
 * rule matched on the text. Each normalises to `path` (`checkWorkspacePath(…).relative`).
 */
export function spellingsOf(path: string): readonly string[] {
  const inner = path.includes("/") ? [path.replaceAll("/", "//"), path.replaceAll("/", "/./")] : [];
  return [path, `${path}/`, `${path}//`, `${path}/.`, `${path}/./`, `./${path}`, `.//${path}`, `./${path}/.`, ...inner];
}

/** Paths the files tools' default rules ask for (`write-approval.ts`): git internals, CI workflows, shell scripts, env files. */
export const ASKED_PATHS_CORPUS: readonly string[] = [
  ".env",
  ".env.local",
  "conf/.env",
  "run.bash",
  "deploy.sh",
  "scripts/deploy.sh",
  ".github/workflows/ci.yml",
  "p1/.github/workflows/ci.yml",
  ".git/hooks/pre-commit",
  "repo/.git/config",
];
