/**
 * The pre-traffic check (CodeDeploy's BeforeAllowTraffic hook) run against each function the emulator builds from
 * the synthesized template: the real functions pass, and a new version that is broken in each way the canary gates
 * cannot see at low traffic is reported Failed before any traffic would shift. The "new version" is the function
 * with its handler swapped; `live` stays the real one, as in a deployment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent } from 'aws-lambda';
import { PLANS, PLAN_NAMES, planUsageKeyValue, type PlanName } from '../../contract/plans.ts';
import { AUTHORIZER, ROUTES, writes, type Route } from '../../contract/routes.ts';
import { invoke, type Handler, type LocalFunction } from '../../lib/local/lambda.ts';
import { LIVE_ALIAS } from '../../lib/constructs/api-function.ts';
import {
  existingItemListing,
  needsExistingItem,
  operationProbes,
  stagePlanKeys,
  type Outcome,
  CREATE_RETRY_MS,
  CREATE_TRIES,
} from '../../lambdas/hooks/pre-traffic-check.ts';
import {
  MAX_PACED_MS,
  deploymentTarget,
  pacedCheckMs,
  preTrafficHook,
  type PreTrafficConfig,
  type PreTrafficPorts,
} from '../../lambdas/hooks/pre-traffic-hook.ts';
import { LIVE_FLOOR, REQUESTS_PER_VERSION } from '../../lambdas/hooks/pre-traffic-judge.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { EVERY_PLAN, planKey, registerKeys } from '../helpers/plan-keys.ts';
// Seeded (mulberry32), so a random share fails the same requests on every run and the measured rates repeat.
import { random as seeded } from '../../bench/models/sampling.ts';

let api: TestApi;
let byName: Map<string, LocalFunction>;
let config: PreTrafficConfig;
/** The check's key of each plan, as its secret holds them (Enterprise: a key with agreed limits, as the admin writes it). */
let checkKeys: Record<PlanName, string>;
/**
 * The check paces its requests to its key's budget (minutes for a read operation); here the wait moves the stage's
 * clock instead, so the limiter counts the same minutes and the suite does not wait them.
 */
let skipped = 0;

beforeAll(async () => {
  api = await startTestApi();
  api.clock.set(() => Date.now() + skipped);
  byName = new Map([...api.functions.values()].map((f) => [f.def.name, f]));
  const authorizer = byName.get(AUTHORIZER.name)!;
  const stage = api.model.stageName;
  config = {
    functions: Object.fromEntries([...api.functions.values()].map((f) => [f.def.logicalId, f.def.name])),
    stage,
    keysStage: authorizer.runtime.config.USAGE_KEYS_STAGE ?? authorizer.runtime.config.STAGE,
    methodArn: `arn:aws:execute-api:us-east-1:123456789012:local/${stage}/GET/v1/pets`,
    liveAlias: LIVE_ALIAS,
  };
  const enterprise = planKey(EVERY_PLAN.find((c) => c.plan === 'enterprise')!);
  await registerKeys(api, [enterprise], 'pre-traffic-check');
  checkKeys = { ...api.keys, enterprise: enterprise.key };
  // A stage with pets: getPet is judged on one that exists, and listPets' first page of one has a second.
  for (const name of ['Probe', 'Second', 'Third']) {
    const made = await api.call('/pets', {
      method: 'POST',
      key: api.keys.pro,
      body: JSON.stringify({ name, categoryId: 1 }),
    });
    expect(made.status).toBe(201);
  }
});
afterAll(() => api?.close());

const NEW_VERSION = '2';
const CURRENT_VERSION = '1';

/** The AppSpec CodeDeploy hands the hook for a deployment of `logicalId` (JSON, versions as strings). */
const appSpecOf = (logicalId: string, current: { CurrentVersion?: unknown } = { CurrentVersion: CURRENT_VERSION }) =>
  JSON.stringify({
    version: 0.0,
    Resources: [
      {
        [logicalId]: {
          Type: 'AWS::Lambda::Function',
          Properties: { Name: logicalId, Alias: LIVE_ALIAS, ...current, TargetVersion: NEW_VERSION },
        },
      },
    ],
  });

