/**
 * moto (Python's AWS emulator, `moto_server`) as a second, independent implementation of the AWS APIs the admin
 * tool's stage path calls: DynamoDB, CloudFormation's DescribeStacks and, for its one command that writes there, API
 * Gateway's control plane, all served by one process. The project's own fake (control-plane-fake.ts) stays for fault injection and quotas; moto checks what
 * the fake cannot check about itself: that the SDK's real request shapes are accepted and its answers parsed, and
 * that errors come back under the names the tool catches.
 *
 * moto is not an npm package (PyPI is not reachable from here, so the project cannot install it): a machine without
 * `moto_server` skips these tests and says how to get it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateDeploymentCommand,
  CreateRestApiCommand,
  CreateUsagePlanCommand,
  CreateUsagePlanKeyCommand,
  GetApiKeysCommand,
  GetResourcesCommand,
  GetUsagePlanKeysCommand,
  GetUsagePlansCommand,
  PutIntegrationCommand,
  PutMethodCommand,
  type UsagePlan,
} from '@aws-sdk/client-api-gateway';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { ADMIN_OUTPUT_IDS } from '../../lib/admin/targets.ts';
import { OUTPUT_IDS, USAGE_KEYS_PER_PLAN } from '../../lib/stacks/outputs.ts';
import type { CfnTemplate } from '../../lib/local/template.ts';

/** What a user runs to get `moto_server` (the README says the same). */
export const MOTO_INSTALL = 'pip install "moto[server]"';

/** The region every client uses: moto keeps each region's resources apart, as AWS does. */
export const MOTO_REGION = 'us-east-1';

/** Fake credentials: moto accepts any, and none of a developer's real ones may reach it or AWS. */
const CREDENTIALS = { accessKeyId: 'AKIDMOTOTEST', secretAccessKey: 'moto-test' };

/** Where `moto_server` is on this machine's PATH, if anywhere. */
export function motoServerPath(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v moto_server'], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() ? found.stdout.trim() : undefined;
}

export interface Moto {
  /** One endpoint for every service (moto routes by the request's signing name and path). */
  readonly endpoint: string;
  /** The SDK client settings for it: region, endpoint, fake credentials. */
  readonly config: { region: string; endpoint: string; credentials: typeof CREDENTIALS };
  /**
   * The requests moto answered with an error (HTTP 400 and above) since the last call, from its request log: what a
   * command tolerated (a NotFoundException it treats as done) or retried, which its exit code does not show.
   */
  takeErrors(): string[];
  stop(): Promise<void>;
}

/** A port nobody listens on now, on the loopback address (moto is bound there and nowhere else). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Stops our own moto_server (by its pid; the pyenv shim execs python, so that pid is the server). */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/**
 * Starts `moto_server` on 127.0.0.1 on a free port and waits until it answers. Another process can take the port
 * between the probe and moto's bind: then moto exits at once, and a new port is tried.
 */
export async function startMoto(): Promise<Moto> {
  const path = motoServerPath();
  if (!path) throw new Error(`moto_server is not installed (${MOTO_INSTALL})`);
  let lastError = '';
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    const child = spawn(path, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let partial = '';
    const errors: string[] = [];
    child.stderr!.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString()).slice(-2_000);
      // Werkzeug's request log: `127.0.0.1 - - [date] "GET /usageplans HTTP/1.1" 404 -`.
      const lines = (partial + c.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const m = /"([A-Z]+ \S+) HTTP\/[\d.]+" (\d{3})/.exec(line);
        if (m && Number(m[2]) >= 400) errors.push(`${m[1]} ${m[2]}`);
      }
    });
    const endpoint = `http://127.0.0.1:${port}`;
    // Python's start-up and moto's imports take a few seconds on a loaded machine.
    for (let waited = 0; waited < 60_000 && child.exitCode === null; waited += 200) {
      const up = await fetch(`${endpoint}/moto-api/`).then(
        (r) => r.ok,
        () => false,
      );
      if (up)
        return {
          endpoint,
          config: { region: MOTO_REGION, endpoint, credentials: CREDENTIALS },
          takeErrors: () => errors.splice(0),
          stop: () => stopChild(child),
        };
      await new Promise((r) => setTimeout(r, 200));
    }
    lastError = stderr;
    await stopChild(child);
  }
  throw new Error(`moto_server did not start: ${lastError.trim().split('\n').slice(-3).join(' / ')}`);
}

