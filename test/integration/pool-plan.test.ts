/**
 * Locally, as deployed: a Free key's requests count against its pool member on the pool's usage plan from the
 * template (a bucket and a day quota sized for many Free customers), not against a plan of its own.
 */
import { beforeAll, expect, it } from 'vitest';
import { FREE_KEY_POOL, poolThrottle } from '../../contract/key-pool.ts';
import { localAssembly } from '../../lib/local/synth.ts';
import { apiModel, type ApiModel } from '../../lib/local/template.ts';
import { POOL_PLAN_ID, UsagePlanEnforcer } from '../../lib/local/usage-plans.ts';

let model: ApiModel;
beforeAll(async () => {
  model = apiModel((await localAssembly()).template);
}, 240_000);

it("puts a Free key's pool member on the template's pool plan, one bucket per member", () => {
  const usage = new UsagePlanEnforcer(model);
  const pool = usage.planFor('member-a', { plan: 'free' });
  expect(pool?.id).toBe(POOL_PLAN_ID);
  const t = poolThrottle();
  expect(pool).toMatchObject({ rateLimit: t.rateLimit, burstLimit: t.burstLimit, quota: { limit: t.quotaPerDay } });
  // The pool's burst, far above one Free customer's: the member's bucket empties only after it.
  for (let i = 0; i < t.burstLimit; i++) expect(usage.admit('member-a', { plan: 'free' }, 0)).toBe('ok');
  expect(usage.admit('member-a', { plan: 'free' }, 0)).toBe('THROTTLED');
  // Another member has a bucket of its own.
  expect(usage.admit('member-b', { plan: 'free' }, 0)).toBe('ok');
  expect(FREE_KEY_POOL.members).toBeGreaterThan(1);
});
