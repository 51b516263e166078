/**
 * `keys set-plan` under continuous traffic: the client is never refused as unknown or forbidden (no 401, no 403) at
 * any point, before, during or after a plan change, and within the authorizer cache's TTL its requests are counted
 * with the new limits (X-RateLimit-Limit, what it is served) and on the new plan's API key. Over HTTP through the
 * local gateway as deployed (the template's authorizer cache, usage plans and stage throttle), the admin tool
 * `--local` on the API's clock: a client sending 6 requests a second and waiting out every 429 it is told to, moved
 * from Free to Business (an upgrade), to an Enterprise contract, then to Pro (a downgrade it notices).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PLAN_NAMES, PLANS, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { runLocalAdmin, startLocalAdminOnApiClock } from '../helpers/admin.ts';
import type { TestApi } from '../helpers/api.ts';
import { usedOnPlan } from '../helpers/plan-keys.ts';

let api: TestApi;
let deps: AdminDeps;
let ttlMs: number;
beforeAll(async () => {
  ({ api, deps } = await startLocalAdminOnApiClock({ devKeys: [], authCacheTtlSeconds: undefined }));
  ttlMs = [...api.model.authorizers.values()][0]!.ttlSeconds * 1000;
});
afterAll(() => api?.close());

interface Seen {
  readonly atMs: number;
  readonly answer: string;
  readonly limit: string | null;
}

interface Phase {
  readonly plan: PlanName;
  readonly limits: PlanLimits;
}
/** The plan changes, each at the client's first request at or after its second, and the limits each gives. */
const MOVES: ReadonlyArray<Phase & { readonly atSec: number }> = [
  { atSec: 30, plan: 'business', limits: PLANS.business.limits! },
  { atSec: 240, plan: 'enterprise', limits: { perMinute: 2_000, perDay: 1_000_000 } },
  { atSec: 360, plan: 'pro', limits: PLANS.pro.limits! },
];
const END_SEC = 540;
const PER_SECOND = 6;

it('moves a key between plans under traffic: no 401 or 403, the new limits within the cache TTL', async () => {
  const start = Date.UTC(2037, 8, 1, 12, 0, 0);
  let t = start;
  api.clock.set(() => t);
  const created = await runLocalAdmin(deps, 'keys', 'create', '--owner', 'moving', '--plan', 'free', '--json');
  const { keyId, key } = JSON.parse(created.out) as { keyId: string; key: string };

  const seen: Seen[] = [];
  /** Per second's requests: their instant and the plans whose API key counted them. */
  const counted: Array<{ atMs: number; plans: PlanName[] }> = [];
  const phases: Array<Phase & { fromMs: number }> = [{ plan: 'free', limits: PLANS.free.limits!, fromMs: start }];
  const pending = [...MOVES];
  while (t < start + END_SEC * 1000) {
    const move = pending[0] && t >= start + pending[0].atSec * 1000 ? pending.shift() : undefined;
    const before = Object.fromEntries(PLAN_NAMES.map((p) => [p, usedOnPlan(api, p)]));
    // The move runs while a second's requests are in flight.
    const [moved, ...batch] = await Promise.all([
      move
        ? runLocalAdmin(
            deps,
            'keys',
            'set-plan',
            keyId,
            move.plan,
            ...(move.plan === 'enterprise'
              ? ['--per-minute', String(move.limits.perMinute), '--per-day', String(move.limits.perDay)]
              : []),
          )
        : undefined,
      ...Array.from({ length: PER_SECOND }, async (): Promise<Seen> => {
        const res = await api.call('/pets?limit=1', { key });
        const { code } = (await res.json()) as { code?: string };
        return {
          atMs: t,
          answer: res.ok ? '200' : `${res.status} ${code}`,
          limit: res.headers.get('x-ratelimit-limit'),
        };
      }),
    ]);
    if (move) {
      expect(moved, `set-plan ${move.plan}`).toMatchObject({ code: 0, err: '' });
      phases.push({ ...move, fromMs: t });
    }
    seen.push(...(batch as Seen[]));
    counted.push({ atMs: t, plans: PLAN_NAMES.filter((p) => usedOnPlan(api, p) > before[p]!) });
    // Honours the headers: after a 429, nothing until its minute's end (Retry-After).
    t = (batch as Seen[]).some((s) => s.answer !== '200') ? (Math.floor(t / 60_000) + 1) * 60_000 : t + 1_000;
  }

  // Never refused as unknown or forbidden, never a 5xx: only the limits' 429s, and never a ban.
  expect([...new Set(seen.map((s) => s.answer))].sort()).toEqual(['200', '429 rate_limited']);
  for (const [i, phase] of phases.entries()) {
    // From the TTL after the move (the cached answers before it are gone) to the next move.
    const from = phase.fromMs + (i ? ttlMs : 0);
    const to = phases[i + 1]?.fromMs ?? start + END_SEC * 1000;
    const settled = seen.filter((s) => s.atMs >= from && s.atMs < to);
    expect(settled.length, phase.plan).toBeGreaterThan(0);
    // Its limits on every answer, and its plan's API key counting every request.
    expect(new Set(settled.map((s) => s.limit)), phase.plan).toEqual(new Set([String(phase.limits.perMinute)]));
    const plans = counted.filter((c) => c.atMs >= from && c.atMs < to).flatMap((c) => c.plans);
    expect(new Set(plans), phase.plan).toEqual(new Set([phase.plan]));
    // What the client notices, each whole minute: Free's 60, all it sends on Business and Enterprise, Pro's 300.
    for (let m = Math.ceil(from / 60_000) * 60_000; m + 60_000 <= to; m += 60_000) {
      const served = seen.filter((s) => s.answer === '200' && s.atMs >= m && s.atMs < m + 60_000).length;
      expect(served, `${phase.plan}, the minute from ${new Date(m).toISOString()}`).toBe(
        Math.min(phase.limits.perMinute, 60 * PER_SECOND),
      );
    }
  }
});