/** The environment the admin tool's `--stage` path reads: every SDK client pointed at moto, fake credentials. */
export function motoEnv(moto: Moto): Record<string, string> {
  return {
    AWS_REGION: MOTO_REGION,
    AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    // The SDK's own endpoint override, for every service: what a user of moto would set.
    AWS_ENDPOINT_URL: moto.endpoint,
    // No profile, config or credentials file of the developer's is read.
    AWS_CONFIG_FILE: '/nonexistent/aws-config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
  };
}

/** Sets `env` in this process (a test file's own worker) and returns what puts the environment back. */
export function useEnv(env: Record<string, string>): () => void {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  delete process.env.AWS_PROFILE;
  delete process.env.AWS_SESSION_TOKEN;
  return () => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  };
}

export interface MotoStage {
  readonly stackName: string;
  readonly apiId: string;
  readonly stageName: string;
  /** The stack's usage plans and API keys by logical id, as moto made them. */
  readonly planIds: ReadonlyMap<string, string>;
  readonly keyIds: ReadonlyMap<string, string>;
  /** The stack's resources as CloudFormation would list them: logical id, type, moto's physical id. */
  readonly resources: ReadonlyArray<{ logicalId: string; type: string; physicalId: string }>;
  /** The stack's outputs the admin tool reads (ADMIN_OUTPUT_IDS), with the tables' names. */
  readonly outputs: Readonly<Record<string, string>>;
  /** The tables' variables (`KEYS_TABLE_NAME`…) to their physical names. */
  readonly tableEnv: Readonly<Record<string, string>>;
}

type Props = Record<string, any>;
const ofType = (t: CfnTemplate, type: string) =>
  Object.entries(t.Resources).filter(([, r]) => r.Type === type) as Array<[string, { Properties: Props }]>;
const refOf = (v: unknown): string | undefined => (v as { Ref?: string } | undefined)?.Ref;

/**
 * What a deployed stack holds, in moto, from a template: its REST API with its stage, every usage plan with its
 * figures, every API key with its value and each on its usage plan; the admin tool's tables, created from contract/tables.ts as the data construct
 * creates them; and a CloudFormation stack of the stage's name whose outputs name them, which `--stage` reads.
 * CloudFormation's own resource engine is not used: moto implements few of the template's types, so the template's
 * API Gateway resources are created one by one, in the order CloudFormation would (plans, keys, then plan keys).
 */