interface DeployOptions {
  /** Handlers of other functions' `live` alias, by function name: a stage whose live version answers that way. */
  readonly live?: Record<string, Handler>;
  /** The handler of the version the deployment moves away from. */
  readonly current?: Handler;
  /** The check's keys by plan (every plan's by default). */
  readonly keys?: Partial<Record<PlanName, string>>;
  /** The AppSpec (appSpecOf the function's by default). */
  readonly appSpec?: string;
  /** Whether the hook's own n-th invocation of the function judged throws (an SDK error, a throttle). */
  readonly lose?: (n: number) => boolean;
  readonly config?: PreTrafficConfig;
}

/**
 * A deployment of `name` to a new version whose handler is `broken` (the real one when not given), judged by the
 * hook with ports over the emulator's functions.
 */
async function deploy(
  name: string,
  broken?: Handler,
  { live = {}, current, keys = checkKeys, appSpec, lose, config: cfg = config }: DeployOptions = {},
) {
  const fn = byName.get(name);
  const logicalId = fn?.def.logicalId ?? `${name}Function`;
  const reports: string[] = [];
  const invoked: string[] = [];
  const logged: string[] = [];
  let calls = 0;
  const ports: PreTrafficPorts = {
    appSpec: async () => appSpec ?? appSpecOf(logicalId),
    async invoke(functionName, qualifier, event): Promise<Outcome> {
      invoked.push(`${functionName}:${qualifier}`);
      if (functionName === logicalId && lose?.(calls++)) throw new Error('Rate exceeded');
      const target = api.functions.get(functionName)!;
      const liveHandler = qualifier === LIVE_ALIAS ? live[target.def.name] : undefined;
      const currentHandler = qualifier === CURRENT_VERSION && functionName === logicalId ? current : undefined;
      const handler = qualifier === NEW_VERSION && broken ? broken : (currentHandler ?? liveHandler);
      const f = handler ? { ...target, handler } : target;
      const r = await invoke(f, event, qualifier);
      return r.ok ? { ok: true, result: r.result } : { ok: false, error: r.error };
    },
    report: async (_e, status) => void reports.push(status),
    checkKeys: async () => ({ byPlan: keys, missing: PLAN_NAMES.filter((p) => !keys[p]) }),
    log: (line) => void logged.push(line),
    now: () => api.clock.now(),
    sleep: async (ms) => void (skipped += ms),
  };
  const verdict = await preTrafficHook({ DeploymentId: `d-${name}`, LifecycleEventHookExecutionId: 'x' }, ports, cfg);
  return { verdict, reports, invoked, logged, logicalId };
}

