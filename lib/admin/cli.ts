/**
 * `npm run admin -- <command>`: API keys and plans. Human output by default, `--json` for scripts.
 * Targets: `--local` (the DynamoDB Local that `npm start` runs) or `--stage <name>` (a deployed stage in AWS).
 */
import { parseArgs } from 'node:util';
import { PLAN_NAMES, type PlanName } from '../../contract/plans.ts';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { STAGE_NAMES } from '../config/stage-names.ts';
import { checkKeyId, checkOwner } from './rules.ts';
import { AdminError, keyAdmin, type KeyAdmin, type KeyView } from './service.ts';
import type { DepsFactory } from './targets.ts';
import { chartWidth, renderUsageChart } from './usage-chart.ts';

export { realDeps, type DepsFactory } from './targets.ts';

const STAGE_CHOICE = STAGE_NAMES.join('|');

export const USAGE = `Usage: npm run admin -- <command> [options] (--local | --stage ${STAGE_CHOICE}) [--json]

Commands:
  keys create --owner <name> --plan <${PLAN_NAMES.join('|')}> [--per-minute N --per-day N]
  keys list [--plan P] [--owner O]
  keys show <id>
  keys revoke <id>
  keys rotate <id>          new secret, same id and plan; the old secret keeps working until cached authorizer
                            results expire (up to 60 s in the cloud: the authorizer cache TTL), then gets 401
  keys set-plan <id> <plan> [--per-minute N --per-day N]
  keys usage <id>           today's counts from the rate limiter, and a minute-by-minute chart of the day
  keys unban <id>           lifts a ban (a key whose flood of 429s banned it for 15 minutes) before it ends; the
                            gateway lets it through once cached authorizer results expire (up to 60 s in the cloud)
  keys purge                deletes the API Gateway keys of keys revoked longer ago than the authorizer cache TTL

Targets:
  --local                   DynamoDB Local of \`npm start\` (ANIMAL_STORE_DYNAMODB_ENDPOINT, else port
                            ANIMAL_STORE_DYNAMODB_PORT, default 8000)
  --stage <name>            the stage's stack in AWS (its stackName in lib/config/stages.ts): credentials and region
                            from the environment or profile (AWS_REGION, else the profile's region), resolved once for
                            every AWS client`;

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

const OPTIONS = {
  local: { type: 'boolean' },
  stage: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  owner: { type: 'string' },
  plan: { type: 'string' },
  'per-minute': { type: 'string' },
  'per-day': { type: 'string' },
} as const;

interface Options {
  local?: boolean;
  stage?: string;
  json?: boolean;
  help?: boolean;
  owner?: string;
  plan?: string;
  'per-minute'?: string;
  'per-day'?: string;
}

/** A command's arguments, checked before any dependency is built. */
interface CommandArgs {
  readonly o: Options;
  /** The positionals after `keys <command>`. */
  readonly rest: readonly string[];
  readonly perMinute?: number;
  readonly perDay?: number;
  /** The key id argument; throws when it is missing. */
  id(): string;
}

/** What a command prints: lines for people, or the data with --json. */
interface Printed {
  readonly human: string;
  readonly data: unknown;
}

/** Checks a command's arguments and binds them into the call to make once the target is connected. */
type Command = (args: CommandArgs) => (admin: KeyAdmin) => Promise<Printed>;

/** Options every command takes. */
const GLOBAL = new Set(['local', 'stage', 'json', 'help']);
/** The options and positionals each command takes: anything else is refused, never ignored. */
const SHAPES: Readonly<Record<string, { readonly options: readonly string[]; readonly positionals: number }>> = {
  create: { options: ['owner', 'plan', 'per-minute', 'per-day'], positionals: 0 },
  list: { options: ['plan', 'owner'], positionals: 0 },
  show: { options: [], positionals: 1 },
  revoke: { options: [], positionals: 1 },
  rotate: { options: [], positionals: 1 },
  'set-plan': { options: ['per-minute', 'per-day'], positionals: 2 },
  usage: { options: [], positionals: 1 },
  unban: { options: [], positionals: 1 },
  purge: { options: [], positionals: 0 },
};

