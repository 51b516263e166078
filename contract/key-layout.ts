/**
 * The key layout: which usage keys an authorizer can name, numbered so the admin tool can compare what the deployed
 * stack's authorizer understands with what a write of its needs. The stack publishes its layout as an output
 * (lib/stacks/outputs.ts `keyLayout`); a stack without that output runs a release from before it, whose authorizer
 * understands the oldest layout. An admin write that would leave a record the deployed authorizer names a usage key
 * for that is on no usage plan (API Gateway answers 403) is refused until the stage runs a release that understands
 * it: a sweep run before the deploy moved paying keys into pools the old authorizer did not know, then deleted their
 * own API keys, which that authorizer still named, and the customers stayed refused after a rollback.
 *
 * Plain data, no imports, so the stack, the admin tool and the tests share one table.
 */

export interface KeyLayoutInfo {
  /** The first release whose authorizer understands it, as an admin is told to deploy it. */
  readonly release: string;
  /** What its authorizer names, for the refusal's message. */
  readonly understands: string;
}

export const KEY_LAYOUTS = {
  1: {
    release: '3357b0c',
    understands:
      'Free keys on the Free pool (and its one probation key); a paying key on an API key of its own, named by its key id',
  },
  2: {
    release: 'the first release after 3357b0c (the first whose stack has the KeyLayout output)',
    understands:
      "every plan's keys on their pools (an Enterprise key on its bracket's), with each plan's probation shards and a " +
      "bracket's probation member",
  },
} as const satisfies Record<number, KeyLayoutInfo>;
export type KeyLayout = keyof typeof KEY_LAYOUTS;

/** The layout this code's authorizer understands, which its stack publishes. */
export const KEY_LAYOUT: KeyLayout = 2;

/** What a stack without the output understands: it runs a release from before layouts were published. */
export const OLDEST_KEY_LAYOUT: KeyLayout = 1;

/** The stack output's value read back (any text), as a layout; absent: the oldest. */
export function keyLayoutOf(output: string | undefined): KeyLayout {
  if (output === undefined || output === '') return OLDEST_KEY_LAYOUT;
  const n = Number(output);
  // A layout newer than this code knows: this code cannot tell what it needs, so it takes its own (its writes need
  // nothing past it, and a newer authorizer still understands what older ones did).
  if (Number.isInteger(n) && n > KEY_LAYOUT) return KEY_LAYOUT;
  if (!Object.hasOwn(KEY_LAYOUTS, n)) throw new Error(`unknown key layout "${output}"`);
  return n as KeyLayout;
}

/**
 * The layout an authorizer needs to name the usage key of a key of `plan` that has no API key of its own: its pool
 * member. Layout 1 pooled only the Free plan; for any other it named the key's own API key, whatever the record said.
 */
export const layoutForPooled = (plan: string): KeyLayout => (plan === 'free' ? 1 : 2);
