/**
 * The stage's throttle and the account's, over HTTP through the local gateway, as API Gateway applies them: a token
 * bucket per method (resource path and HTTP method, a MOCK method's included) with the figures of the stage's method
 * settings in the template, shared by every caller of the method, and one bucket of the account's (ACCOUNT_THROTTLE)
 * over every method; both before the authorizer, so a throttled request never invokes it and never counts on a usage
 * plan. The figures are the template's (they are sized elsewhere and change): each expectation is worked out from
 * them. Each scenario runs at a frozen instant of its own, far from the others, where every bucket is full again.
 *
 * The requests a scenario fires at once go without a bearer key: the gateway answers them 401 itself (no identity
 * header, so no authorizer) once they pass the throttles, so a burst of thousands costs no function a run.
 */
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ACCOUNT_THROTTLE } from '../../contract/plans.ts';
import { AUTHORIZER } from '../../contract/routes.ts';
import { concurrencyOf } from '../../lib/local/lambda.ts';
import { ACCOUNT_BUCKET, methodKey, methodThrottle } from '../../lib/local/stage-throttle.ts';
import { apiModel, type CfnTemplate, type ThrottleDef } from '../../lib/local/template.ts';
import { assertConforms } from '../helpers/contract.ts';
import { assemblyApiFixture } from '../helpers/assembly-api.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';

/** Requests fired past a bucket's burst in each scenario. */
const PAST = 25;

const served = assemblyApiFixture();
afterEach(() => served.api.clock.reset());

