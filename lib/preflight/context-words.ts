/** The `-c key=value` words the deploy tools (preflight, walk-back) read, and write back into the commands they name. */

/** The context from `-c` values, or what is wrong with one. */
export function contextOf(words: readonly string[]): Record<string, string> | string {
  const context: Record<string, string> = {};
  for (const kv of words) {
    const at = kv.indexOf('=');
    if (at < 1) return `-c takes key=value, got "${kv}"`;
    context[kv.slice(0, at)] = kv.slice(at + 1);
  }
  return context;
}

/** A value as one shell word: as it is where it is plain, else single-quoted (a named command pastes as it is). */
const shellWord = (v: string) => (/^[\w@%+=:,./-]*$/.test(v) ? v : `'${v.replaceAll("'", `'\\''`)}'`);

/** The `-c key=value` words for a context, the first-deploy switch left out (each command adds it where it belongs). */
export const contextArgs = (context: Readonly<Record<string, string>>, switchKey: string): string =>
  Object.entries(context)
    .filter(([k]) => k !== switchKey)
    .map(([k, v]) => `-c ${k}=${shellWord(v)}`)
    .join(' ');