const json = (statusCode: number, body: unknown) => ({
  statusCode,
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

it('the plan keys the check accepts are exactly the API keys the template puts on usage plans', () => {
  const inTemplate = new Set(api.model.usagePlanKeys?.keys() ?? []);
  expect(stagePlanKeys(config.keysStage)).toEqual(inTemplate);
});

describe.each([...ROUTES.map((r) => r.operationId as string), AUTHORIZER.name])('%s', (name) => {
  it('the real function passes: Succeeded is reported, and only the new version, the current one and the live authorizer are invoked', async () => {
    const { verdict, reports, invoked, logicalId } = await deploy(name);
    expect(verdict.problems).toEqual([]);
    expect(reports).toEqual(['Succeeded']);
    const authorizerId = byName.get(AUTHORIZER.name)!.def.logicalId;
    // And, for an operation whose request names an item, the live listing that finds one.
    const route = ROUTES.find((r) => r.operationId === name);
    const listing = route && needsExistingItem(route) ? existingItemListing(route, ROUTES) : undefined;
    const listingId = listing ? byName.get(listing.operationId)!.def.logicalId : undefined;
    for (const i of invoked)
      expect([
        `${logicalId}:${NEW_VERSION}`,
        `${logicalId}:${CURRENT_VERSION}`,
        `${authorizerId}:${LIVE_ALIAS}`,
        `${listingId}:${LIVE_ALIAS}`,
      ]).toContain(i);
    // The compared pairs never go through the alias of the function judged (its invocations count in the gates).
    expect(invoked).not.toContain(`${logicalId}:${LIVE_ALIAS}`);
  });
});

describe.each(ROUTES.map((r) => r.operationId as string))('%s, broken', (name) => {
  it.each([
    [
      'every request answered 503',
      async () => json(503, { code: 'service_unavailable', message: 'Unavailable', status: 503 }),
      /answered 503/,
    ],
    [
      'a valid request refused with 400',
      async () => json(400, { code: 'validation_failed', message: 'no', status: 400 }),
      /answered 400/,
    ],
    ['a malformed proxy answer (the gateway 502)', async () => ({ status: 200, body: {} }), /not a proxy result/],
    [
      'a body the contract does not describe',
      async (event: unknown) => {
        const ok = (await byName.get(name)!.handler(event, {} as never)) as { statusCode: number };
        return { ...ok, body: JSON.stringify({ surprise: true }) };
      },
      /body/,
    ],
    [
      'a Lambda error',
      async () => {
        throw new Error('boom');
      },
      /invocation failed/,
    ],
  ] as [string, Handler, RegExp][])('%s → Failed', async (_what, handler, problem) => {
    const { verdict, reports } = await deploy(name, handler);
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems.join('\n')).toMatch(problem);
  });
});

/** The real handler of `name`, failing a random `share` of its requests (a 503 for an operation, a throw for the authorizer). */
const failingShare = (name: string, share: number, seed: number): Handler => {
  const random = seeded(seed);
  return async (event, context) => {
    if (random() < share) {
      if (name === AUTHORIZER.name) throw new Error('boom');
      return json(503, { code: 'service_unavailable', message: 'Unavailable', status: 503 });
    }
    return byName.get(name)!.handler(event, context);
  };
};

/** The real handler of `name`, answering `answer` instead where `when` holds for the event. */
const unless =
  (name: string, when: (event: APIGatewayProxyEvent) => boolean, answer: () => unknown): Handler =>
  async (event, context) =>
    when(event as APIGatewayProxyEvent) ? answer() : byName.get(name)!.handler(event, context);

const READ_OPERATIONS = ROUTES.filter((r) => !writes(r)).map((r) => r.operationId as string);
const limited = async () => json(429, { code: 'rate_limited', message: 'Too many requests.', status: 429 });
const unavailable = async () => json(503, { code: 'service_unavailable', message: 'Unavailable', status: 503 });

describe.each([...READ_OPERATIONS, AUTHORIZER.name])('%s, failing a steady share of its requests', (name) => {
  it('a new version failing a random 5 % is Failed before any traffic, against the live version it is compared with', async () => {
    const { verdict, reports, invoked, logicalId } = await deploy(name, failingShare(name, 0.05, 55));
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems[0]).toMatch(/the new version failed \d+ of \d+ judged requests, the live version 0 of \d+/);
    expect(invoked.filter((i) => i === `${logicalId}:${CURRENT_VERSION}`).length).toBeGreaterThan(100);
  });

  it("the same 5 % failing on the live version too is the stage's, not the release's: Succeeded, and logged", async () => {
    const { reports, logged } = await deploy(name, failingShare(name, 0.05, 56), {
      current: failingShare(name, 0.05, 57),
    });
    expect(reports).toEqual(['Succeeded']);
    expect(logged.join('\n')).toMatch(/the live version \d+ of \d+; the live version's: /);
  });
});

describe('the floor: what the comparison cannot judge is Failed "cannot judge", never Succeeded', () => {
  it('a live version failing every request, as the new one does (both broken alike)', async () => {
    const { verdict, reports, invoked, logicalId } = await deploy('listOrders', unavailable, { current: unavailable });
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems[0]).toMatch(
      new RegExp(
        `^cannot judge: the live version itself failed more than ${LIVE_FLOOR * 100} % .*breakGlass="<reason>"`,
      ),
    );
    // Stopped once the floor is certain (76 of the 500 pairs), not after 1,000 requests.
    expect(invoked.filter((i) => i.startsWith(`${logicalId}:`)).length).toBeLessThanOrEqual(200);
  });

  it('a spent check key (429 on both versions) judges nothing: cannot judge, saying so, and stops sending', async () => {
    const { verdict, reports, invoked, logicalId } = await deploy('listOrders', limited, { current: limited });
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems.join('\n')).toMatch(
      new RegExp(
        `^cannot judge: only \\d+ of ${REQUESTS_PER_VERSION} pairs could be judged .*\\d+ pairs both answered 429.*budget is spent`,
      ),
    );
    expect(invoked.filter((i) => i.startsWith(`${logicalId}:`)).length).toBeLessThanOrEqual(120);
  });

  it("the hook's own invocations failing (an SDK error, a throttle) judge neither version: cannot judge", async () => {
    const { verdict, reports } = await deploy('listOrders', undefined, { lose: (n) => n % 4 === 0 });
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems.join('\n')).toMatch(
      new RegExp(`^cannot judge: only \\d+ of ${REQUESTS_PER_VERSION} pairs .*Error: Rate exceeded`),
    );
  });

  it('a new version answering 429 to 2 % of its requests (one in 50) is Failed: a 429 only one version of a pair answers is its failure', async () => {
    let n = 0;
    const sometimes: Handler = async (event, context) =>
      ++n % 50 === 0 ? limited() : byName.get('listOrders')!.handler(event, context);
    const { verdict, reports } = await deploy('listOrders', sometimes);
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems.join('\n')).toMatch(
      new RegExp(
        `the new version failed ${REQUESTS_PER_VERSION / 50} of ${REQUESTS_PER_VERSION} judged requests, the live version 0`,
      ),
    );
    expect(verdict.problems.join('\n')).toMatch(/answered 429/);
  });

  it('an AppSpec naming no CurrentVersion: cannot judge, and nothing is sent through the alias instead', async () => {
    const logicalId = byName.get('listOrders')!.def.logicalId;
    const { verdict, reports, invoked } = await deploy('listOrders', undefined, { appSpec: appSpecOf(logicalId, {}) });
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems[0]).toMatch(/^cannot judge: the AppSpec names no CurrentVersion/);
    expect(invoked.filter((i) => i.startsWith(`${logicalId}:`))).toEqual([]);
  });
});

