/**
 * The local gateway is the synthesized stack: its request ids, its usage plans and its gateway responses, over
 * HTTP. API Gateway sends `x-amzn-RequestId` on every response and passes the same id as requestContext.requestId
 * (Developer Guide, "$context variables"); usage plans count every request the authorizer lets through, whatever
 * the function answers, and reject what their bucket cannot hold with the THROTTLED gateway response.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { undeclaredMethod } from '../helpers/samples.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { planUsagePlan } from '../helpers/plan-keys.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
let api: TestApi;
const logLines: string[] = [];

beforeAll(async () => {
  api = await startTestApi({
    env: { LOG_LEVEL: 'DEBUG' },
    log: (line) => logLines.push(line),
    // Its usage-plan test spends a plan's bucket at one frozen instant, past a method's stage burst.
    stageThrottle: false,
  });
});
afterAll(() => api?.close());
afterEach(() => api.clock.reset());
/** A resource and a method no route declares on it (the gateway's 405). */
const undeclared = undeclaredMethod();

describe('request ids', () => {
  it('sends a fresh x-amzn-RequestId on every response, gateway-made or not', async () => {
    const responses = await Promise.all([
      api.call('/pets'),
      api.call('/pets', { key: '' }),
      api.call('/nowhere', { contract: false }),
      api.call(undeclared.path, { method: undeclared.method }),
      api.call('/pets/abc'),
    ]);
    const ids = responses.map((r) => r.headers.get('x-amzn-requestid'));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("is the id in the function's log lines for that request", async () => {
    logLines.length = 0;
    const res = await api.call('/pets');
    const id = res.headers.get('x-amzn-requestid');
    const entries = logLines
      .flatMap((l) => l.split('\n'))
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.every((e) => e.correlation_id === id)).toBe(true);
  });
});

describe('usage plans from the template', () => {
  it("counts every request the authorizer admits, the function's own 429s included, then answers the gateway's rejection", async () => {
    // The Pro key counts against the Pro plan's API key, on the Pro usage plan, which all Pro keys share.
    const plan = planUsagePlan(api, 'pro');
    const key = api.keys.pro;
    // A fixed instant: the bucket does not refill, so a client that never waits meets its burst.
    const limit = plan.burstLimit!;
    const instant = Date.now() + 86_400_000;
    api.clock.set(() => instant);
    const before = api.usage.total();
    const statuses: number[] = [];
    for (let i = 0; i < limit; i += 25) {
      const batch = Array.from({ length: Math.min(25, limit - i) }, () => api.call('/pets', { key, contract: false }));
      for (const res of await Promise.all(batch)) statuses.push(res.status);
    }
    expect(api.usage.total() - before, "every admitted request counts, 200 or the app's 429").toBe(limit);
    expect(new Set(statuses)).toEqual(new Set([200, 429]));
    const rejection = await api.call('/pets', { key, contract: false });
    expect(api.usage.total() - before, 'a rejected request is not counted').toBe(limit);
    const def = api.model.gatewayResponses.get('THROTTLED')!;
    expect(rejection.status).toBe(def.statusCode);
    for (const [name, value] of Object.entries(def.headers)) expect(rejection.headers.get(name), name).toBe(value);
    expect(rejection.headers.get('x-amzn-requestid')).toMatch(UUID);
  });

  it('does not count requests the authorizer refuses or MOCK methods answer', async () => {
    const before = api.usage.total();
    await api.call('/pets', { key: 'unknown_key_0123456789abcdefghij' });
    await api.call(undeclared.path, { method: undeclared.method, key: api.keys.pro });
    expect(api.usage.total()).toBe(before);
    // A key of another plan, with room in its plan's bucket (the test before spent the Pro plan's at a frozen instant).
    await api.call('/pets', { key: api.keys.business });
    expect(api.usage.total()).toBe(before + 1);
  });
});

describe('the template drives the gateway', () => {
  it('takes the authorizer from the template: Authorization header, validation expression, cache TTL', () => {
    const [auth] = [...api.model.authorizers.values()];
    expect(auth).toMatchObject({ identityHeader: 'Authorization', ttlSeconds: 60 });
    expect(new RegExp(auth!.validationExpression!).test('Bearer short')).toBe(false);
  });

  it('answers an undeclared method with the MOCK method of the template: 405 with Allow', async () => {
    const res = await api.call(undeclared.path, { method: undeclared.method, body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(undeclared.allow);
  });
});

describe('client-chosen names', () => {
  it('passes a header named like an Object member (constructor, __proto__, toString) as a plain value, and refuses such a query parameter by name', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const res = await api.call('/pets?limit=1', { key: api.keys.business, headers: { [name]: 'x' } });
      expect(res.status, name).toBe(200);
      // Not a parameter listPets declares: refused by name like any unknown one, never taken for a member.
      const query = await api.call(`/pets?${name}=1&limit=1`, { key: api.keys.business });
      expect(query.status, name).toBe(400);
      expect(await query.json()).toMatchObject({
        code: 'validation_failed',
        message: expect.stringContaining(`"${name}"`),
      });
    }
  });
});
