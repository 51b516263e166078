/**
 * What a key is told in each standing, on every plan, and by whom: over HTTP through the local gateway with the
 * template's authorizer cache (60 s), usage plans and stage throttle, on the test's clock. A banned key and a key whose
 * UTC day is spent are refused by the gateway (the authorizer's Deny, no function runs), with the status, headers and
 * body the function gives in that state at that instant; in the day's last minutes a spent key is refused by the
 * function instead (a cached Deny must not outlive the day); a key with no standing, or whose ban has just ended, is
 * served by the function. Every request that gets past the gateway counts on its plan's API key, which the template
 * puts on that plan's usage plan.
 *
 * Both answers are taken at one instant from the two secrets of one key while a rotation overlaps them (as
 * `keys rotate --overlap` leaves them): the new secret's Allow was cached before the standing, so its request reaches
 * the function; the old secret has no cached answer, so the authorizer judges it on the standing now recorded.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPENT_DENY_CUTOFF_SECONDS, banMessage, quotaMessage } from '../../contract/deny-context.ts';
import { ERROR_CODES } from '../../contract/errors.ts';
import { LIST_PETS } from '../../contract/operations/list-pets.ts';
import { PLANS, PLAN_NAMES, type PlanName } from '../../contract/plans.ts';
import { generateKey, hashKey } from '../../lambdas/domain/keys.ts';
import { noteStanding } from '../../lambdas/storage/standing.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdminOnApiClock } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';
import { countInvocations, setDayCounters } from '../helpers/key-standing.ts';
import { EVERY_PLAN, planKey, planUsagePlan, registerKeys, usedOnPlan, type PlanCase } from '../helpers/plan-keys.ts';

const STANDINGS = [
  'none',
  'limiter ban',
  'admin ban',
  'spent day',
  "spent, in the day's last minutes",
  'ban just ended',
] as const;
type StandingCase = (typeof STANDINGS)[number];

let api: TestApi;
let deps: AdminDeps;
/** Invocations of the function behind GET /pets: a request that reached it was not refused by the gateway. */
let reached: { readonly count: number };

beforeAll(async () => {
  // As deployed: the template's authorizer cache, usage plans and stage throttle.
  ({ api, deps } = await startLocalAdminOnApiClock({ devKeys: [], authCacheTtlSeconds: undefined }));
  reached = countInvocations(api, LIST_PETS.operationId);
});
afterAll(() => api?.close());

interface Answer {
  readonly by: 'function' | 'gateway';
  readonly status: number;
  readonly limit: string | null;
  readonly remaining: string | null;
  readonly reset: string | null;
  readonly retryAfter: string | null;
  /** The Error object of a refusal. */
  readonly error?: { readonly code: string; readonly message: string; readonly status: number };
}

/** GET /pets with `key` at `atMs`: what the client sees, and who answered; counted requests on each plan's key. */
async function ask(key: string, atMs: number): Promise<{ answer: Answer; counted: Record<PlanName, number> }> {
  api.clock.set(() => atMs);
  const before = reached.count;
  const used = Object.fromEntries(PLAN_NAMES.map((p) => [p, usedOnPlan(api, p)])) as Record<PlanName, number>;
  const res = await api.call('/pets?limit=1', { key });
  const body = (await res.json()) as { code?: string; message?: string; status?: number };
  const h = (name: string) => res.headers.get(name);
  return {
    answer: {
      by: reached.count > before ? 'function' : 'gateway',
      status: res.status,
      limit: h('x-ratelimit-limit'),
      remaining: h('x-ratelimit-remaining'),
      reset: h('x-ratelimit-reset'),
      retryAfter: h('retry-after'),
      ...(res.ok ? {} : { error: { code: body.code!, message: body.message!, status: body.status! } }),
    },
    counted: Object.fromEntries(PLAN_NAMES.map((p) => [p, usedOnPlan(api, p) - used[p]])) as Record<PlanName, number>,
  };
}

/** One key with two secrets, as a rotation with an overlap leaves it: `next` holds the record, `old` leads to it. */
async function overlappedKey(c: PlanCase, atMs: number) {
  const k = { ...planKey(c), old: generateKey() };
  await registerKeys(api, [k], 'standing-test');
  await api.storage.doc.send(
    new PutCommand({
      TableName: api.storage.tables.keys,
      Item: { hash: hashKey(k.old), overlapOf: hashKey(k.key), overlapUntil: atMs / 1000 + 86_400 },
    }),
  );
  return k;
}

/**
 * Puts the key in `standing` at `t0Ms` as the limiter or the admin tool leaves it (day counters, an admin's ban, the
 * standing a function recorded for a ban that has ended since).
 */