describe('listPets, sent what customers send', () => {
  const query = (e: APIGatewayProxyEvent) => e.queryStringParameters ?? {};
  const badRequest = () => json(400, { code: 'validation_failed', message: 'no', status: 400 });

  it.each([
    [
      'refuses status=pending with 400',
      unless('listPets', (e) => query(e).status === 'pending', badRequest),
      /listPets\?status=pending: answered 400/,
    ],
    [
      'refuses every cursor with 400',
      unless('listPets', (e) => query(e).cursor !== undefined, badRequest),
      /listPets\?cursor: answered 400/,
    ],
    [
      'drops the Link header of the next page',
      async (event, context) => {
        const r = (await byName.get('listPets')!.handler(event, context)) as { headers?: Record<string, string> };
        const { Link: _dropped, ...headers } = r.headers ?? {};
        return { ...r, headers };
      },
      /listPets\?limit=1: left out Link, which the live version sent/,
    ],
    [
      'drops the rate-limit headers',
      async (event, context) => {
        const r = (await byName.get('listPets')!.handler(event, context)) as { headers?: Record<string, string> };
        const headers = Object.fromEntries(Object.entries(r.headers ?? {}).filter(([k]) => !/^x-ratelimit-/i.test(k)));
        return { ...r, headers };
      },
      /left out X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset/,
    ],
  ] as [string, Handler, RegExp][])('a new version that %s is Failed', async (_what, handler, problem) => {
    const { verdict, reports } = await deploy('listPets', handler);
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems.join('\n')).toMatch(problem);
  });

  it('every status value and a second page are sent to both versions, the cursor taken from the live one', async () => {
    const sent: Record<string, string | undefined>[] = [];
    const recording: Handler = async (event, context) => {
      sent.push(query(event as APIGatewayProxyEvent));
      return byName.get('listPets')!.handler(event, context);
    };
    const { reports } = await deploy('listPets', recording);
    expect(reports).toEqual(['Succeeded']);
    expect(sent.length).toBe(REQUESTS_PER_VERSION);
    for (const status of ['available', 'pending', 'sold']) expect(sent.some((q) => q.status === status)).toBe(true);
    expect(sent.some((q) => q.cursor && q.limit === '1')).toBe(true);
  });

  it('a stage of one page: the second page is not asked, the log says so, and the check passes', async () => {
    const onePage: Handler = async (event, context) => {
      const r = (await byName.get('listPets')!.handler(event, context)) as { headers?: Record<string, string> };
      const { Link: _none, ...headers } = r.headers ?? {};
      return { ...r, headers };
    };
    const { reports, logged } = await deploy('listPets', undefined, { current: onePage });
    expect(reports).toEqual(['Succeeded']);
    expect(logged.join('\n')).toMatch(/listPets: the stage has one page at .*no second page was asked/);
  });
});

