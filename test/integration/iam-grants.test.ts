/**
 * Every DynamoDB grant of every function's role is needed, and the local gateway enforces the roles: for each
 * action a role allows on a table or index, a copy of the synthesized template without that one grant is served,
 * and a request whose code path needs it now fails the way it would in AWS (AccessDeniedException, answered as
 * the function answers any such failure), while the same request succeeds with the template as synthesized. An
 * operation's grants are shown by its sample request (test/helpers/samples.ts) unless a scenario below names one; a
 * grant that neither shows fails its test: give it a scenario, or remove the grant if no code path uses it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../contract/routes.ts';
import { localAssembly, type LocalAssembly } from '../../lib/local/synth.ts';
import type { CfnTemplate } from '../../lib/local/template.ts';
import { TABLE_METADATA, FUNCTION_METADATA } from '../../lib/stacks/metadata.ts';
import { FUNCTION_ACCESS } from '../../lib/stacks/function-access.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { OPERATION_SAMPLES, fixturesSending, requestInit, sampleRequest } from '../helpers/samples.ts';
import { onEveryClient, throttlingException } from '../helpers/clients.ts';
import { devKeyId, setDayCounters } from '../helpers/key-standing.ts';
import { PLANS } from '../../contract/plans.ts';
import { SPENT_RETURN_SECONDS } from '../../lambdas/domain/refusal.ts';

interface Grant {
  /** `<function> <action> <table>[/index/<name>]`, e.g. `createPet dynamodb:PutItem Pets`. */
  readonly name: string;
  readonly policyId: string;
  readonly action: string;
  readonly resource: unknown;
}

/** The DynamoDB grants of each function's role, one per action and resource. */
function grantsOf(t: CfnTemplate): Grant[] {
  const out: Grant[] = [];
  for (const fn of Object.values(t.Resources)) {
    const name = fn.Metadata?.[FUNCTION_METADATA];
    if (fn.Type !== 'AWS::Lambda::Function' || typeof name !== 'string') continue;
    const roleId = fn.Properties!.Role['Fn::GetAtt'][0];
    for (const [policyId, p] of Object.entries(t.Resources)) {
      if (p.Type !== 'AWS::IAM::Policy' || !p.Properties!.Roles.some((r: any) => r.Ref === roleId)) continue;
      for (const s of p.Properties!.PolicyDocument.Statement as any[])
        for (const action of [s.Action].flat().filter((a: string) => a.startsWith('dynamodb:')))
          for (const resource of [s.Resource].flat())
            out.push({ name: `${name} ${action} ${label(t, resource)}`, policyId, action, resource });
    }
  }
  return out;
}

/** `{"Fn::GetAtt":["PetsTable","Arn"]}` → `Pets`; joined with `/index/byStatus` → `Pets/index/byStatus`. */
function label(t: CfnTemplate, resource: unknown): string {
  const parts = (resource as any)['Fn::Join']?.[1] ?? [resource];
  return parts
    .map((p: any) => (typeof p === 'string' ? p : String(t.Resources[p['Fn::GetAtt'][0]]?.Metadata?.[TABLE_METADATA])))
    .join('');
}

/** The template without one grant (its statement split so every other action and resource stays). */
function withoutGrant(t: CfnTemplate, g: Grant): CfnTemplate {
  const copy = structuredClone(t) as any;
  const doc = copy.Resources[g.policyId].Properties.PolicyDocument;
  doc.Statement = (doc.Statement as any[]).flatMap((s) => {
    const actions = [s.Action].flat();
    const resources = [s.Resource].flat();
    const hit = resources.findIndex((r) => JSON.stringify(r) === JSON.stringify(g.resource));
    if (!actions.includes(g.action) || hit < 0) return [s];
    const rest = [];
    if (actions.length > 1) rest.push({ ...s, Action: actions.filter((a) => a !== g.action) });
    if (resources.length > 1) rest.push({ ...s, Action: g.action, Resource: resources.filter((_, i) => i !== hit) });
    return rest;
  });
  return copy;
}

interface Scenario {
  /** What a user notices without the grant. */
  readonly what: string;
  /** The request (or requests) whose code path needs the grant; resolves to the last response. */
  run(api: TestApi): Promise<Response>;
  /** Its status with the grant, and without. */
  readonly ok: number;
  readonly denied: (res: Response) => void | Promise<void>;
  /** What the response is with the grant, where its status alone does not say. */
  readonly granted?: (res: Response) => Promise<void>;
}

const serverError = (res: Response) => expect(res.status).toBeGreaterThanOrEqual(500);
const post = (api: TestApi, headers: Record<string, string> = {}) =>
  api.call('/pets', { method: 'POST', body: JSON.stringify({ name: 'Rex', categoryId: 1 }), headers });

/**
 * An operation's sample request (test/helpers/samples.ts), with a pet of its own where it names one: the scenario of
 * every grant of the operation that no scenario below names (the limiter's UpdateItem on State, and whatever the
 * sample's own code path calls). A grant the sample does not need fails its test: give it a scenario below.
 */
const sampleScenario = (route: (typeof ROUTES)[number]): Scenario => ({
  what: 'its sample request fails: 5xx',
  async run(api) {
    const fixtures = fixturesSending(async (made) => (await api.call(made.path, requestInit(made))).json());
    const r = await sampleRequest(route, fixtures);
    return api.call(r.path, { ...requestInit(r), contract: false });
  },
  ok: OPERATION_SAMPLES[route.operationId].status,
  denied: (res) => {
    serverError(res);
    expect(res.status).not.toBe(OPERATION_SAMPLES[route.operationId].status);
  },
});