const printed = (human: string, data: unknown): Printed => ({ human, data });

/** A command that did part of its work: what it did is printed, the failure is the `error:` line, exit code 1. */
class PartialFailure extends Error {
  readonly output: Printed;
  constructor(message: string, output: Printed) {
    super(message);
    this.output = output;
  }
}

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

function describeUsage(u: Awaited<ReturnType<KeyAdmin['usage']>>): string {
  const lim = u.limits;
  return (
    `${u.keyId} (${u.plan}): this minute ${u.minute.count}${lim ? `/${lim.perMinute}` : ''}, today ${u.day.count}${lim ? `/${lim.perDay}` : ''}` +
    (u.bannedUntil ? `, banned until ${u.bannedUntil}` : '') +
    (u.history
      ? `\n${renderUsageChart(u.history, { ...u.history, width: chartWidth(), perMinute: lim?.perMinute }).join('\n')}`
      : '')
  );
}

/** A command on one key: its id is checked up front. */
const onKey =
  (run: (admin: KeyAdmin, id: string) => Promise<Printed>): Command =>
  (args) => {
    const id = args.id();
    return (admin) => run(admin, id);
  };

const COMMANDS: Readonly<Record<string, Command>> = {
  create: ({ o, perMinute, perDay }) => {
    checkOwner(o.owner);
    const chosen = plan(o.plan);
    return async (admin) => {
      const { key, record } = await admin.create({ owner: o.owner!, plan: chosen, perMinute, perDay });
      return printed(`Created ${describe(record)}\nAPI key (shown once, store it now): ${key}`, { key, ...record });
    };
  },
  list: ({ o }) => {
    const filter = {
      ...(o.plan !== undefined ? { plan: plan(o.plan) } : {}),
      ...(o.owner !== undefined ? { owner: checkOwner(o.owner) } : {}),
    };
    return async (admin) => {
      const keys = await admin.list(filter);
      return printed(keys.length ? keys.map(describe).join('\n') : 'No keys.', keys);
    };
  },
  show: onKey(async (admin, id) => {
    const k = await admin.show(id);
    return printed(describe(k), k);
  }),
  revoke: onKey(async (admin, id) => {
    const k = await admin.revoke(id);
    return printed(
      `Revoked ${k.keyId} (requests with it get 401 once cached authorizer results expire; \`keys purge\` later deletes its API Gateway key)`,
      k,
    );
  }),
  rotate: onKey(async (admin, id) => {
    const { key, record } = await admin.rotate(id);
    const human =
      `Rotated ${record.keyId}: the old secret is refused once cached authorizer results expire (up to the ` +
      `authorizer cache TTL, 60 s in the cloud; at once locally with ANIMAL_STORE_AUTH_CACHE_TTL=0).\nNew API key (shown once): ${key}`;
    return printed(human, { key, ...record });
  }),
  'set-plan': ({ rest, perMinute, perDay, id }) => {
    const chosen = plan(rest[1]);
    const keyId = id();
    return async (admin) => {
      const { changed, ...record } = await admin.setPlan(keyId, { plan: chosen, perMinute, perDay });
      if (!changed)
        return printed(`No change: ${record.keyId} is already on ${record.plan} with these limits (nothing written)`, {
          ...record,
          changed,
        });
      return printed(
        `Moved ${describe(record)}\nThe gateway applies it once cached authorizer results expire (up to the authorizer ` +
          'cache TTL, 60 s in the cloud).',
        { ...record, changed },
      );
    };
  },
  usage: onKey(async (admin, id) => {
    const u = await admin.usage(id);
    return printed(describeUsage(u), u);
  }),
  unban: onKey(async (admin, id) => {
    const k = await admin.unban(id);
    return printed(
      k.wasBannedUntil
        ? `Unbanned ${k.keyId} (was banned until ${k.wasBannedUntil}): requests get through once cached authorizer ` +
            'results expire (up to the authorizer cache TTL, 60 s in the cloud)'
        : `${k.keyId} is not banned: nothing changed`,
      k,
    );
  }),
  purge: () => async (admin) => {
    const { purged, failed } = await admin.purge();
    const lines = [
      ...purged.map((k) => `Purged what API Gateway held for ${k.keyId}`),
      ...failed.map((f) => `Failed ${f.keyId}: ${f.error}`),
    ];
    if (failed.length)
      throw new PartialFailure(
        `${failed.length} of ${purged.length + failed.length} keys not purged: run \`keys purge\` again`,
        printed(lines.join('\n'), { purged, failed }),
      );
    return printed(lines.join('\n') || 'Nothing to purge.', { purged, failed });
  },
};

