/**
 * `npm run admin -- <command>`: API keys and plans. Human output by default, `--json` for scripts.
 * Targets: `--local` (the DynamoDB Local that `npm start` runs) or `--stage staging|production` (AWS).
 */
import { parseArgs } from 'node:util';
import { PLAN_NAMES, type PlanName } from '../../contract/plans.ts';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { AdminError, keyAdmin, type AdminDeps, type KeyView } from './service.ts';
import { noGateway } from './gateway.ts';
import { chartWidth, renderUsageChart } from './usage-chart.ts';

export const USAGE = `Usage: npm run admin -- <command> [options] (--local | --stage staging|production) [--json]

Commands:
  keys create --owner <name> --plan <free|pro|business|enterprise> [--per-minute N --per-day N]
  keys list [--plan P] [--owner O]
  keys show <id>
  keys revoke <id>
  keys rotate <id>          new secret, same id and plan; the old secret stops working at once
  keys set-plan <id> <plan> [--per-minute N --per-day N]
  keys usage <id>           today's counts from the rate limiter, and a minute-by-minute chart of the day
  keys purge                deletes the API Gateway keys of keys revoked longer ago than the authorizer cache TTL

Targets:
  --local                   DynamoDB Local of \`npm start\` (ANIMAL_STORE_DYNAMODB_ENDPOINT, else port
                            ANIMAL_STORE_DYNAMODB_PORT, default 8000)
  --stage <name>            the AnimalStore-<name> stack in AWS: credentials and region from the environment or
                            profile (AWS_REGION, else the profile's region), resolved once for every AWS client`;

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

/** Builds the dependencies for a target; tests pass their own. */
export type DepsFactory = (target: { local: boolean; stage?: string }) => Promise<AdminDeps>;

function int(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) throw new AdminError(`${name} must be a whole number`);
  return Number(v);
}

function plan(v: string | undefined): PlanName {
  const p = (v ?? '').toLowerCase();
  if (!(PLAN_NAMES as readonly string[]).includes(p))
    throw new AdminError(`unknown plan "${v ?? ''}" (use ${PLAN_NAMES.join(', ')})`);
  return p as PlanName;
}

function describe(k: KeyView): string {
  const limits = k.limits ? `${k.limits.perMinute}/min, ${k.limits.perDay}/day` : 'no limits set';
  return `${k.keyId}  ${k.status.padEnd(7)}  ${k.plan.padEnd(10)}  ${limits.padEnd(22)}  owner=${k.owner}  created=${k.createdAt}${k.rotatedAt ? `  rotated=${k.rotatedAt}` : ''}`;
}

export async function runAdmin(argv: string[], io: Io, depsFor: DepsFactory): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        local: { type: 'boolean' },
        stage: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        owner: { type: 'string' },
        plan: { type: 'string' },
        'per-minute': { type: 'string' },
        'per-day': { type: 'string' },
      },
    });
  } catch (err) {
    io.err(`error: ${(err as Error).message}`);
    return 2;
  }
  const {
    values: o,
    positionals: [group, command, ...rest],
  } = parsed;
  if (o.help || !group) {
    io.out(USAGE);
    return o.help ? 0 : 2;
  }
  const print = (human: string, data: unknown) => io.out(o.json ? JSON.stringify(data, null, 2) : human);
  try {
    if (group !== 'keys' || !command)
      throw new AdminError(`unknown command "${[group, command].filter(Boolean).join(' ')}" (see --help)`);
    if (!o.local === !o.stage) throw new AdminError('choose one target: --local or --stage staging|production');
    if (o.stage && !['staging', 'production'].includes(o.stage))
      throw new AdminError(`unknown stage "${o.stage}" (use staging or production)`);
    const id = () => {
      if (!rest[0]) throw new AdminError(`keys ${command} needs a key id`);
      return rest[0];
    };
    const perMinute = int('--per-minute', o['per-minute']);
    const perDay = int('--per-day', o['per-day']);
    const known = ['create', 'list', 'show', 'revoke', 'rotate', 'set-plan', 'usage', 'purge'];
    if (!known.includes(command)) throw new AdminError(`unknown command "keys ${command}" (see --help)`);
    if (command === 'create' && !o.owner?.trim()) throw new AdminError('--owner is required');
    if (command === 'create') plan(o.plan);
    if (command === 'set-plan') plan(rest[1]);
    const admin = keyAdmin(await depsFor({ local: !!o.local, stage: o.stage }));
    switch (command) {
      case 'create': {
        const { key, record } = await admin.create({ owner: o.owner!, plan: plan(o.plan), perMinute, perDay });
        print(`Created ${describe(record)}\nAPI key (shown once, store it now): ${key}`, { key, ...record });
        break;
      }
      case 'list': {
        const keys = await admin.list({ plan: o.plan, owner: o.owner });
        print(keys.length ? keys.map(describe).join('\n') : 'No keys.', keys);
        break;
      }
      case 'show': {
        const k = await admin.show(id());
        print(describe(k), k);
        break;
      }
      case 'revoke': {
        const k = await admin.revoke(id());
        print(
          `Revoked ${k.keyId} (requests with it get 401 once cached authorizer results expire; \`keys purge\` later deletes its API Gateway key)`,
          k,
        );
        break;
      }
      case 'rotate': {
        const { key, record } = await admin.rotate(id());
        print(`Rotated ${record.keyId}: the old secret no longer works.\nNew API key (shown once): ${key}`, {
          key,
          ...record,
        });
        break;
      }
      case 'set-plan': {
        const k = await admin.setPlan(id(), { plan: plan(rest[1]), perMinute, perDay });
        print(`Moved ${describe(k)}`, k);
        break;
      }
      case 'purge': {
        const purged = await admin.purge();
        print(
          purged.length
            ? purged.map((k) => `Purged the API Gateway key of ${k.keyId}`).join('\n')
            : 'Nothing to purge.',
          purged,
        );
        break;
      }
      case 'usage': {
        const u = await admin.usage(id());
        const lim = u.limits;
        print(
          `${u.keyId} (${u.plan}): this minute ${u.minute.count}${lim ? `/${lim.perMinute}` : ''}, today ${u.day.count}${lim ? `/${lim.perDay}` : ''}` +
            (u.bannedUntil ? `, banned until ${u.bannedUntil}` : '') +
            (u.history
              ? `\n${renderUsageChart(u.history, { ...u.history, width: chartWidth(), perMinute: lim?.perMinute }).join('\n')}`
              : ''),
          u,
        );
        break;
      }
    }
    return 0;
  } catch (err) {
    const message =
      err instanceof AdminError
        ? err.message
        : err instanceof UnavailableError
          ? `DynamoDB did not answer (${String(err.cause)}). With --local: is \`npm start\` running, and do ` +
            'ANIMAL_STORE_DYNAMODB_PORT / ANIMAL_STORE_DYNAMODB_ENDPOINT name its DynamoDB?'
          : `${(err as Error).name ?? 'Error'}: ${(err as Error).message}`;
    io.err(`error: ${message}`);
    return 1;
  }
}

