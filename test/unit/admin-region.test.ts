/**
 * The admin tool's --stage target resolves the region once, as the AWS SDK does (AWS_REGION, else the profile's
 * region in the shared config file), and gives that one region to every client: CloudFormation (stack outputs),
 * DynamoDB (key records) and, for the one command that calls it, API Gateway. CloudFormation and API Gateway are
 * stubbed with
 * aws-sdk-client-mock (no local engine exists for those control planes); the DynamoDB client is the real one,
 * only inspected.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APIGatewayClient, GetUsagePlansCommand } from '@aws-sdk/client-api-gateway';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAGES } from '../../lib/config/stages.ts';
import { ADMIN_TABLES } from '../../lib/admin/targets.ts';
import { tableNameOutputId } from '../../lib/stacks/outputs.ts';
import { TABLES, tableKey } from '../../contract/tables.ts';

const saved = { ...process.env };
const cfn = mockClient(CloudFormationClient);
const apigw = mockClient(APIGatewayClient);

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'admin-region-'));
  writeFileSync(join(dir, 'config'), '[profile ops]\nregion = eu-central-1\n');
  writeFileSync(join(dir, 'credentials'), '[ops]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = example\n');
  for (const k of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'DYNAMODB_ENDPOINT', ...TABLES.map((t) => t.envVar)])
    delete process.env[k];
  Object.assign(process.env, {
    AWS_CONFIG_FILE: join(dir, 'config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
    AWS_PROFILE: 'ops',
  });
  // Only the outputs the admin tool uses: a stack without a table the tool does not touch still serves it.
  const outputs = Object.entries({
    ...Object.fromEntries(ADMIN_TABLES.map((t) => [tableNameOutputId(t), `${tableKey(t)}-t`])),
  }).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue }));
  cfn.on(DescribeStacksCommand).resolves({
    Stacks: [
      {
        StackName: 'AnimalStore-staging',
        CreationTime: new Date(),
        StackStatus: 'CREATE_COMPLETE',
        Outputs: outputs,
      },
    ],
  });
  apigw.on(GetUsagePlansCommand).resolves({ items: [] });
});
afterAll(() => {
  process.env = { ...saved };
});

describe('admin --stage region', () => {
  it("uses the profile's region for CloudFormation, API Gateway and DynamoDB alike (not us-east-1)", async () => {
    const { realDeps } = await import('../../lib/admin/cli.ts');
    const deps = await realDeps({ local: false, stage: 'staging' });
    const cfnRegion = await (cfn.call(0).thisValue as CloudFormationClient).config.region();
    await (await deps.controlPlane!()).gateway.send(new GetUsagePlansCommand({}));
    const apigwRegion = await (apigw.call(0).thisValue as APIGatewayClient).config.region();
    const { ddb, tables } = deps.storage!;
    expect({ cfnRegion, apigwRegion, dynamoRegion: await ddb.config.region() }).toEqual({
      cfnRegion: 'eu-central-1',
      apigwRegion: 'eu-central-1',
      dynamoRegion: 'eu-central-1',
    });
    expect(tables.keys).toBe('keys-t');
    // The stack is the stage's own, as lib/config/stages.ts names it for `cdk deploy`.
    expect(cfn.commandCalls(DescribeStacksCommand)[0]!.args[0].input.StackName).toBe(STAGES.staging.stackName);
  });

  it('refuses to run without any region, rather than guess one', async () => {
    const { realDeps } = await import('../../lib/admin/cli.ts');
    // A new file: the SDK caches the files it has read.
    const bare = join(mkdtempSync(join(tmpdir(), 'admin-region-')), 'config');
    writeFileSync(bare, '[profile ops]\n');
    process.env.AWS_CONFIG_FILE = bare;
    await expect(realDeps({ local: false, stage: 'staging' })).rejects.toThrow(/no AWS region/);
  });
});
