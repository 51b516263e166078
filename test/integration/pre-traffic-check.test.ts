/**
 * The pre-traffic check (CodeDeploy's BeforeAllowTraffic hook) run against each function the emulator builds from
 * the synthesized template: the real functions pass, and a new version that is broken in each way the canary gates
 * cannot see at low traffic is reported Failed before any traffic would shift. The "new version" is the function
 * with its handler swapped; `live` stays the real one, as in a deployment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { AUTHORIZER, ROUTES } from '../../contract/routes.ts';
import { invoke, type Handler, type LocalFunction } from '../../lib/local/lambda.ts';
import { LIVE_ALIAS } from '../../lib/constructs/api-function.ts';
import {
  existingItemListing,
  needsExistingItem,
  operationProbes,
  stagePlanKeys,
  type Outcome,
} from '../../lambdas/hooks/pre-traffic-check.ts';
import {
  deploymentTarget,
  preTrafficHook,
  type PreTrafficConfig,
  type PreTrafficPorts,
} from '../../lambdas/hooks/pre-traffic-hook.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
// Seeded (mulberry32), so a random share fails the same requests on every run and the measured rates repeat.
import { random as seeded } from '../../lib/stacks/gate-simulation.ts';

let api: TestApi;
let byName: Map<string, LocalFunction>;
let config: PreTrafficConfig;
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
});
afterAll(() => api?.close());

const NEW_VERSION = '2';
const CURRENT_VERSION = '1';

/**
 * A deployment of `name` to a new version whose handler is `broken` (the real one when not given). `live` swaps the
 * handler of another function's `live` alias (by function name), as a stage whose live version answers that way;
 * `current` the handler of the version the deployment moves away from; `key` is the check's key.
 */