/** Dependencies for the real targets: DynamoDB Local, or a deployed stage found through its stack outputs. */
export const realDeps: DepsFactory = async ({ local, stage }) => {
  let tableEnv: Record<string, string>;
  let gatewayDeps: Pick<AdminDeps, 'gateway' | 'usagePlans' | 'revokedKeyGraceMs'> = {
    gateway: noGateway,
    usagePlans: {},
  };
  if (local) {
    const { localTableEnv } = await import('../../lambdas/storage/provision.ts');
    tableEnv = {
      ...localTableEnv(process.env.ANIMAL_STORE_TABLE_PREFIX ?? 'animal-store-local'),
      DYNAMODB_ENDPOINT:
        process.env.ANIMAL_STORE_DYNAMODB_ENDPOINT ||
        `http://127.0.0.1:${process.env.ANIMAL_STORE_DYNAMODB_PORT ?? 8000}`,
    };
  } else {
    const { CloudFormationClient, DescribeStacksCommand } = await import('@aws-sdk/client-cloudformation');
    const { APIGatewayClient } = await import('@aws-sdk/client-api-gateway');
    const { awsKeyGateway } = await import('./gateway.ts');
    const { STAGES } = await import('../config/stages.ts');
    const stackName = `AnimalStore-${stage}`;
    // One region for every client, resolved once the way the SDK does (AWS_REGION, else the profile's region): the
    // stack, its API keys and its tables are in the same region.
    const region = await new CloudFormationClient({}).config.region().catch(() => undefined);
    if (!region)
      throw new AdminError(
        'no AWS region: set AWS_REGION or a region in your AWS profile (the region the stack is deployed in)',
      );
    const out = await new CloudFormationClient({ region }).send(new DescribeStacksCommand({ StackName: stackName }));
    const outputs = Object.fromEntries((out.Stacks?.[0]?.Outputs ?? []).map((x) => [x.OutputKey, x.OutputValue ?? '']));
    const need = (k: string) => {
      if (!outputs[k])
        throw new AdminError(`stack ${stackName} has no output ${k}: deploy it first (see docs/deployment.md)`);
      return outputs[k]!;
    };
    // The storage modules build their DynamoDB client from AWS_REGION: the same region.
    tableEnv = {
      PETS_TABLE_NAME: need('PetsTableName'),
      KEYS_TABLE_NAME: need('KeysTableName'),
      STATE_TABLE_NAME: need('StateTableName'),
      AWS_REGION: region,
    };
    gatewayDeps = {
      gateway: awsKeyGateway(new APIGatewayClient({ region }), { apiId: need('ApiId'), stage: 'v1' }),
      usagePlans: { free: need('UsagePlanIdFree'), pro: need('UsagePlanIdPro'), business: need('UsagePlanIdBusiness') },
      // Twice the stage's authorizer cache TTL: no cached authorizer result still names a key purge deletes.
      revokedKeyGraceMs: 2 * STAGES[stage as keyof typeof STAGES].authorizerCacheTtl.toMilliseconds(),
    };
  }
  return { ...(await storesFor(tableEnv)), stage: stage ?? 'local', ...gatewayDeps };
};

/** The storage adapters the functions use, on the target's tables, with a runtime of the admin tool's own. */
async function storesFor(
  tableEnv: Record<string, string>,
): Promise<Pick<AdminDeps, 'store' | 'limits' | 'history' | 'storage'>> {
  const { loadConfig } = await import('../../lambdas/shared/config.ts');
  const { createRuntime } = await import('../../lambdas/shared/runtime.ts');
  const { createKeyAdminStore } = await import('../../lambdas/storage/key-store.ts');
  const { createLimitStore } = await import('../../lambdas/storage/limit-store.ts');
  const { readUsageHistory } = await import('../../lambdas/storage/usage-history.ts');
  const { storage, telemetry } = createRuntime(loadConfig({ METRICS: 'off', LOG_LEVEL: 'WARN', ...tableEnv }));
  return {
    store: createKeyAdminStore(storage),
    limits: createLimitStore(storage, telemetry),
    history: (subject, w) => readUsageHistory(storage, subject, w),
    storage,
  };
}