describe('a create, tried up to CREATE_TRIES times', () => {
  it("one failed try (a crash, a flood's 503) does not fail a good create: the next try, past the claim, makes the one pet", async () => {
    let calls = 0;
    const onceDown: Handler = async (event, context) =>
      ++calls === 1 ? unavailable() : byName.get('createPet')!.handler(event, context);
    const before = api.clock.now();
    const { reports } = await deploy('createPet', onceDown);
    expect(reports).toEqual(['Succeeded']);
    expect(calls).toBe(2);
    // The second try waited out the claim a crashed first try would have left on its Idempotency-Key.
    expect(api.clock.now() - before).toBeGreaterThanOrEqual(CREATE_RETRY_MS);
  });

  it('a create answering 201 without its Location is Failed: a header the contract requires', async () => {
    const noLocation: Handler = async (event, context) => {
      const ok = (await byName.get('createPet')!.handler(event, context)) as { headers: Record<string, string> };
      const { Location: _dropped, ...headers } = ok.headers;
      return { ...ok, headers };
    };
    const { verdict, reports } = await deploy('createPet', noLocation);
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems.join('\n')).toMatch(/its 201 answer lacks Location, which the contract requires/);
  });

  it('a create failing every try is Failed, each try said', async () => {
    const { verdict, reports } = await deploy('createPet', unavailable);
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems.join('\n')).toMatch(new RegExp(`\\(${CREATE_TRIES} of ${CREATE_TRIES} tries\\)`));
  });
});

describe('what an operation declares it does decides what is sent, not its HTTP method', () => {
  it("an operation that deletes is sent nothing (it would delete a customer's item): Succeeded, saying the bake judges it", async () => {
    const getPet = ROUTES.find((r) => r.operationId === 'getPet')!;
    const deletePet: Route = {
      ...getPet,
      operationId: 'deletePet',
      method: 'DELETE',
      does: 'deletes',
      success: { status: 204, description: 'Deleted.' },
    };
    const updatePet: Route = { ...getPet, operationId: 'updatePet', method: 'POST', does: 'changes' };
    const cfg: PreTrafficConfig = {
      ...config,
      functions: { ...config.functions, deletePetFunction: 'deletePet', updatePetFunction: 'updatePet' },
      routes: [...ROUTES, deletePet, updatePet],
    };
    for (const name of ['deletePet', 'updatePet']) {
      const { verdict, reports, invoked } = await deploy(name, undefined, { config: cfg });
      expect(reports).toEqual(['Succeeded']);
      expect(invoked).toEqual([]);
      expect(verdict.notes?.join('\n')).toMatch(
        /sends it nothing; the canary gates and the post-traffic bake judge it/,
      );
    }
  });
});

it("a check whose Business key's share of its budget cannot pace a read operation's check in time is refused before any request, naming the fix", async () => {
  const { verdict, reports, invoked, logicalId } = await deploy('listPets', undefined, {
    keys: { ...checkKeys, business: api.keys.free },
  });
  expect(reports).toEqual(['Failed']);
  expect(verdict.problems.join('\n')).toMatch(
    new RegExp(
      `plan free, ${PLANS.free.limits!.perMinute} requests a minute.*npm run admin -- keys issue-check-key --stage \\S+ `,
    ),
  );
  expect(invoked.filter((i) => i.startsWith(`${logicalId}:`))).toEqual([]);
});