/** Scenarios of the grants an operation's sample request does not show, by grant name. */
const SCENARIOS: Record<string, Scenario> = {
  'listPets dynamodb:Query Pets/index/byStatus': {
    what: 'listing by status fails: 5xx',
    run: (api) => api.call('/pets?status=available'),
    ok: 200,
    denied: serverError,
  },
  'createPet dynamodb:PutItem State': {
    what: 'a create with an Idempotency-Key cannot claim it: 5xx',
    run: (api) => post(api, { 'Idempotency-Key': 'iam-claim-0001' }),
    ok: 201,
    denied: serverError,
  },
  'createPet dynamodb:DeleteItem State': {
    what: "a failed create cannot release its Idempotency-Key: the client's retry gets 409, not its pet",
    async run(api) {
      const remove = onEveryClient(api, 'failTransactions', (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand') throw throttlingException();
        return next(args);
      });
      const first = await post(api, { 'Idempotency-Key': 'iam-release-0001' });
      remove();
      expect(first.status).toBe(503);
      return post(api, { 'Idempotency-Key': 'iam-release-0001' });
    },
    ok: 201,
    denied: (res) => expect(res.status).toBe(409),
  },
  'authorizer dynamodb:BatchGetItem ApiKeys': {
    what: 'no key can be checked: 503 from the gateway (AUTHORIZER_FAILURE)',
    run: (api) => api.call('/pets'),
    ok: 200,
    denied: (res) => expect(res.status).toBe(503),
  },
  // One BatchGetItem reads the key and its standing: without either table, the whole read is refused.
  'authorizer dynamodb:BatchGetItem State': {
    what: "no key's standing can be read with it: 503 from the gateway (AUTHORIZER_FAILURE)",
    run: (api) => api.call('/pets'),
    ok: 200,
    denied: (res) => expect(res.status).toBe(503),
  },
  // A spent key's first Deny is noted on its standing, and its return after that Deny expired is banned there.
  'authorizer dynamodb:UpdateItem State': {
    what: 'a spent key that keeps sending is never banned: quota_exceeded, not key_banned',
    async run(api) {
      const noon = Date.UTC(2034, 6, 3, 12, 0, 0);
      await setDayCounters(api, devKeyId(api.keys.pro), noon, { d: PLANS.pro.limits!.perDay });
      const at = async (ms: number) => {
        api.clock.set(() => ms);
        return api.call('/pets?limit=1', { key: api.keys.pro, contract: false });
      };
      try {
        await at(noon); // the function refuses it and records the spent day
        await at(noon + 1_000); // the authorizer denies it: its first Deny of the day
        return await at(noon + 1_000 + (SPENT_RETURN_SECONDS + 1) * 1_000);
      } finally {
        api.clock.reset();
      }
    },
    ok: 429,
    granted: async (res) => {
      expect(res.status).toBe(429);
      expect(((await res.json()) as { code: string }).code).toBe('key_banned');
    },
    denied: async (res) => {
      expect(res.status).toBe(429);
      expect(((await res.json()) as { code: string }).code).toBe('quota_exceeded');
    },
  },
};

let assembly: LocalAssembly;
let grants: Grant[];
beforeAll(async () => {
  assembly = await localAssembly();
  grants = grantsOf(assembly.template);
}, 240_000);

/** Every DynamoDB grant the route table declares (`access` on each entry), named as grantsOf names the template's. */
const DECLARED = Object.entries(FUNCTION_ACCESS).flatMap(([fn, access]) =>
  access.tables.flatMap((g) => g.actions.map((a) => `${fn} ${a} ${g.table.id}${g.index ? `/index/${g.index}` : ''}`)),
);

/** Each declared grant's scenario: its own, or its operation's sample request. */
const scenarioOf = (name: string): Scenario => {
  const route = ROUTES.find((r) => r.operationId === name.split(' ')[0]);
  const scenario = SCENARIOS[name] ?? (route && sampleScenario(route));
  if (!scenario) throw new Error(`no scenario for ${name}: add one to SCENARIOS`);
  return scenario;
};

it('the template grants exactly what the route table declares, and every scenario names a grant', () => {
  expect(grants.map((g) => g.name).sort()).toEqual([...DECLARED].sort());
  for (const name of Object.keys(SCENARIOS)) expect(DECLARED, name).toContain(name);
});

describe('each grant is needed', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ assembly });
  }, 60_000);
  afterAll(() => api?.close());

  for (const [name, scenario] of DECLARED.map((n) => [n, scenarioOf(n)] as const))
    it(`without ${name}, ${scenario.what}`, async () => {
      const grant = grants.find((g) => g.name === name);
      expect(grant, `no grant ${name} in the template`).toBeDefined();
      const control = await scenario.run(api);
      if (scenario.granted) await scenario.granted(control);
      else if (scenario.ok !== 429) expect(control.status).toBe(scenario.ok);
      else expect(control.headers.get('x-ratelimit-limit')).toBe('0');
      const mutated = await startTestApi({
        assembly: { ...assembly, template: withoutGrant(assembly.template, grant!) },
      });
      try {
        await scenario.denied(await scenario.run(mutated));
      } finally {
        await mutated.close();
      }
    }, 60_000);
});
