/**
 * An incident in the live version must not block its own fix. The live listPets answers 429 to everyone; a release
 * ships the fix. Played as CodeDeploy runs each template's deployment of listPets (test/helpers/codedeploy-model.ts):
 * the normal template's pre-traffic check cannot judge (the live version fails every request) and stops the fix
 * before any traffic; the break-glass template runs no check, no gate and no bake, and the fix reaches 100 %.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { PLAN_NAMES } from '../../contract/plans.ts';
import { AUTHORIZER } from '../../contract/routes.ts';
import { LIVE_ALIAS } from '../../contract/aliases.ts';
import { preTrafficHook, type PreTrafficPorts } from '../../lambdas/hooks/pre-traffic-hook.ts';
import type { Outcome } from '../../lambdas/hooks/pre-traffic-check.ts';
import { invoke, type Handler, type LocalFunction } from '../../lib/local/lambda.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { BREAK_GLASS_CONTEXT } from '../../lib/stacks/break-glass.ts';
import { SYNTH_CONTEXT } from '../infra/synth-context.ts';
import { sharedTemplateJson } from '../infra/shared-synth.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { EVERY_PLAN, planKey, registerKeys } from '../helpers/plan-keys.ts';
import { aliasDeployments, playDeployment, type HookStatus } from '../helpers/codedeploy-model.ts';

const REASON = 'listPets answers 429 to everyone; this deploy ships the fix';
const FIX = 'listPets';

let api: TestApi;
let byName: Map<string, LocalFunction>;
let keys: Record<string, string>;
let skipped = 0;

beforeAll(async () => {
  api = await startTestApi();
  api.clock.set(() => Date.now() + skipped);
  byName = new Map([...api.functions.values()].map((f) => [f.def.name, f]));
  const enterprise = planKey(EVERY_PLAN.find((c) => c.plan === 'enterprise')!);
  await registerKeys(api, [enterprise], 'pre-traffic-check');
  keys = { ...api.keys, enterprise: enterprise.key };
}, 120_000);
afterAll(() => api?.close());

/** The incident: the live version refuses every request with the limiter's 429. */
const refusesEveryone: Handler = async (): Promise<APIGatewayProxyResult> => ({
  statusCode: 429,
  headers: { 'Content-Type': 'application/json', 'Retry-After': '60' },
  body: JSON.stringify({ code: 'rate_limited', message: 'Too many requests.', status: 429 }),
});

/** Runs the real pre-traffic hook on the deployment of the fix: version 2 is the fix, version 1 and `live` the incident. */
async function preTraffic(logs: string[]): Promise<HookStatus> {
  const fn = byName.get(FIX)!;
  const authorizer = byName.get(AUTHORIZER.name)!;
  const stage = api.model.stageName;
  const ports: PreTrafficPorts = {
    appSpec: async () =>
      JSON.stringify({
        version: 0.0,
        Resources: [
          {
            [fn.def.logicalId]: {
              Type: 'AWS::Lambda::Function',
              Properties: { Name: fn.def.logicalId, Alias: LIVE_ALIAS, CurrentVersion: '1', TargetVersion: '2' },
            },
          },
        ],
      }),
    async invoke(functionName, qualifier, event): Promise<Outcome> {
      const target = api.functions.get(functionName)!;
      const broken = target.def.name === FIX && qualifier !== '2';
      const r = await invoke(broken ? { ...target, handler: refusesEveryone } : target, event, qualifier);
      return r.ok ? { ok: true, result: r.result } : { ok: false, error: r.error };
    },
    report: async () => undefined,
    checkKeys: async () => ({ byPlan: keys, missing: PLAN_NAMES.filter((p) => !keys[p]) }),
    log: (line) => void logs.push(line),
    now: () => api.clock.now(),
    sleep: async (ms) => void (skipped += ms),
  };
  const verdict = await preTrafficHook({ DeploymentId: 'd-fix', LifecycleEventHookExecutionId: 'x' }, ports, {
    functions: Object.fromEntries([...api.functions.values()].map((f) => [f.def.logicalId, f.def.name])),
    stage,
    keysStage: authorizer.runtime.config.USAGE_KEYS_STAGE ?? authorizer.runtime.config.STAGE,
    methodArn: `arn:aws:execute-api:us-east-1:123456789012:local/${stage}/GET/v1/pets`,
    liveAlias: LIVE_ALIAS,
  });
  logs.push(...verdict.problems);
  return verdict.status;
}

async function ship(template: { Resources: Record<string, any> }, logs: string[]) {
  const deployment = aliasDeployments(template).get(byName.get(FIX)!.def.logicalId);
  if (!deployment) throw new Error(`the template deploys no alias of ${FIX}`);
  return playDeployment(deployment, {
    hook: async (kind) => {
      if (kind !== 'preTraffic') throw new Error(`${FIX}'s deployment runs the ${kind} hook, which only writes have`);
      return preTraffic(logs);
    },
    // The incident's 429s are no 5xx: no gate fires. (A 5xx incident fires its gate: break glass disables it too.)
    alarmFires: () => false,
  });
}

describe('the fix for a live version answering 429 to everyone', () => {
  it('is stopped before traffic by a normal deploy: the check cannot judge, and says break glass is the way', async () => {
    const logs: string[] = [];
    const end = await ship(sharedTemplateJson('staging') as { Resources: Record<string, any> }, logs);
    expect(end).toEqual({ weight: 0, stoppedAt: 'BeforeAllowTraffic' });
    expect(logs.join('\n')).toMatch(/cannot judge: .*breakGlass="<reason>"/);
  });

  it('reaches 100 % with break glass: no check, no gate, no bake, all at once', async () => {
    const app = createApp({ context: { ...SYNTH_CONTEXT, [BREAK_GLASS_CONTEXT]: REASON } });
    const template = Template.fromStack(app.stacks.production).toJSON() as {
      Resources: Record<string, any>;
      Outputs: Record<string, { Value: unknown }>;
    };
    const logs: string[] = [];
    expect(await ship(template, logs)).toEqual({ weight: 1 });
    expect(logs).toEqual([]);
    // The deploy records why it skipped its checks.
    expect(template.Outputs.BreakGlass?.Value).toBe(REASON);
  }, 120_000);
});
