/**
 * Keys of every plan for the tests over HTTP of what a key's plan shares with its neighbours: the same property is
 * shown for Free, Pro, Business and Enterprise. Records are written as the admin tool writes them (an Enterprise key
 * with its agreed limits), served by the local gateway on a clock the test moves. Every key of a plan counts on its
 * plan's one API key (contract/plans.ts planUsageKeyValue), so all of them share that usage plan's bucket.
 */
import { PLANS, planUsageKeyValue, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import { generateKey, generateKeyId, hashKey } from '../../lambdas/domain/keys.ts';
import { createKeyAdminStore } from '../../lambdas/storage/key-store.ts';
import type { UsagePlanDef } from '../../lib/local/template-model.ts';
import type { TestApi } from './api.ts';

/** One plan under test and its keys' limits. */
export interface PlanCase {
  readonly name: string;
  readonly plan: PlanName;
  readonly limits: PlanLimits;
}

/**
 * The plans every property is shown for. The Enterprise limits (1,200/min, 30,000/day) are above the limiter's
 * exact counting (1,000/min), so that key takes leases: the other path of the limiter.
 */
export const EVERY_PLAN: readonly PlanCase[] = [
  { name: 'Free', plan: 'free', limits: PLANS.free.limits! },
  { name: 'Pro', plan: 'pro', limits: PLANS.pro.limits! },
  { name: 'Business', plan: 'business', limits: PLANS.business.limits! },
  { name: 'Enterprise', plan: 'enterprise', limits: { perMinute: 1_200, perDay: 30_000 } },
];

export interface PlanKey {
  readonly key: string;
  readonly keyId: string;
  readonly plan: PlanName;
  readonly limits: PlanLimits;
}

/** A fresh key of `c`'s plan (not stored yet: registerKeys). */
export function planKey(c: Pick<PlanCase, 'plan' | 'limits'>): PlanKey {
  return { key: generateKey(), keyId: generateKeyId(), plan: c.plan, limits: c.limits };
}

/** Writes each key's record as the admin tool writes it (an Enterprise key with its agreed limits), active. */
export async function registerKeys(api: TestApi, keys: readonly PlanKey[], owner = 'plan-test'): Promise<void> {
  const store = createKeyAdminStore(api.storage);
  for (const k of keys)
    await store.upsert({
      hash: hashKey(k.key),
      keyId: k.keyId,
      owner,
      plan: k.plan,
      // Fixed plans' limits come from the plans table, as on a record the admin tool writes.
      ...(k.plan === 'enterprise' ? { limits: k.limits } : {}),
      status: 'active',
      createdAt: '2030-01-01T00:00:00.000Z',
    });
}

/** The stage the plans' API key values are named for, as the authorizer is told (USAGE_KEYS_STAGE). */
function usageKeysStage(api: TestApi): string {
  return String([...api.model.functions.values()].map((f) => f.environment.USAGE_KEYS_STAGE).find(Boolean));
}

/** `plan`'s API key on the API's stage: what the authorizer names for every key of the plan. */
const planUsageKey = (api: TestApi, plan: PlanName): string => planUsageKeyValue(usageKeysStage(api), plan);

/** The usage plan the template attaches `plan`'s API key to. */
export function planUsagePlan(api: TestApi, plan: PlanName): UsagePlanDef {
  const id = api.model.usagePlanKeys?.get(planUsageKey(api, plan));
  const def = id ? api.model.usagePlans.get(id) : undefined;
  if (!def) throw new Error(`the template attaches no usage plan to ${plan}'s API key`);
  return def;
}

/** Requests counted today on `plan`'s API key (what API Gateway's get-usage reports). */
export const usedOnPlan = (api: TestApi, plan: PlanName): number => api.usage.used(planUsageKey(api, plan));

/** One request of a schedule: `key`'s request (GET /pets unless `path`/`init` say) at `atMs`, tallied under `who`. */
export interface Shot {
  readonly who: string;
  readonly key: string;
  readonly atMs: number;
  readonly path?: string;
  readonly init?: RequestInit;
}

/** `n` requests of `key` spread evenly over [fromMs, fromMs + spanMs). */
export const spread = (who: string, key: string, n: number, fromMs: number, spanMs: number): Shot[] =>
  Array.from({ length: n }, (_, i) => ({ who, key, atMs: fromMs + (i * spanMs) / n }));

/**
 * What a client saw: `200`, or the status and the Error object's code (`429 key_banned`), marked `(gateway)` when
 * the gateway refused it uncounted (its static X-RateLimit-Limit: 0).
 */
export type Seen = string;

/**
 * How far ahead of the earliest request still in flight `fire` may start another: the clock the functions read is
 * then never more than this past a request's own instant, however sparse the schedule.
 */
const MAX_LEAD_MS = 20;

/**
 * Sends `shots` in time order, up to `inFlight` at a time, each when the gateway's clock (api.clock, which this sets)
 * has reached its instant: a request arrives at or after its instant, never before (so no bucket sees them faster
 * than scheduled), and at most MAX_LEAD_MS after it. Answers how many of each answer each `who` got.
 */
export async function fire(
  api: TestApi,
  shots: readonly Shot[],
  inFlight = 40,
): Promise<Map<string, Map<Seen, number>>> {
  const ordered = [...shots].sort((a, b) => a.atMs - b.atMs);
  const seen = new Map<string, Map<Seen, number>>();
  const done = ordered.map(() => false);
  let now = ordered[0]?.atMs ?? 0;
  api.clock.set(() => now);
  let next = 0;
  let earliest = 0;
  let settled: () => void = () => {};
  let oneSettles = new Promise<void>((resolve) => (settled = resolve));
  const worker = async () => {
    while (next < ordered.length) {
      if (earliest < next && ordered[next]!.atMs > ordered[earliest]!.atMs + MAX_LEAD_MS) {
        await oneSettles;
        continue;
      }
      const i = next++;
      const shot = ordered[i]!;
      now = Math.max(now, shot.atMs);
      const res = await api.call(shot.path ?? '/pets?limit=1', { ...shot.init, key: shot.key, contract: false });
      const { code } = (await res.json()) as { code?: string };
      // The gateway's own 429 (THROTTLED) counts nothing, so it says X-RateLimit-Limit: 0.
      const uncounted = res.headers.get('x-ratelimit-limit') === '0' ? ' (gateway)' : '';
      const answer = res.ok ? String(res.status) : `${res.status} ${code}${uncounted}`;
      const tally = seen.get(shot.who) ?? new Map<Seen, number>();
      tally.set(answer, (tally.get(answer) ?? 0) + 1);
      seen.set(shot.who, tally);
      done[i] = true;
      while (earliest < next && done[earliest]) earliest++;
      settled();
      oneSettles = new Promise<void>((resolve) => (settled = resolve));
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return seen;
}

/** A tally as a plain object, for toEqual. */
export const tallyOf = (seen: Map<string, Map<Seen, number>>, who: string): Record<Seen, number> =>
  Object.fromEntries(seen.get(who) ?? []);