async function enter(standing: StandingCase, k: Awaited<ReturnType<typeof overlappedKey>>, t0Ms: number) {
  const t0 = t0Ms / 1000;
  switch (standing) {
    case 'none':
      return;
    case 'limiter ban':
      return setDayCounters(api, k.keyId, t0Ms, { d: 1, banUntil: t0 + 900 });
    case 'admin ban': {
      api.clock.set(() => t0Ms);
      const r = await runLocalAdmin(deps, 'keys', 'ban', k.keyId, '--minutes', '30');
      expect(r, 'keys ban').toMatchObject({ code: 0, err: '' });
      return;
    }
    case 'spent day':
    case "spent, in the day's last minutes":
      return setDayCounters(api, k.keyId, t0Ms, { d: k.limits.perDay });
    case 'ban just ended':
      await setDayCounters(api, k.keyId, t0Ms, { d: 1, banUntil: t0 + 20 });
      await noteStanding(api.storage, hashKey(k.key), { bannedUntil: t0 + 20 });
  }
}

/** What the function says in `standing` at `atSec` (its status, headers and Error object; 200: its counted headers). */
function expected(standing: StandingCase, limits: PlanCase['limits'], t0: number, atSec: number) {
  const dayEnd = atSec - (atSec % 86_400) + 86_400;
  const refusal = (code: 'key_banned' | 'quota_exceeded', limit: number, until: number, message: string) => ({
    status: 429,
    limit: String(limit),
    remaining: '0',
    reset: String(until),
    retryAfter: String(until - atSec),
    error: { code, message, status: ERROR_CODES[code].status },
  });
  switch (standing) {
    case 'limiter ban':
      return refusal('key_banned', limits.perMinute, t0 + 900, banMessage(t0 + 900, 'limiter'));
    case 'admin ban':
      return refusal('key_banned', limits.perMinute, t0 + 1_800, banMessage(t0 + 1_800, 'admin'));
    case 'spent day':
    case "spent, in the day's last minutes":
      return refusal('quota_exceeded', limits.perDay, dayEnd, quotaMessage(limits.perDay, dayEnd - atSec));
    default:
      return { status: 200, limit: String(limits.perMinute), reset: String(atSec - (atSec % 60) + 60) };
  }
}

/** Where the refusal (or the answer) comes from: the gateway refuses a ban and a spent day before its last minutes. */
const gatewayRefuses = (s: StandingCase) => s === 'limiter ban' || s === 'admin ban' || s === 'spent day';

const cases = EVERY_PLAN.flatMap((c, i) =>
  STANDINGS.map((s, j) => ({ ...c, standing: s, day: i * STANDINGS.length + j })),
);

describe.each(EVERY_PLAN.map((c) => [c.name, c] as const))('%s', (_name, c) => {
  it.each(cases.filter((x) => x.plan === c.plan).map((x) => [x.standing, x] as const))(
    '%s: the right status from the right place, told what the function tells',
    async (standing, x) => {
      const day = Date.UTC(2036, 0, 1) + x.day * 86_400_000;
      // Noon, or inside the day's last SPENT_DENY_CUTOFF_SECONDS once 30 s have passed.
      const t0Ms =
        standing === "spent, in the day's last minutes"
          ? day + 86_400_000 - (SPENT_DENY_CUTOFF_SECONDS - 60) * 1000
          : day + 12 * 3_600_000;
      const k = await overlappedKey(c, t0Ms);
      // The new secret's first request, to another operation (a lease it takes stays in that function's container):
      // the gateway caches its Allow for the TTL, from before the standing. getPet answers 404, or 410 past its sunset.
      api.clock.set(() => t0Ms);
      expect([404, 410]).toContain((await api.call('/pets/424242', { key: k.key })).status);
      await enter(standing, k, t0Ms);

      const atMs = t0Ms + 30_000;
      const viaCachedAllow = await ask(k.key, atMs);
      const viaAuthorizer = await ask(k.old, atMs);
      const want = expected(standing, k.limits, t0Ms / 1000, atMs / 1000);

      expect(viaCachedAllow.answer).toMatchObject({ by: 'function', ...want });
      expect(viaAuthorizer.answer).toMatchObject({
        by: gatewayRefuses(standing) ? 'gateway' : 'function',
        ...want,
      });
      if (want.status === 429) {
        // Every header and the whole Error object: the same answer wherever the key is refused.
        const { by: _f, ...fromFunction } = viaCachedAllow.answer;
        const { by: _g, ...fromAuthorizer } = viaAuthorizer.answer;
        expect(fromAuthorizer).toEqual(fromFunction);
      }
      // What reached the function counted on the plan's API key, nothing on another plan's; a Deny counts nowhere.
      const none = Object.fromEntries(PLAN_NAMES.map((p) => [p, 0]));
      expect(viaCachedAllow.counted).toEqual({ ...none, [c.plan]: 1 });
      expect(viaAuthorizer.counted).toEqual({ ...none, [c.plan]: gatewayRefuses(standing) ? 0 : 1 });
    },
  );

  it("its keys count on its plan's API key, which the template puts on its plan's usage plan", () => {
    expect(planUsagePlan(api, c.plan).id).toBe(`UsagePlan${PLANS[c.plan].displayName}`);
  });
});