export async function deployStage(moto: Moto, template: CfnTemplate, stackName: string): Promise<MotoStage> {
  const gw = new APIGatewayClient(moto.config);
  const [restApiLogical, restApi] = ofType(template, 'AWS::ApiGateway::RestApi')[0]!;
  const [stageLogical, stage] = ofType(template, 'AWS::ApiGateway::Stage')[0]!;
  const stageName = stage.Properties.StageName as string;
  const api = await gw.send(new CreateRestApiCommand({ name: restApi.Properties.Name }));
  // A stage needs a deployment, and a deployment a method: one MOCK method on the root stands in for the API's.
  const root = (await gw.send(new GetResourcesCommand({ restApiId: api.id! }))).items!.find((r) => r.path === '/')!;
  await gw.send(
    new PutMethodCommand({ restApiId: api.id!, resourceId: root.id!, httpMethod: 'GET', authorizationType: 'NONE' }),
  );
  await gw.send(
    new PutIntegrationCommand({ restApiId: api.id!, resourceId: root.id!, httpMethod: 'GET', type: 'MOCK' }),
  );
  await gw.send(new CreateDeploymentCommand({ restApiId: api.id!, stageName }));
  const refs = new Map<string, string>([
    [restApiLogical, api.id!],
    [stageLogical, stageName],
  ]);

  const planIds = new Map<string, string>();
  for (const [logical, { Properties: p }] of ofType(template, 'AWS::ApiGateway::UsagePlan')) {
    const plan = await gw.send(
      new CreateUsagePlanCommand({
        name: p.UsagePlanName,
        description: p.Description,
        apiStages: (p.ApiStages as Props[]).map((s) => ({
          apiId: refs.get(refOf(s.ApiId)!)!,
          stage: refs.get(refOf(s.Stage)!)!,
        })),
        ...(p.Throttle ? { throttle: { rateLimit: p.Throttle.RateLimit, burstLimit: p.Throttle.BurstLimit } } : {}),
        ...(p.Quota ? { quota: { limit: p.Quota.Limit, period: p.Quota.Period } } : {}),
      }),
    );
    planIds.set(logical, plan.id!);
  }
  const keyIds = new Map<string, string>();
  for (const [logical, { Properties: p }] of ofType(template, 'AWS::ApiGateway::ApiKey')) {
    const key = await gw.send(new CreateApiKeyCommand({ name: p.Name, value: p.Value, enabled: p.Enabled }));
    keyIds.set(logical, key.id!);
  }
  for (const [, { Properties: p }] of ofType(template, 'AWS::ApiGateway::UsagePlanKey'))
    await gw.send(
      new CreateUsagePlanKeyCommand({
        usagePlanId: planIds.get(refOf(p.UsagePlanId)!)!,
        keyId: keyIds.get(refOf(p.KeyId)!)!,
        keyType: p.KeyType,
      }),
    );
  gw.destroy();

  // Physical names as CloudFormation makes them (stack, logical id, a suffix), not the local prefix's.
  const suffix = Math.random().toString(36).slice(2, 10).toUpperCase();
  const prefix = `${stackName}-Data-${suffix}`;
  const tableEnv = await provisionLocalTables(moto.endpoint, prefix);

  const outputs: Record<string, string> = {
    ...Object.fromEntries(Object.entries(ADMIN_OUTPUT_IDS.tables).map(([envVar, id]) => [id, tableEnv[envVar]!])),
    // This release's stack: its authorizer names each plan's API key, so paying keys are made.
    [OUTPUT_IDS.usageKeys]: USAGE_KEYS_PER_PLAN,
  };
  // A stack of the stage's name whose outputs are those values: what `--stage` finds with DescribeStacks. Its one
  // resource is a placeholder (a stack needs one).
  const cfn = new CloudFormationClient(moto.config);
  await cfn.send(
    new CreateStackCommand({
      StackName: stackName,
      TemplateBody: JSON.stringify({
        Resources: { Placeholder: { Type: 'AWS::CloudFormation::WaitConditionHandle' } },
        Outputs: Object.fromEntries(Object.entries(outputs).map(([k, v]) => [k, { Value: v }])),
      }),
    }),
  );
  cfn.destroy();
  const resources = [
    { logicalId: restApiLogical, type: 'AWS::ApiGateway::RestApi', physicalId: api.id! },
    { logicalId: stageLogical, type: 'AWS::ApiGateway::Stage', physicalId: stageName },
    ...[...planIds].map(([logicalId, physicalId]) => ({ logicalId, type: 'AWS::ApiGateway::UsagePlan', physicalId })),
    ...[...keyIds].map(([logicalId, physicalId]) => ({ logicalId, type: 'AWS::ApiGateway::ApiKey', physicalId })),
  ];
  return { stackName, apiId: api.id!, stageName, planIds, keyIds, resources, outputs, tableEnv };
}

export interface GatewayInventory {
  readonly plans: UsagePlan[];
  /** API keys by id: name and value. */
  readonly keys: Map<string, { name: string; value: string }>;
  /** Usage plan id to the ids of its API keys. */
  readonly planKeys: Map<string, string[]>;
}

/** Everything moto's API Gateway holds, read with the SDK as an operator would (following `position`). */
export async function gatewayInventory(moto: Moto): Promise<GatewayInventory> {
  const gw = new APIGatewayClient(moto.config);
  const pages = async <T>(read: (position?: string) => Promise<{ items?: T[]; position?: string }>) => {
    const all: T[] = [];
    let position: string | undefined;
    do {
      const out = await read(position);
      all.push(...(out.items ?? []));
      position = out.position;
    } while (position);
    return all;
  };
  try {
    const plans = await pages((position) => gw.send(new GetUsagePlansCommand({ limit: 500, position })));
    const keys = await pages((position) =>
      gw.send(new GetApiKeysCommand({ limit: 500, includeValues: true, position })),
    );
    const planKeys = new Map<string, string[]>();
    for (const p of plans)
      planKeys.set(
        p.id!,
        (
          await pages((position) => gw.send(new GetUsagePlanKeysCommand({ usagePlanId: p.id!, limit: 500, position })))
        ).map((k) => k.id!),
      );
    return { plans, keys: new Map(keys.map((k) => [k.id!, { name: k.name!, value: k.value! }])), planKeys };
  } finally {
    gw.destroy();
  }
}
