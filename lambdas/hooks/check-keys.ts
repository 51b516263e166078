/**
 * The pre-traffic check's keys: one issued key per plan the stage sells, kept in one Secrets Manager secret
 * (`animal-store/<stage>/pre-traffic-check-key`) as a JSON object of plan name to key:
 *   {"free":"ask2_…","pro":"ask2_…","business":"ask2_…","enterprise":"ask2_…"}
 * The admin tool writes it with formatCheckKeys (lib/admin/check-key.ts) and the hook reads it with checkKeysOf, so
 * the two sides share one format. The authorizer is checked with every plan's key; the operations with Business's.
 * Before, the secret held one bare key: that form still parses, as a secret naming no plan's key, so the hook says
 * it cannot judge and names the command that upgrades it.
 */
import * as z from 'zod/mini';
import { PLAN_NAMES, type PlanName } from '../../contract/plans.ts';

export interface CheckKeys {
  /** Each plan's key the secret holds. */
  readonly byPlan: Readonly<Partial<Record<PlanName, string>>>;
  /** The plans the stage sells with no key in the secret, in PLAN_NAMES order: the check cannot judge them. */
  readonly missing: readonly PlanName[];
  /** The old form's one key (a bare key string), on no plan the secret names: the admin tool upgrades it. */
  readonly single?: string;
}

/** The command that issues every plan's check key on a stage and stores them (run again, it finishes a stopped run). */
export const issueCheckKeysCommand = (stage: string): string =>
  `npm run admin -- keys issue-check-key --stage ${stage}`;

/** What the secret must hold, for error messages: its shape, never a value. */
export const CHECK_KEYS_SHAPE = `a JSON object of plan name to key, {${PLAN_NAMES.map((p) => `"${p}":"ask2_…"`).join(',')}}`;

/** A key as issued: `ask2_`/`ask_` and base64url, no whitespace (the old form's one key is told apart by it). */
const KEY = /^[A-Za-z0-9_-]{20,200}$/;

const Stored = z.record(z.string(), z.string().check(z.regex(KEY)));

/**
 * The keys in the secret's value. Plan names are matched whatever their case (a secret written by hand may say
 * "Enterprise"). Throws an Error naming the expected shape on anything else; the message never repeats the value.
 */
export function checkKeysOf(secretString: string): CheckKeys {
  const text = secretString.trim();
  if (KEY.test(text)) return { byPlan: {}, missing: [...PLAN_NAMES], single: text };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`the check keys' secret holds neither ${CHECK_KEYS_SHAPE} nor a key`);
  }
  const parsed = Stored.safeParse(json);
  if (!parsed.success) {
    // Where it is wrong, by property name: the values are keys, and stay out of messages and logs.
    const where = [...new Set(parsed.error.issues.map((i) => i.path.map(String).join('.') || '(the value)'))];
    throw new Error(`the check keys' secret is not ${CHECK_KEYS_SHAPE}: wrong at ${where.join(', ')}`);
  }
  const byPlan: Partial<Record<PlanName, string>> = {};
  const unknown: string[] = [];
  for (const [name, key] of Object.entries(parsed.data)) {
    const plan = PLAN_NAMES.find((p) => p === name.toLowerCase());
    if (!plan) unknown.push(name);
    else if (byPlan[plan] !== undefined && byPlan[plan] !== key)
      throw new Error(`the check keys' secret names plan ${plan} twice, with different keys`);
    else byPlan[plan] = key;
  }
  // A name that is no plan is a typo or a plan no longer sold: either way a key would be sent to no plan's check.
  if (unknown.length)
    throw new Error(
      `the check keys' secret names ${unknown.map(nameShown).join(', ')}, no plan ` +
        `of the stage (${PLAN_NAMES.join(', ')}): it must be ${CHECK_KEYS_SHAPE}`,
    );
  return { byPlan, missing: PLAN_NAMES.filter((p) => byPlan[p] === undefined) };
}

/** A property name in a message: a short one as it is (a typo), a long one by its length (it may be a key). */
const nameShown = (n: string) =>
  n.length <= 16 && !n.startsWith('ask') ? JSON.stringify(n) : `a name of ${n.length} characters`;

/** The secret's value for these keys, as checkKeysOf reads it: plans in PLAN_NAMES order. */
export function formatCheckKeys(byPlan: Readonly<Partial<Record<PlanName, string>>>): string {
  const out: Partial<Record<PlanName, string>> = {};
  for (const p of PLAN_NAMES) if (byPlan[p] !== undefined) out[p] = byPlan[p];
  return JSON.stringify(out);
}