async function deploy(
  name: string,
  broken?: Handler,
  {
    live = {},
    current,
    key = api.keys.business,
  }: { live?: Record<string, Handler>; current?: Handler; key?: string } = {},
) {
  const fn = byName.get(name)!;
  const reports: string[] = [];
  const invoked: string[] = [];
  const logged: string[] = [];
  const ports: PreTrafficPorts = {
    appSpec: async () =>
      JSON.stringify({
        version: 0.0,
        Resources: [
          {
            [fn.def.logicalId]: {
              Type: 'AWS::Lambda::Function',
              Properties: {
                Name: fn.def.logicalId,
                Alias: LIVE_ALIAS,
                CurrentVersion: CURRENT_VERSION,
                TargetVersion: NEW_VERSION,
              },
            },
          },
        ],
      }),
    async invoke(functionName, qualifier, event): Promise<Outcome> {
      invoked.push(`${functionName}:${qualifier}`);
      const target = api.functions.get(functionName)!;
      const liveHandler = qualifier === LIVE_ALIAS ? live[target.def.name] : undefined;
      const currentHandler = qualifier === CURRENT_VERSION && functionName === fn.def.logicalId ? current : undefined;
      const handler = qualifier === NEW_VERSION && broken ? broken : (currentHandler ?? liveHandler);
      const f = handler ? { ...target, handler } : target;
      const r = await invoke(f, event);
      return r.ok ? { ok: true, result: r.result } : { ok: false, error: r.error };
    },
    report: async (_e, status) => void reports.push(status),
    checkKey: async () => key,
    log: (line) => void logged.push(line),
    now: () => api.clock.now(),
    sleep: async (ms) => void (skipped += ms),
  };
  const verdict = await preTrafficHook(
    { DeploymentId: `d-${name}`, LifecycleEventHookExecutionId: 'x' },
    ports,
    config,
  );
  return { verdict, reports, invoked, logged, fn };
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
    const { verdict, reports, invoked, fn } = await deploy(name);
    expect(verdict.problems).toEqual([]);
    expect(reports).toEqual(['Succeeded']);
    const authorizerId = byName.get(AUTHORIZER.name)!.def.logicalId;
    // And, for an operation whose request names an item, the live listing that finds one.
    const listing = existingItemListing(ROUTES.find((r) => r.operationId === name) ?? ROUTES[0]!, ROUTES);
    const listingId =
      listing && needsExistingItem(ROUTES.find((r) => r.operationId === name)!)
        ? byName.get(listing.operationId)!.def.logicalId
        : undefined;
    for (const i of invoked)
      expect([
        `${fn.def.logicalId}:${NEW_VERSION}`,
        `${fn.def.logicalId}:${CURRENT_VERSION}`,
        `${authorizerId}:${LIVE_ALIAS}`,
        `${listingId}:${LIVE_ALIAS}`,
      ]).toContain(i);
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

const READ_OPERATIONS = ROUTES.filter((r) => r.method === 'GET').map((r) => r.operationId as string);

describe.each([...READ_OPERATIONS, AUTHORIZER.name])('%s, failing a steady share of its requests', (name) => {
  it('a new version failing a random 5 % is Failed before any traffic, against the live version it is compared with', async () => {
    const { verdict, reports, invoked, fn } = await deploy(name, failingShare(name, 0.05, 55));
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems[0]).toMatch(/the new version failed \d+ of \d+ requests, the live version 0 of \d+/);
    expect(invoked.filter((i) => i === `${fn.def.logicalId}:${CURRENT_VERSION}`).length).toBeGreaterThan(100);
  });

  it("the same 5 % failing on the live version too is the stage's, not the release's: Succeeded, and logged", async () => {
    const { reports, logged } = await deploy(name, failingShare(name, 0.05, 56), {
      current: failingShare(name, 0.05, 57),
    });
    expect(reports).toEqual(['Succeeded']);
    expect(logged.join('\n')).toMatch(/the live version \d+ of 400; the live version's: /);
  });
});

it("a check key whose share of its budget cannot pace a read operation's check in time is refused before any request, naming the fix", async () => {
  const { verdict, reports, invoked, fn } = await deploy('listPets', undefined, { key: api.keys.free });
  expect(reports).toEqual(['Failed']);
  expect(verdict.problems.join('\n')).toMatch(
    /plan free, 60 requests a minute.*npm run admin -- keys issue-check-key --stage \S+ /,
  );
  expect(invoked.filter((i) => i.startsWith(`${fn.def.logicalId}:`))).toEqual([]);
});

it('a Pro check key is paced to its share of 300 a minute, and the real version passes', async () => {
  const before = api.clock.now();
  const { reports } = await deploy('listOrders', undefined, { key: api.keys.pro });
  expect(reports).toEqual(['Succeeded']);
  // 800 requests at 90 a minute: about 9 minutes of the stage's clock, under the hook's 15-minute timeout.
  expect((api.clock.now() - before) / 60_000).toBeGreaterThan(8.5);
  expect((api.clock.now() - before) / 60_000).toBeLessThan(10);
});

it('a spent check key (429 on both versions) judges nothing, so the check fails, saying so, and stops sending', async () => {
  const limited: Handler = async () => json(429, { code: 'rate_limited', message: 'Too many requests.', status: 429 });
  const { verdict, reports, invoked, fn } = await deploy('listOrders', limited, { current: limited });
  expect(reports).toEqual(['Failed']);
  expect(verdict.problems.join('\n')).toMatch(/rate-limited \(429\) on \d+ requests, so too little was judged/);
  expect(invoked.filter((i) => i.startsWith(`${fn.def.logicalId}:`)).length).toBeLessThanOrEqual(50);
});

describe('getPet judged on an item the stage has', () => {
  const notFound: Handler = async () =>
    json(404, { code: 'not_found', message: 'No animal has this id.', status: 404 });
  const emptyPage: Handler = async () => json(200, []);

  it('a version answering 404 to every id is Failed once the stage has a pet (found through the live listPets)', async () => {
    const made = await api.call('/pets', {
      method: 'POST',
      key: api.keys.pro,
      body: JSON.stringify({ name: 'Probe', categoryId: 1 }),
    });
    expect(made.status).toBe(201);
    const { verdict, reports, invoked } = await deploy('getPet', notFound);
    expect(reports).toEqual(['Failed']);
    expect(verdict.problems.join('\n')).toMatch(/answered 404 to a valid request \(expected 200\)/);
    expect(invoked).toContain(`${byName.get('listPets')!.def.logicalId}:${LIVE_ALIAS}`);
    // The real version, on the same pet: 200 with a Pet.
    expect((await deploy('getPet')).reports).toEqual(['Succeeded']);
  });

  it('a stage with no pet yet accepts the 404 (the live listing answers an empty page)', async () => {
    const { verdict, reports } = await deploy('getPet', notFound, { live: { listPets: emptyPage } });
    expect(verdict.problems).toEqual([]);
    expect(reports).toEqual(['Succeeded']);
  });

  it('a live listing that cannot tell is logged, and the 404 accepted: a broken listPets does not hold back the release that fixes it', async () => {
    const { reports, logged } = await deploy('getPet', notFound, {
      live: {
        listPets: async () => {
          throw new Error('boom');
        },
      },
    });
    expect(reports).toEqual(['Succeeded']);
    expect(logged.join('\n')).toMatch(
      /the live listPets could not name an item \(the invocation failed \(Error: boom\)\)/,
    );
  });
});

describe('authorizer, broken', () => {
  const real = () => byName.get(AUTHORIZER.name)!.handler;
  const allowWith =
    (change: (r: APIGatewayAuthorizerResult) => APIGatewayAuthorizerResult): Handler =>
    async (e, c) =>
      change((await real()(e, c)) as APIGatewayAuthorizerResult);

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
});

describe('the hook itself', () => {
  it('reads the function, the target version and the current one from a Lambda AppSpec, by name or ARN', () => {
    const spec = (name: string, current: { CurrentVersion?: string } = { CurrentVersion: '3' }) =>
      JSON.stringify({
        version: 0.0,
        Resources: [
          {
            f: {
              Type: 'AWS::Lambda::Function',
              Properties: { Name: name, Alias: 'live', ...current, TargetVersion: '4' },
            },
          },
        ],
      });
    const expected = { functionName: 'fn', alias: 'live', targetVersion: '4', currentVersion: '3' };
    expect(deploymentTarget(spec('fn'))).toEqual(expected);
    expect(deploymentTarget(spec('arn:aws:lambda:eu-west-1:123456789012:function:fn'))).toEqual(expected);
    // Without a current version the check compares with the `live` alias, which no traffic has left yet.
    expect(deploymentTarget(spec('fn', {}))).toEqual({ functionName: 'fn', alias: 'live', targetVersion: '4' });
  });

  it('a create carries an Idempotency-Key of the deployment: a retried hook makes one item, not two', () => {
    const auth = { keyId: 'k', plan: 'pro' as const, perMinute: 1, perDay: 1 };
    for (const route of ROUTES.filter((r) => r.method === 'POST')) {
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
      checkKey: async () => api.keys.pro,
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
      ports(async () =>
        JSON.stringify({
          Resources: [
            { f: { Type: 'AWS::Lambda::Function', Properties: { Name: 'other', Alias: 'live', TargetVersion: '1' } } },
          ],
        }),
      ),
      config,
    );
    expect(reports).toEqual(['Failed', 'Failed']);
  });
});
