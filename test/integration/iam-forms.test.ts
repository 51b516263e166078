/**
 * The local gateway reads a Deny however the template attaches it to a function's role, as AWS does: through an
 * AWS::IAM::ManagedPolicy (its `Roles`, or the role's `ManagedPolicyArns`), an AWS::IAM::RolePolicy, or an
 * AWS::IAM::Policy naming the role by its `RoleName`; and it refuses to start, naming the policy, when a policy names
 * a role it cannot tie to the template. Before, each of these was ignored and `POST /pets` answered 201.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localAssembly, type LocalAssembly } from '../../lib/local/synth.ts';
import type { CfnResource, CfnTemplate } from '../../lib/local/template.ts';
import { FUNCTION_METADATA } from '../../lib/stacks/metadata.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';

let assembly: LocalAssembly;
let roleId: string;

beforeAll(async () => {
  assembly = await localAssembly();
  const [, fn] = Object.entries(assembly.template.Resources).find(
    ([, r]) => r.Type === 'AWS::Lambda::Function' && r.Metadata?.[FUNCTION_METADATA] === 'createPet',
  )!;
  roleId = fn.Properties!.Role['Fn::GetAtt'][0];
}, 120_000);

const DENY_PUT = { Version: '2012-10-17', Statement: [{ Effect: 'Deny', Action: 'dynamodb:PutItem', Resource: '*' }] };

/** The template with `extra` resources added and the createPet role's properties changed by `role`. */
function variant(extra: Record<string, CfnResource>, role: Record<string, unknown> = {}): CfnTemplate {
  const t = structuredClone(assembly.template) as { Resources: Record<string, CfnResource> };
  const r = t.Resources[roleId]!;
  t.Resources[roleId] = { ...r, Properties: { ...r.Properties, ...role } };
  Object.assign(t.Resources, extra);
  return t;
}

const createPet = (api: TestApi) =>
  api.call('/pets', { method: 'POST', body: JSON.stringify({ name: 'Rex', categoryId: 1 }) });

describe('a Deny attached to the role in any form', () => {
  const FORMS: [string, () => CfnTemplate][] = [
    [
      'an AWS::IAM::ManagedPolicy listing the role',
      () =>
        variant({
          Extra: {
            Type: 'AWS::IAM::ManagedPolicy',
            Properties: { Roles: [{ Ref: roleId }], PolicyDocument: DENY_PUT },
          },
        }),
    ],
    [
      "an AWS::IAM::ManagedPolicy in the role's ManagedPolicyArns",
      () =>
        variant(
          { Extra: { Type: 'AWS::IAM::ManagedPolicy', Properties: { PolicyDocument: DENY_PUT } } },
          { ManagedPolicyArns: [{ Ref: 'Extra' }] },
        ),
    ],
    [
      'an AWS::IAM::RolePolicy',
      () =>
        variant({
          Extra: {
            Type: 'AWS::IAM::RolePolicy',
            Properties: { RoleName: { Ref: roleId }, PolicyName: 'deny', PolicyDocument: DENY_PUT },
          },
        }),
    ],
    [
      'an AWS::IAM::Policy naming the role by its RoleName',
      () =>
        variant(
          {
            Extra: {
              Type: 'AWS::IAM::Policy',
              Properties: { Roles: ['create-pet'], PolicyName: 'deny', PolicyDocument: DENY_PUT },
            },
          },
          { RoleName: 'create-pet' },
        ),
    ],
  ];

  let control: TestApi;
  beforeAll(async () => {
    control = await startTestApi({ assembly });
  }, 60_000);
  afterAll(() => control?.close());

  it.each(FORMS)(
    '%s: POST /pets fails as in AWS instead of answering 201',
    async (_form, template) => {
      expect((await createPet(control)).status).toBe(201);
      const api = await startTestApi({ assembly: { ...assembly, template: template() } });
      try {
        expect((await createPet(api)).status).toBeGreaterThanOrEqual(500);
      } finally {
        await api.close();
      }
    },
    60_000,
  );
});

it('refuses to start when a policy names a role by a string no role of the template has', async () => {
  const template = variant({
    Extra: {
      Type: 'AWS::IAM::Policy',
      Properties: { Roles: ['somebody'], PolicyName: 'deny', PolicyDocument: DENY_PUT },
    },
  });
  await expect(startTestApi({ assembly: { ...assembly, template } })).rejects.toThrow(/names the role "somebody"/);
}, 60_000);
