/**
 * `npm run admin -- <command>`: API keys and plans. Human output by default, `--json` for scripts.
 * Targets: `--local` (the DynamoDB Local that `npm start` runs) or `--stage <name>` (a deployed stage in AWS).
 */
import { parseArgs } from 'node:util';
import { PLAN_NAMES } from '../../contract/plans.ts';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { STAGE_NAMES } from '../config/stage-names.ts';
import { COMMANDS, PartialFailure, SHAPES, int, type Options } from './commands.ts';
import { checkKeyId } from './rules.ts';
import { AdminError, keyAdmin } from './service.ts';
import type { DepsFactory } from './targets.ts';

export { realDeps, type DepsFactory } from './targets.ts';

const STAGE_CHOICE = STAGE_NAMES.join('|');

export const USAGE = `Usage: npm run admin -- <command> [options] (--local | --stage ${STAGE_CHOICE}) [--json]

Commands:
  keys create --owner <name> --plan <${PLAN_NAMES.join('|')}> [--per-minute N --per-day N]
  keys list [--plan P] [--owner O] [--status active|revoked] [--limit N] [--after NEXT]
                            at most N keys (default 100, at most 1,000) by plan, status and owner (matched exactly,
                            case-insensitively); --after continues from the \`More:\` line of the page before
  keys show <id>
  keys revoke <id>
  keys rotate <id>          new secret, same id and plan; the old secret keeps working until cached authorizer
                            results expire (up to 60 s in the cloud: the authorizer cache TTL), then gets 401
  keys set-plan <id> <plan> [--per-minute N] [--per-day N]
                            the gateway applies it once cached authorizer results expire (up to 60 s in the cloud);
                            an Enterprise key's limit not given is kept
  keys usage <id>           today's counts from the rate limiter, and a minute-by-minute chart of the day
  keys unban <id>           lifts a ban (the limiter's 15 minutes after a flood of 429s, or an admin's) and a spent
                            day (today's quota starts again); the gateway lets it through once cached authorizer
                            results expire (up to 60 s in the cloud)
  keys ban <id> [--minutes N]
                            refuses the key for N minutes (default 15, at most 1,440) until it ends or \`keys unban\`
  keys reconcile <id>       finishes a change a failure left pending: brings API Gateway and the limiter to the record
  keys reconcile --all [--after NEXT]
                            the same for every key with something pending (after an incident); resumable
  keys reindex              once after deploying the keys table's listing index: indexes the keys written before it
  keys purge                deletes the API keys of their own that keys made before pools left, once no cached
                            authorizer result names them (the authorizer cache TTL)

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
  status: { type: 'string' },
  limit: { type: 'string' },
  after: { type: 'string' },
  all: { type: 'boolean' },
  minutes: { type: 'string' },
} as const;

/** Options every command takes. */
const GLOBAL = new Set(['local', 'stage', 'json', 'help']);

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
    // Exit 1 like every other input error, with the option named the way --help names it.
    io.err(`error: ${parseFailure(err as Error & { code?: string })} (see --help)`);
    return 1;
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

/** parseArgs's own messages, said the way the rest of the tool says them. */
function parseFailure(err: Error & { code?: string }): string {
  const option = /'(--?[^' ]+)/.exec(err.message)?.[1];
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${option ?? ''}`.trim();
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return `${option ?? 'an option'} needs a value`;
  return err.message;
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
