/**
 * The cursor secret stays out of function configuration (AWS: Lambda returns environment variables in plain text to
 * anyone allowed lambda:GetFunctionConfiguration, and CloudFormation resolves a `{{resolve:secretsmanager:…}}`
 * dynamic reference only when the resource that holds it is updated, so a new value never reached the function).
 * The operations whose route entry declares `cursorSecret` (the listings) get the secret's ARN and may call
 * GetSecretValue on that one secret; no other function may read it.
 */
import { describe, expect, it } from 'vitest';
import { STAGES, STAGE_NAMES } from '../../lib/config/stages.ts';
import { checkKeySecretName } from '../../lib/constructs/pre-traffic-hook.ts';
import { DEPLOY_HOOK_METADATA } from '../../lib/stacks/metadata.ts';
import { ROUTES } from '../../contract/routes.ts';
import { FUNCTION_ACCESS } from '../../lib/stacks/function-access.ts';
import { functionOf, resources, synthesizeStages, templates } from './stack-fixture.ts';

synthesizeStages();

const actionsOf = (s: { Action: string | string[] }) => [s.Action].flat();
/** The readers the route table declares. */
const READERS: readonly string[] = ROUTES.filter((r) => 'cursorSecret' in r.access && r.access.cursorSecret).map(
  (r) => r.operationId,
);

describe.each(STAGE_NAMES)('stage %s', (stageName) => {
  const t = () => templates[stageName];
  const secretId = () => {
    const secrets = resources(t(), 'AWS::SecretsManager::Secret');
    expect(secrets).toHaveLength(1);
    return secrets[0]![0];
  };

  it('puts no dynamic reference and no secret value in any function environment: its readers get the ARN only', () => {
    expect(READERS.length).toBeGreaterThan(0);
    const fns = resources(t(), 'AWS::Lambda::Function');
    // The API's functions and the deploy hooks (the pre-traffic check reads a secret of its own, named in its
    // configuration).
    const hooks = fns.filter(([, f]) => f.Metadata?.[DEPLOY_HOOK_METADATA]);
    expect(hooks.length).toBeGreaterThan(0);
    expect(fns.length).toBe(Object.keys(FUNCTION_ACCESS).length + hooks.length);
    for (const [, fn] of fns) {
      const env = fn.Properties.Environment?.Variables ?? {};
      const text = JSON.stringify(env);
      expect(text).not.toContain('{{resolve:');
      expect(text).not.toMatch(/SecretString|secretsmanager:/);
      expect(env.CURSOR_SECRET).toBeUndefined();
    }
    for (const name of Object.keys(FUNCTION_ACCESS)) {
      const env = functionOf(t(), name).fn.Properties.Environment.Variables;
      if (READERS.includes(name)) expect(env.CURSOR_SECRET_ARN).toEqual({ Ref: secretId() });
      else expect(env.CURSOR_SECRET_ARN).toBeUndefined();
    }
    expect(JSON.stringify(t().toJSON())).not.toContain('{{resolve:secretsmanager');
  });

  it("lets its readers' roles call GetSecretValue on exactly that secret, and nothing else on any secret", () => {
    const readerRoles = new Set<string>();
    for (const reader of READERS) {
      const { statements, roleId } = functionOf(t(), reader);
      readerRoles.add(roleId);
      const secretStatements = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('secretsmanager:')));
      expect(secretStatements, reader).toEqual([
        { Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: { Ref: secretId() } },
      ]);
    }
    // The pre-traffic hook reads its own check key (an issued key's secret, by its name), never this secret.
    const [hookId, hook] = resources(t(), 'AWS::Lambda::Function').find(
      ([, f]) => f.Metadata?.[DEPLOY_HOOK_METADATA] === 'preTraffic',
    )!;
    const hookRole = hook.Properties.Role['Fn::GetAtt'][0] as string;
    const hookSecrets = resources(t(), 'AWS::IAM::Policy')
      .filter(([, p]) => p.Properties.Roles.some((r: any) => r.Ref === hookRole))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as any[])
      .filter((s) => actionsOf(s).some((a) => a.startsWith('secretsmanager:')));
    expect(hookSecrets.map(actionsOf), hookId).toEqual([['secretsmanager:GetSecretValue']]);
    expect(JSON.stringify(hookSecrets[0].Resource)).toContain(
      `secret:${checkKeySecretName(STAGES[stageName].name)}-??????`,
    );
    expect(JSON.stringify(hookSecrets)).not.toContain(secretId());
    // No other role of the stack (the other functions', the deployment's, the API's) touches a secret.
    for (const [, policy] of resources(t(), 'AWS::IAM::Policy')) {
      if (policy.Properties.Roles.some((r: any) => readerRoles.has(r.Ref) || r.Ref === hookRole)) continue;
      const text = JSON.stringify(policy.Properties.PolicyDocument);
      expect(text).not.toContain('secretsmanager:');
      expect(text).not.toContain(secretId());
    }
    for (const [, role] of resources(t(), 'AWS::IAM::Role'))
      expect(JSON.stringify(role.Properties.Policies ?? [])).not.toContain('secretsmanager:');
  });
});