export async function runAdmin(argv: string[], io: Io, depsFor: DepsFactory): Promise<number> {
  let parsed: { values: Options; positionals: string[]; given: string[] };
  try {
    const { values, positionals, tokens } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: OPTIONS,
      tokens: true,
    });
    const given = tokens.flatMap((t) => (t.kind === 'option' ? [t.name] : []));
    // parseArgs keeps the last of a repeated option: a command that says two things gets neither.
    const repeated = given.find((name, i) => given.indexOf(name) !== i);
    if (repeated) throw new Error(`--${repeated} is given more than once`);
    parsed = { values, positionals, given };
  } catch (err) {
    io.err(`error: ${(err as Error).message}`);
    return 2;
  }
  const { values: o, positionals, given } = parsed;
  if (o.help || !positionals[0]) {
    io.out(USAGE);
    return o.help ? 0 : 2;
  }
  try {
    const { target, call } = checked(o, positionals, given);
    const { human, data } = await call(keyAdmin(await depsFor(target)));
    io.out(o.json ? JSON.stringify(data, null, 2) : human);
    return 0;
  } catch (err) {
    if (err instanceof PartialFailure) io.out(o.json ? JSON.stringify(err.output.data, null, 2) : err.output.human);
    io.err(`error: ${failure(err)}`);
    return 1;
  }
}

/** The target and the command's call, once every argument is checked (before anything is connected). */
function checked(o: Options, [group, command, ...rest]: string[], given: readonly string[]) {
  if (group !== 'keys' || !command)
    throw new AdminError(`unknown command "${[group, command].filter(Boolean).join(' ')}" (see --help)`);
  if (!o.local === !o.stage) throw new AdminError(`choose one target: --local or --stage ${STAGE_CHOICE}`);
  if (o.stage && !(STAGE_NAMES as readonly string[]).includes(o.stage))
    throw new AdminError(`unknown stage "${o.stage}" (use ${STAGE_NAMES.join(' or ')})`);
  const perMinute = int('--per-minute', o['per-minute']);
  const perDay = int('--per-day', o['per-day']);
  if (!Object.hasOwn(COMMANDS, command)) throw new AdminError(`unknown command "keys ${command}" (see --help)`);
  const shape = SHAPES[command]!;
  const stray = given.find((name) => !GLOBAL.has(name) && !shape.options.includes(name));
  if (stray) throw new AdminError(`keys ${command} takes no --${stray}`);
  if (rest.length > shape.positionals)
    throw new AdminError(`keys ${command}: unexpected argument "${rest[shape.positionals]!.slice(0, 64)}"`);
  const id = () => {
    if (!rest[0]) throw new AdminError(`keys ${command} needs a key id`);
    return checkKeyId(rest[0]);
  };
  const call = COMMANDS[command]!({ o, rest, perMinute, perDay, id });
  return { target: { local: !!o.local, stage: o.stage }, call };
}

/** One line for the admin: our own errors as they are, an unreachable DynamoDB with where to look. */
function failure(err: unknown): string {
  if (err instanceof AdminError || err instanceof PartialFailure) return err.message;
  if (err instanceof UnavailableError)
    return (
      `DynamoDB did not answer (${String(err.cause)}). With --local: is \`npm start\` running, and do ` +
      'ANIMAL_STORE_DYNAMODB_PORT / ANIMAL_STORE_DYNAMODB_ENDPOINT name its DynamoDB?'
    );
  return `${(err as Error).name ?? 'Error'}: ${(err as Error).message}`;
}
