/**
 * Every DynamoDB grant of every function's role is needed, and the local gateway enforces the roles: for each
 * action a role allows on a table or index, a copy of the synthesized template without that one grant is served,
 * and a request whose code path needs it now fails the way it would in AWS (AccessDeniedException, answered as
 * the function answers any such failure), while the same request succeeds with the template as synthesized. A
 * grant with no scenario fails the first test: give it one, or remove the grant if no code path uses it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { AUTHORIZER, ROUTES } from '../../contract/routes.ts';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { shardKey } from '../../lambdas/storage/limiter-items.ts';
import { localAssembly, type LocalAssembly } from '../../lib/local/synth.ts';
import type { CfnTemplate } from '../../lib/local/template.ts';
import { TABLE_METADATA, ENTRY_METADATA } from '../../lib/stacks/metadata.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { onEveryClient, throttlingException } from '../helpers/clients.ts';

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
    const entry = fn.Metadata?.[ENTRY_METADATA];
    if (fn.Type !== 'AWS::Lambda::Function' || typeof entry !== 'string') continue;
    const name = entry === AUTHORIZER.entry ? 'authorizer' : ROUTES.find((r) => r.entry === entry)!.operationId;
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
  readonly denied: (res: Response) => void;
}

const serverError = (res: Response) => expect(res.status).toBeGreaterThanOrEqual(500);
const post = (api: TestApi, headers: Record<string, string> = {}) =>
  api.call('/pets', { method: 'POST', body: JSON.stringify({ name: 'Rex', categoryId: 1 }), headers });
/** The limiter counts each request with one UpdateItem on the State table: without it nothing is admitted. */
const counted = (path: string, ok: number): Scenario => ({
  what: 'the limiter cannot count the request: 5xx',
  run: (api) => api.call(path, { contract: false }),
  ok,
  denied: serverError,
});

const SCENARIOS: Record<string, Scenario> = {
  'listPets dynamodb:UpdateItem State': counted('/pets', 200),
  'createPet dynamodb:UpdateItem State': { ...counted('/pets', 201), run: (api) => post(api) },
  'getPet dynamodb:UpdateItem State': counted('/pets/9007199254740000', 404),
  'listOrders dynamodb:UpdateItem State': counted('/store/orders', 501),
  'listPets dynamodb:Scan Pets': {
    what: 'listing fails: 5xx',
    run: (api) => api.call('/pets'),
    ok: 200,
    denied: serverError,
  },
  'listPets dynamodb:Query Pets/index/byStatus': {
    what: 'listing by status fails: 5xx',
    run: (api) => api.call('/pets?status=available'),
    ok: 200,
    denied: serverError,
  },
  'createPet dynamodb:PutItem Pets': {
    what: 'a create fails: 5xx',
    run: (api) => post(api),
    ok: 201,
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
  'getPet dynamodb:GetItem Pets': {
    what: 'reading a pet fails: 5xx',
    async run(api) {
      const created = (await (await post(api)).json()) as { id: number };
      return api.call(`/pets/${created.id}`);
    },
    ok: 200,
    denied: serverError,
  },
  'authorizer dynamodb:GetItem ApiKeys': {
    what: 'no key can be checked: 503 from the gateway (AUTHORIZER_FAILURE)',
    run: (api) => api.call('/pets'),
    ok: 200,
    denied: (res) => expect(res.status).toBe(503),
  },
  'authorizer dynamodb:GetItem State': {
    what: "a banned key is no longer stopped at the gateway: a function answers it (counted headers, not the gateway's 0)",
    async run(api) {
      const nowSec = Math.floor(Date.now() / 1000);
      // The Pro key: the control API serves the other scenarios with the Free key.
      const keyId = `dev_${hashKey(api.keys.pro).slice(0, 12)}`;
      const item = { ...shardKey(keyId, nowSec - (nowSec % 86_400), 0), banUntil: nowSec + 900 };
      await api.storage.doc.send(new PutCommand({ TableName: api.tableEnv.STATE_TABLE_NAME, Item: item }));
      const res = await api.call('/pets', { key: api.keys.pro, contract: false });
      expect(res.status).toBe(429);
      return res;
    },
    ok: 429,
    denied: (res) => expect(res.headers.get('x-ratelimit-limit')).not.toBe('0'),
  },
};

let assembly: LocalAssembly;
let grants: Grant[];
beforeAll(async () => {
  assembly = await localAssembly();
  grants = grantsOf(assembly.template);
}, 240_000);

it('every DynamoDB grant of every function has a scenario that needs it, and every scenario a grant', () => {
  expect(grants.map((g) => g.name).sort()).toEqual(Object.keys(SCENARIOS).sort());
});

describe('each grant is needed', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ assembly });
  }, 60_000);
  afterAll(() => api?.close());

  for (const [name, scenario] of Object.entries(SCENARIOS))
    it(`without ${name}, ${scenario.what}`, async () => {
      const grant = grants.find((g) => g.name === name);
      expect(grant, `no grant ${name} in the template`).toBeDefined();
      const control = await scenario.run(api);
      if (scenario.ok !== 429) expect(control.status).toBe(scenario.ok);
      else expect(control.headers.get('x-ratelimit-limit')).toBe('0');
      const mutated = await startTestApi({
        assembly: { ...assembly, template: withoutGrant(assembly.template, grant!) },
      });
      try {
        scenario.denied(await scenario.run(mutated));
      } finally {
        await mutated.close();
      }
    }, 60_000);
});
