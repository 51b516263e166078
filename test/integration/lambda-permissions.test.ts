/**
 * API Gateway's side of IAM, emulated by the local gateway (lib/local/permissions.ts): it invokes a function only
 * where an AWS::Lambda::Permission of the template lets API Gateway invoke that alias from that method's ARN. Each
 * permission removed in turn from a copy of the synthesized template makes the route it covers answer as AWS does:
 * the gateway's API_CONFIGURATION_ERROR response (500) for an operation, the AUTHORIZER_CONFIGURATION_ERROR response
 * (this stack answers it 503, like every authorizer failure) on every route for the authorizer. A permission whose
 * SourceArn names another method does the same, and a table resource policy is refused at start.
 */
import { describe, expect, it } from 'vitest';
import { AUTHORIZER, ROUTES } from '../../contract/routes.ts';
import type { CfnTemplate } from '../../lib/local/template.ts';
import { FUNCTION_METADATA } from '../../lib/stacks/metadata.ts';
import { assemblyApiFixture } from '../helpers/assembly-api.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { PLACEHOLDER_FIXTURES, requestInit, sampleRequest } from '../helpers/samples.ts';

const served = assemblyApiFixture();

/**
 * Each Lambda permission of the template, with the name of the function it lets API Gateway invoke: named by a `Ref`
 * to its alias, or by the function's ARN joined with `:<alias>`.
 */
function permissions(t: CfnTemplate): { id: string; fn: string }[] {
  return Object.entries(t.Resources)
    .filter(([, r]) => r.Type === 'AWS::Lambda::Permission')
    .map(([id, r]) => {
      const name = r.Properties!.FunctionName;
      const fnId = name.Ref
        ? t.Resources[name.Ref]!.Properties!.FunctionName.Ref
        : name['Fn::Join'][1][0]['Fn::GetAtt'][0];
      return { id, fn: String(t.Resources[fnId]!.Metadata?.[FUNCTION_METADATA]) };
    });
}

/** Every route's sample request on `on`, with a Pro key: status and the Error object's code. */
async function answers(on: TestApi): Promise<Map<string, { status: number; code?: string }>> {
  const out = new Map<string, { status: number; code?: string }>();
  for (const route of ROUTES) {
    const r = await sampleRequest(route, PLACEHOLDER_FIXTURES);
    const res = await fetch(`${on.url}${r.path}`, requestInit(r, { key: on.keys.pro }));
    const body = (await res.json().catch(() => ({}))) as { code?: string };
    out.set(route.operationId, { status: res.status, code: body.code });
  }
  return out;
}

async function servedWith(template: CfnTemplate, check: (on: TestApi) => Promise<void>): Promise<void> {
  const mutated = await startTestApi({ assembly: { ...served.assembly, template } });
  try {
    await check(mutated);
  } finally {
    await mutated.close();
  }
}

const CONFIGURATION_ERROR = { status: 500, code: 'internal_error' };
const AUTHORIZER_CONFIGURATION_ERROR = { status: 503, code: 'service_unavailable' };

it('answers every route from its function while every permission is there', async () => {
  expect(
    permissions(served.assembly.template)
      .map((p) => p.fn)
      .sort(),
  ).toEqual([...ROUTES.map((r) => r.operationId), AUTHORIZER.name].sort());
  // listOrders's own answer is 501 (an operation without a contract); no gateway configuration error anywhere.
  for (const [op, a] of await answers(served.api)) expect([500, 503], op).not.toContain(a.status);
}, 60_000);

describe('without one Lambda permission', () => {
  // Every function of the route table, and the authorizer: a new operation's permission is tested with no edit.
  it.each([...ROUTES.map((r) => r.operationId), AUTHORIZER.name])(
    "without %s's permission, its routes answer as AWS does",
    async (name) => {
      const template = structuredClone(served.assembly.template);
      const gone = permissions(template).find((p) => p.fn === name)!;
      delete template.Resources[gone.id];
      await servedWith(template, async (on) => {
        for (const [op, a] of await answers(on))
          if (name === AUTHORIZER.name) expect(a, op).toEqual(AUTHORIZER_CONFIGURATION_ERROR);
          else if (op === name) expect(a, op).toEqual(CONFIGURATION_ERROR);
          else expect(a.status, op).not.toBe(CONFIGURATION_ERROR.status);
      });
    },
    60_000,
  );
});

it("refuses a permission whose SourceArn names another method (GET /pets's pointed at POST)", async () => {
  const template = structuredClone(served.assembly.template) as any;
  const id = permissions(template).find((p) => p.fn === 'listPets')!.id;
  const parts = template.Resources[id].Properties.SourceArn['Fn::Join'][1] as unknown[];
  parts[parts.length - 1] = String(parts.at(-1)).replace('/GET/', '/POST/');
  await servedWith(template, async (on) => {
    const all = await answers(on);
    expect(all.get('listPets')).toEqual(CONFIGURATION_ERROR);
    expect(all.get('createPet')?.status).toBe(201);
  });
}, 60_000);

it('refuses to start with a table resource policy it does not evaluate, naming the table', async () => {
  const template = structuredClone(served.assembly.template) as any;
  const replica = template.Resources.PetsTable.Properties.Replicas[0];
  replica.ResourcePolicy = {
    PolicyDocument: {
      Version: '2012-10-17',
      Statement: [{ Effect: 'Deny', Principal: '*', Action: 'dynamodb:PutItem', Resource: '*' }],
    },
  };
  await expect(startTestApi({ assembly: { ...served.assembly, template } })).rejects.toThrow(
    /table PetsTable\): a table resource policy \(ResourcePolicy\) is not evaluated locally/,
  );
}, 60_000);