it("a Pro key in the Business place is paced to its share of its minute's budget, and the real version passes", async () => {
  const before = api.clock.now();
  const { reports } = await deploy('listOrders', undefined, { keys: { ...checkKeys, business: api.keys.pro } });
  expect(reports).toEqual(['Succeeded']);
  // Both versions' requests at the Pro key's share: minutes of the stage's clock, within the paced comparison's bound.
  const paced = pacedCheckMs(PLANS.pro.limits!.perMinute);
  expect(paced).toBeLessThan(MAX_PACED_MS);
  expect(api.clock.now() - before).toBeGreaterThan(paced - 30_000);
  expect(api.clock.now() - before).toBeLessThan(MAX_PACED_MS);
});

it("a secret missing a plan's key: the operations and the authorizer cannot judge, naming the command that issues them", async () => {
  const { enterprise: _e, ...noEnterprise } = checkKeys;
  const a = await deploy(AUTHORIZER.name, undefined, { keys: noEnterprise });
  expect(a.reports).toEqual(['Failed']);
  expect(a.verdict.problems[0]).toMatch(
    /^cannot judge: the check's secret has no key for plan\(s\) enterprise: npm run admin -- keys issue-check-key --stage \S+$/,
  );
  const { business: _b, ...noBusiness } = checkKeys;
  const o = await deploy('listOrders', undefined, { keys: noBusiness });
  expect(o.verdict.problems[0]).toMatch(/^cannot judge: the check's secret has no key for plan\(s\) business/);
});

describe('getPet judged on an item the stage has', () => {
  const notFound: Handler = async () =>
    json(404, { code: 'not_found', message: 'No animal has this id.', status: 404 });
  const emptyPage: Handler = async () => json(200, []);

  it('a version answering 404 to every id is Failed once the stage has a pet (found through the live listPets)', async () => {
    const { verdict, reports, invoked } = await deploy('getPet', notFound);
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems.join('\n')).toMatch(/answered 404 to a valid request \(expected 200\)/);
    expect(invoked).toContain(`${byName.get('listPets')!.def.logicalId}:${LIVE_ALIAS}`);
  });

  it('a stage with no pet yet accepts the 404 (the live listing answers an empty page)', async () => {
    const { verdict, reports } = await deploy('getPet', notFound, { live: { listPets: emptyPage } });
    expect(verdict.problems).toEqual([]);
    expect(reports).toEqual(['Succeeded']);
  });

  it.each([
    ['answers 429', async () => limited(), /it answered 429/],
    [
      'fails',
      async () => {
        throw new Error('boom');
      },
      /the invocation failed \(Error: boom\)/,
    ],
  ] as [string, Handler, RegExp][])(
    'a live listing that %s cannot tell a 404-for-every-id from a good version: cannot judge, naming break glass',
    async (_what, listing, why) => {
      const { verdict, reports } = await deploy('getPet', notFound, { live: { listPets: listing } });
      expect(reports).toEqual(['Failed']);
      expect(verdict.problems[0]).toMatch(/^cannot judge: the live listPets could not name an item/);
      expect(verdict.problems[0]).toMatch(why);
      expect(verdict.problems[0]).toContain('-c animal-store:breakGlass="<reason>"');
    },
  );
});

