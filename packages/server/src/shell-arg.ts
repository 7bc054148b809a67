/** `text` as one word of a POSIX shell command. */
export function shellArg(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
