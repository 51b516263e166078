/**
 * Preflight's Enterprise bracket pools check as `npm run preflight` runs it with credentials: its reads built as the
 * admin tool's `--stage` builds them (the stack's outputs, then the keys table and API Gateway through the real
 * SDK clients), pointed by `AWS_ENDPOINT_URL_<SERVICE>` at stand-ins on the wire (aws-wire-stand-ins.ts: the
 * control-plane fake behind API Gateway's REST protocol, answering in pages) and at DynamoDB Local. What AWS answers
 * for a read the credentials may not make reaches the operator as a finding naming the permissions, not a trace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRACKET_POOL } from '../../contract/key-pool.ts';
import { localTableEnv } from '../../lambdas/storage/provision.ts';
import { ADMIN_OUTPUT_IDS } from '../../lib/admin/targets.ts';
import { bracketPoolsCheck } from '../../lib/preflight/bracket-pools-check.ts';
import type { PreflightInput } from '../../lib/preflight/checks.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';
import { made } from '../helpers/admin-scenarios.ts';
import { apiGatewayStandIn, cloudFormationStandIn, type WireStandIn } from '../helpers/aws-wire-stand-ins.ts';
import { controlPlaneWorld, problems, STAGE, type World } from '../helpers/control-plane-world.ts';
import { pageAnswers } from '../helpers/paged-answers.ts';

let world: World;
let dynamoEndpoint: string;
let stopApi: () => Promise<void> | void;
beforeAll(async () => {
  const { api, deps } = await startLocalAdmin();
  stopApi = () => api.close();
  dynamoEndpoint = api.dynamoEndpoint;
  world = controlPlaneWorld(deps);
  pageAnswers(world.fake, 2);
  await made(world, 'enterprise', { perMinute: 600, perDay: 50_000 });
});
afterAll(() => stopApi?.());

/** The stack's outputs the admin tool reads: the test's tables on DynamoDB Local, and the fake's API. */
function stackOutputs(): Record<string, string> {
  const names = localTableEnv(process.env.ANIMAL_STORE_TABLE_PREFIX!);
  return {
    ...Object.fromEntries(Object.entries(ADMIN_OUTPUT_IDS.tables).map(([envVar, id]) => [id, names[envVar]!])),
    [ADMIN_OUTPUT_IDS.apiId]: 'api123',
    ...Object.fromEntries(Object.values(ADMIN_OUTPUT_IDS.usagePlans).map((id) => [id, `plan-${id}`])),
  };
}

/** The check with its default reads, under credentials and endpoints as a pipeline's; its findings and notes. */
async function preflightWith(cfn: Parameters<typeof cloudFormationStandIn>[0], opts: { apiDenied?: boolean } = {}) {
  const servers: WireStandIn[] = [
    await cloudFormationStandIn(cfn),
    await apiGatewayStandIn(world.fake, { denied: opts.apiDenied }),
  ];
  const saved = { ...process.env };
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'AKIDPREFLIGHT',
    AWS_SECRET_ACCESS_KEY: 'preflight',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_CLOUDFORMATION: servers[0]!.url,
    AWS_ENDPOINT_URL_API_GATEWAY: servers[1]!.url,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
  });
  delete process.env.AWS_PROFILE;
  const notes: string[] = [];
  const input = { stage: STAGE, name: STAGE, note: (l: string) => notes.push(l) } as unknown as PreflightInput;
  try {
    return { findings: await bracketPoolsCheck().run(input), notes };
  } finally {
    process.env = saved;
    for (const s of servers) await s.close();
  }
}

describe('with credentials, through the real SDK clients', () => {
  it('fails on a bracket made before its probation member, and passes once the command it names has run', async () => {
    const probation = [...world.fake.keys.values()].find((k) => k.name.endsWith(`-m${BRACKET_POOL.members}`))!;
    world.fake.keys.delete(probation.id);
    for (const p of world.fake.plans.values()) p.keys.delete(probation.id);
    const before = await preflightWith({ outputs: stackOutputs() });
    expect(before.findings).toEqual([
      expect.stringMatching(
        /^Enterprise bracket pools: 1 of 1 bracket\(s\) in use on staging .*probation member m4 .*run npm run admin -- keys reconcile --all --stage staging,/,
      ),
    ]);
    const sweep = await runLocalAdmin(world.deps, 'keys', 'reconcile', '--all');
    expect(sweep.code, sweep.err).toBe(0);
    expect(await preflightWith({ outputs: stackOutputs() })).toEqual({ findings: [], notes: [] });
    expect(await problems(world)).toEqual([]);
  });

  it('names the permissions when API Gateway refuses apigateway:GET', async () => {
    const { findings } = await preflightWith({ outputs: stackOutputs() }, { apiDenied: true });
    expect(findings).toEqual([
      expect.stringMatching(
        /could not read API Gateway's usage plans .*\(AccessDeniedException: User: .*apigateway:GET/,
      ),
    ]);
    expect(findings[0]).toMatch(/preflight's credentials need .*apigateway:GET on \/usageplans.*; grant them/);
  });

  it('names the permissions when CloudFormation refuses DescribeStacks', async () => {
    const { findings } = await preflightWith('denied');
    expect(findings).toEqual([
      expect.stringMatching(/could not read the stage's stack outputs \(DescribeStacks\) \(AccessDenied: User: /),
    ]);
    expect(findings[0]).toMatch(/need cloudformation:DescribeStacks on the stack/);
  });

  it('skips a stage whose stack does not exist yet with a note (no key can be in a bracket)', async () => {
    expect(await preflightWith('absent')).toEqual({
      findings: [],
      notes: [expect.stringMatching(/^Enterprise bracket pools: the stage's stack does not exist yet.*: skipped$/)],
    });
  });
});