let instant = Date.UTC(2032, 6, 1, 12, 0, 0);
/** A frozen instant a day after the last one: every bucket has refilled. */
function freshInstant(on: TestApi = served.api): number {
  instant += 86_400_000;
  on.clock.set(() => instant);
  return instant;
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * Fires `n` requests at once at one method and waits for every answer. They go over a pool of kept-alive sockets
 * (as many clients' requests would), so that thousands of them do not overrun the server's accept queue.
 */
async function fire(on: TestApi, n: number, path: string, init: { method?: string; key?: string } = {}) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const one = () =>
    new Promise<Answer>((resolve, reject) => {
      const headers = init.key ? { Authorization: `Bearer ${init.key}` } : {};
      const req = request(`${on.url}${path}`, { method: init.method ?? 'GET', agent, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  try {
    const answers = await Promise.all(Array.from({ length: n }, one));
    const count = (status: number) => answers.filter((a) => a.status === status).length;
    return { answers, count };
  } finally {
    agent.destroy();
  }
}

/** The stage's figures for a method, as the local gateway reads them from the template. */
function figuresOf(httpMethod: string, resourcePath: string, on: TestApi = served.api): ThrottleDef {
  const figures = methodThrottle(on.model.stageThrottle, { httpMethod, resourcePath });
  expect(figures, `the template throttles ${httpMethod} ${resourcePath}`).toBeDefined();
  return figures!;
}

/** The authorizer function's concurrency counts, to tell whether it ran. */
const authorizerRuns = (on: TestApi) =>
  concurrencyOf([...on.functions.values()].find((f) => f.def.name === AUTHORIZER.name)!);

describe('the stage throttle: a bucket per method, before the authorizer', () => {
  it('admits exactly the burst of a method fired at once; the rest get the THROTTLED gateway response', async () => {
    freshInstant();
    const pets = figuresOf('GET', '/pets');
    const admitted = Math.min(pets.burstLimit, ACCOUNT_THROTTLE.burstLimit);
    const own = () => served.api.throttles.throttled(methodKey('GET', '/pets'));
    const [ownBefore, totalBefore] = [own(), served.api.throttles.total()];
    const { answers, count } = await fire(served.api, pets.burstLimit + PAST, '/pets');
    expect(count(401), 'passed the stage, refused for want of a key').toBe(admitted);
    expect(count(429)).toBe(pets.burstLimit + PAST - admitted);
    expect(served.api.throttles.total() - totalBefore).toBe(count(429));
    // Counted on the method's bucket, unless the account's (fuller at first) empties first.
    expect(own() - ownBefore).toBe(admitted === pets.burstLimit ? PAST : 0);

    const throttled = answers.find((a) => a.status === 429)!;
    const def = served.api.model.gatewayResponses.get('THROTTLED')!;
    expect(throttled.status).toBe(def.statusCode);
    for (const [name, value] of Object.entries(def.headers)) expect(throttled.headers[name.toLowerCase()]).toBe(value);
    expect(JSON.parse(throttled.body)).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(throttled.headers['x-amzn-requestid']).toBeTruthy();
    assertConforms({
      method: 'GET',
      path: '/pets',
      status: throttled.status,
      headers: new Headers(throttled.headers as Record<string, string>),
      body: throttled.body,
    });
  });

  it('refuses a customer with a valid key on an empty method bucket without invoking the authorizer or counting it', async () => {
    freshInstant();
    const pets = figuresOf('GET', '/pets');
    await fire(served.api, pets.burstLimit, '/pets');
    const runs = authorizerRuns(served.api);
    runs.peak = 0;
    const usage = served.api.usage.total();
    const { answers } = await fire(served.api, 5, '/pets?limit=1', { key: served.api.keys.business });
    expect(answers.map((a) => [a.status, JSON.parse(a.body).code])).toEqual(
      Array.from({ length: 5 }, () => [429, 'rate_limited']),
    );
    expect(runs.peak, 'the authorizer never ran').toBe(0);
    expect(served.api.usage.total(), 'nothing counted on a usage plan').toBe(usage);
  });

  it('refills a method’s bucket at the stage’s rate', async () => {
    const start = freshInstant();
    const pets = figuresOf('GET', '/pets');
    const drained = Math.min(pets.burstLimit, ACCOUNT_THROTTLE.burstLimit);
    expect((await fire(served.api, pets.burstLimit, '/pets')).count(401)).toBe(drained);
    // Whole tokens to wait for, fewer than the burst (so the cap is not what stops the refill), and half a token
    // more: no rounding of the refill's arithmetic makes that another whole number.
    const tokens = Math.min(10, pets.burstLimit - 1);
    const waitMs = ((tokens + 0.5) / pets.rateLimit) * 1000;
    served.api.clock.set(() => start + waitMs);
    const account = Math.min(
      ACCOUNT_THROTTLE.burstLimit,
      ACCOUNT_THROTTLE.burstLimit - drained + (ACCOUNT_THROTTLE.rateLimit * waitMs) / 1000,
    );
    const { count } = await fire(served.api, tokens + PAST, '/pets');
    expect(count(401)).toBe(Math.floor(Math.min(tokens + 0.5, account)));
    expect(count(429)).toBe(tokens + PAST - count(401));
  });

  it('gives another method a bucket of its own, both drawing on the account’s', async () => {
    freshInstant();
    const pets = figuresOf('GET', '/pets');
    const pet = figuresOf('GET', '/pets/{petId}');
    const account = () => served.api.throttles.throttled(ACCOUNT_BUCKET);
    const own = () => served.api.throttles.throttled(methodKey('GET', '/pets/{petId}'));
    const [accountBefore, ownBefore] = [account(), own()];
    const first = Math.min(pets.burstLimit, ACCOUNT_THROTTLE.burstLimit);
    expect((await fire(served.api, pets.burstLimit, '/pets')).count(401)).toBe(first);
    // GET /pets has no token left; GET /pets/{petId} has its whole burst, as far as the account has tokens left.
    const left = ACCOUNT_THROTTLE.burstLimit - first;
    const second = Math.min(pet.burstLimit, left);
    const { count } = await fire(served.api, pet.burstLimit + PAST, '/pets/1');
    expect(count(401)).toBe(second);
    expect(count(429)).toBe(pet.burstLimit + PAST - second);
    // Past its own burst, its own bucket refuses; with the account's empty first, the account's does.
    expect(own() - ownBefore).toBe(second === pet.burstLimit ? PAST : 0);
    expect(account() - accountBefore).toBe(second === pet.burstLimit ? 0 : pet.burstLimit + PAST - second);
  });

  it('throttles a MOCK method (the 405 of an undeclared method) by its own bucket too', async () => {
    freshInstant();
    const mock = served.api.model.methods.find((m) => m.kind === 'mock' && m.resourcePath === '/pets')!;
    const figures = figuresOf(mock.httpMethod, mock.resourcePath);
    const admitted = Math.min(figures.burstLimit, ACCOUNT_THROTTLE.burstLimit);
    const { answers, count } = await fire(served.api, figures.burstLimit + PAST, '/pets', { method: 'DELETE' });
    expect(count(405)).toBe(admitted);
    expect(count(429)).toBe(figures.burstLimit + PAST - admitted);
    expect(answers.find((a) => a.status === 405)!.headers.allow).toBeTruthy();
    const own = served.api.throttles.throttled(methodKey(mock.httpMethod, mock.resourcePath));
    expect(own).toBe(admitted === figures.burstLimit ? PAST : 0);
  });
});

describe('the stage throttle read from the template', () => {
  /** The synthesized template with one more method setting: GET /pets/{petId}'s own figures. */
  function withOwnSetting(figures: ThrottleDef, setting: Record<string, unknown> = {}): CfnTemplate {
    const template = structuredClone(served.assembly.template) as CfnTemplate;
    const stage = Object.values(template.Resources).find((r) => r.Type === 'AWS::ApiGateway::Stage')!;
    stage.Properties!.MethodSettings = [
      ...stage.Properties!.MethodSettings,
      {
        HttpMethod: 'GET',
        ResourcePath: '/~1pets~1{petId}',
        ThrottlingRateLimit: figures.rateLimit,
        ThrottlingBurstLimit: figures.burstLimit,
        ...setting,
      },
    ];
    return template;
  }

  it('takes the setting of every method and, where a method has one, its own', () => {
    const model = apiModel(withOwnSetting({ rateLimit: 1, burstLimit: 3 }));
    const every = model.stageThrottle!.default!;
    expect(every).toEqual(served.api.model.stageThrottle!.default);
    expect(methodThrottle(model.stageThrottle, { httpMethod: 'GET', resourcePath: '/pets/{petId}' })).toEqual({
      rateLimit: 1,
      burstLimit: 3,
    });
    expect(methodThrottle(model.stageThrottle, { httpMethod: 'GET', resourcePath: '/pets' })).toEqual(every);
    // A method's setting that leaves a figure out keeps the stage's.
    const partial = apiModel(withOwnSetting({ rateLimit: 1, burstLimit: 3 }, { ThrottlingRateLimit: undefined }));
    expect(methodThrottle(partial.stageThrottle, { httpMethod: 'GET', resourcePath: '/pets/{petId}' })).toEqual({
      rateLimit: every.rateLimit,
      burstLimit: 3,
    });
  });

  it('refuses at start-up a method setting that names neither every method nor one method of the API', () => {
    for (const setting of [
      { ResourcePath: '/pets/{petId}' },
      { ResourcePath: '/~1pets', HttpMethod: '*' },
      { ResourcePath: '/~1nowhere' },
    ])
      expect(() => apiModel(withOwnSetting({ rateLimit: 1, burstLimit: 3 }, setting)), JSON.stringify(setting)).toThrow(
        /emulates method settings/,
      );
  });

  it('applies a method’s own setting over HTTP, and nothing when the option is off', async () => {
    const template = withOwnSetting({ rateLimit: 1, burstLimit: 3 });
    for (const stageThrottle of [true, false]) {
      const on = await startTestApi({ assembly: { ...served.assembly, template }, stageThrottle });
      try {
        freshInstant(on);
        const { count } = await fire(on, 3 + PAST, '/pets/1');
        expect(count(401), `stageThrottle: ${stageThrottle}`).toBe(stageThrottle ? 3 : 3 + PAST);
        expect(on.throttles.total()).toBe(stageThrottle ? PAST : 0);
      } finally {
        await on.close();
      }
    }
  }, 120_000);
});