describe('authorizer, broken', () => {
  const real = () => byName.get(AUTHORIZER.name)!.handler;
  const allowWith =
    (change: (r: APIGatewayAuthorizerResult) => APIGatewayAuthorizerResult): Handler =>
    async (e, c) =>
      change((await real()(e, c)) as APIGatewayAuthorizerResult);
  const onPlan = (plan: PlanName, change: (r: APIGatewayAuthorizerResult) => APIGatewayAuthorizerResult) =>
    allowWith((r) => (r.context?.plan === plan ? change(r) : r));

  it.each([
    [
      'allows onto a usage key on no plan',
      allowWith((r) => ({ ...r, usageIdentifierKey: 'animalstoreunknownkey000000000000' })),
      /on no usage plan/,
    ],
    [
      "allows onto another plan's API key than the key's",
      allowWith((r) => {
        const other = [...stagePlanKeys(config.keysStage)].find((k) => k !== r.usageIdentifierKey)!;
        return { ...r, usageIdentifierKey: other };
      }),
      /is not the \w+ plan's/,
    ],
    [
      'allows Pro keys onto no plan (the other plans right)',
      onPlan('pro', (r) => ({ ...r, usageIdentifierKey: 'animalstoreunknownkey000000000000' })),
      /authorizer\?pro: the pro key's usage key \w+ is on no usage plan/,
    ],
    [
      "allows Enterprise keys onto the Business plan's API key",
      onPlan('enterprise', (r) => ({ ...r, usageIdentifierKey: planUsageKeyValue(config.keysStage, 'business') })),
      /authorizer\?enterprise: the enterprise key's usage key \w+ is not the enterprise plan's/,
    ],
    [
      "names another plan in an Enterprise key's context",
      onPlan('enterprise', (r) => ({ ...r, context: { ...r.context, plan: 'business' } })),
      /enterprise key's context names plan business/,
    ],
    [
      'denies a valid key',
      async () => {
        throw new Error('Unauthorized');
      },
      /refused/,
    ],
    [
      'fails on every key (a 503)',
      async () => {
        throw Object.assign(new Error('limiter'), { name: 'ValidationException' });
      },
      /invocation failed|not "Unauthorized"/,
    ],
    [
      'allows every key',
      async (e, c) => {
        const good = byName.get(AUTHORIZER.name)!;
        const event = { ...(e as object), authorizationToken: `Bearer ${api.keys.pro}` };
        return good.handler(event, c);
      },
      /unknown key was answered/,
    ],
    [
      'allows with a Deny-shaped policy',
      allowWith((r) => ({
        ...r,
        policyDocument: { ...r.policyDocument, Statement: [{ ...r.policyDocument.Statement[0]!, Effect: 'Deny' }] },
      })),
      /not one Allow/,
    ],
  ] as [string, Handler, RegExp][])('%s → Failed', async (_what, handler, problem) => {
    const { verdict, reports } = await deploy(AUTHORIZER.name, handler);
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems.join('\n')).toMatch(problem);
  });

  it('a deny-all authorizer, live and new alike (a revoked check key): cannot judge, not Succeeded', async () => {
    const denyAll: Handler = async () => {
      throw new Error('Unauthorized');
    };
    const { verdict, reports } = await deploy(AUTHORIZER.name, denyAll, { current: denyAll });
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems[0]).toMatch(
      new RegExp(`^cannot judge: the live version itself failed more than ${LIVE_FLOOR * 100} %`),
    );
  });

  it("an operation's check whose key the live authorizer refuses cannot judge, naming the key's command and break glass", async () => {
    const { verdict, reports } = await deploy('listOrders', undefined, {
      live: {
        [AUTHORIZER.name]: async () => {
          throw new Error('Unauthorized');
        },
      },
    });
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems[0]).toMatch(
      /^cannot judge: the live authorizer does not allow the check's business key .*issue-check-key.*breakGlass/,
    );
  });
});

describe('the hook itself', () => {
  const spec = (props: Record<string, unknown>) =>
    JSON.stringify({ version: 0.0, Resources: [{ f: { Type: 'AWS::Lambda::Function', Properties: props } }] });
  const expected = { functionName: 'fn', alias: 'live', targetVersion: '4', currentVersion: '3' };

  it('reads the function, the target version and the current one from a Lambda AppSpec, by name or ARN', () => {
    expect(deploymentTarget(spec({ Name: 'fn', Alias: 'live', CurrentVersion: '3', TargetVersion: '4' }))).toEqual(
      expected,
    );
    expect(
      deploymentTarget(
        spec({
          Name: 'arn:aws:lambda:eu-west-1:123456789012:function:fn',
          Alias: 'live',
          CurrentVersion: 3,
          TargetVersion: 4,
        }),
      ),
    ).toEqual(expected);
    expect(deploymentTarget(spec({ Name: 'fn', Alias: 'live', TargetVersion: '4' }))).toEqual({
      functionName: 'fn',
      alias: 'live',
      targetVersion: '4',
    });
  });

  it('reads a YAML AppSpec, and versions given as function-version ARNs', () => {
    const yaml = [
      'version: 0.0',
      'Resources:',
      '  - fn:',
      '      Type: AWS::Lambda::Function',
      '      Properties:',
      '        Name: "arn:aws:lambda:us-east-1:123456789012:function:fn"',
      '        Alias: "live"',
      '        CurrentVersion: "arn:aws:lambda:us-east-1:123456789012:function:fn:3"',
      '        TargetVersion: 4',
      'Hooks:',
      '  - BeforeAllowTraffic: "AnimalStore-staging-PreTrafficCheck"',
    ].join('\n');
    expect(deploymentTarget(yaml)).toEqual(expected);
    expect(
      deploymentTarget(
        spec({
          Name: 'fn',
          Alias: 'live',
          CurrentVersion: 'arn:aws:lambda:us-east-1:123456789012:function:fn:3',
          TargetVersion: 'arn:aws:lambda:us-east-1:123456789012:function:fn:4',
        }),
      ),
    ).toEqual(expected);
    // Not a published version: the check would compare the wrong code, so it refuses to read it.
    expect(() =>
      deploymentTarget(spec({ Name: 'fn', Alias: 'live', CurrentVersion: '3', TargetVersion: '$LATEST' })),
    ).toThrow(/TargetVersion is not a version number/);
  });

  it('a deployment whose AppSpec is YAML with ARNs is judged on the versions it names, and the raw AppSpec is logged once', async () => {
    const logicalId = byName.get('listOrders')!.def.logicalId;
    const arn = `arn:aws:lambda:us-east-1:123456789012:function:${logicalId}`;
    const appSpec = [
      'version: 0.0',
      'Resources:',
      `  - ${logicalId}:`,
      '      Type: AWS::Lambda::Function',
      '      Properties:',
      `        Name: ${arn}`,
      `        Alias: ${LIVE_ALIAS}`,
      `        CurrentVersion: ${arn}:${CURRENT_VERSION}`,
      `        TargetVersion: ${arn}:${NEW_VERSION}`,
    ].join('\n');
    const broken = async () => json(503, { code: 'service_unavailable', message: 'Unavailable', status: 503 });
    const { reports, logged, invoked } = await deploy('listOrders', broken, { appSpec });
    // Both sides named alike would fail alike and pass: the ARNs' versions must be what is invoked.
    expect(reports).toEqual(['Failed']);
    expect(invoked).toContain(`${logicalId}:${NEW_VERSION}`);
    expect(invoked).toContain(`${logicalId}:${CURRENT_VERSION}`);
    expect(logged.filter((l) => l.includes('AppSpec ')).length).toBe(1);
    expect(logged.join('\n')).toContain(JSON.stringify(appSpec));
  });

  it('a create carries an Idempotency-Key of the deployment: a retried hook makes one item, not two', () => {
    const auth = { keyId: 'k', plan: 'pro' as const, perMinute: 1, perDay: 1 };
    for (const route of ROUTES.filter((r) => r.does === 'creates')) {
      const [a, b] = [1, 2].map(() => operationProbes(route, { stage: 's', auth, runId: 'd-7' })[0]!.event) as {
        headers: Record<string, string>;
      }[];
      expect(a!.headers['Idempotency-Key']).toBe('pre-traffic-d-7');
      expect(b!.headers['Idempotency-Key']).toBe(a!.headers['Idempotency-Key']);
    }
  });

  it('reports Failed when it cannot read the deployment, and for a function not of this stack', async () => {
    const reports: string[] = [];
    const ports = (appSpec: () => Promise<string>): PreTrafficPorts => ({
      appSpec,
      invoke: async () => ({ ok: true, result: {} }),
      report: async (_e, s) => void reports.push(s),
      checkKeys: async () => ({ byPlan: checkKeys, missing: [] }),
      log: () => undefined,
      now: () => api.clock.now(),
      sleep: async () => undefined,
    });
    const event = { DeploymentId: 'd-1', LifecycleEventHookExecutionId: 'x' };
    await preTrafficHook(
      event,
      ports(async () => {
        throw new Error('AccessDenied');
      }),
      config,
    );
    await preTrafficHook(
      event,
      ports(async () => spec({ Name: 'other', Alias: 'live', TargetVersion: '1' })),
      config,
    );
    expect(reports).toEqual(['Failed', 'Failed']);
  });
});
