/**
 * `npm run admin -- <command>`: API keys and plans. Human output by default, `--json` for scripts.
 * Targets: `--local` (the DynamoDB Local that `npm start` runs) or `--stage <name>` (a deployed stage in AWS).
 */
import { parseArgs } from 'node:util';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { STAGE_NAMES } from '../config/stage-names.ts';
import { COMMANDS, PartialFailure, SHAPES, int, type Options, type Printed } from './commands.ts';
import { commandUsage, usage } from './help.ts';
import { ControlPlaneWaitExceeded, describeWait, type PacingOptions } from './pacing.ts';
import { checkKeyId, echoed, redacted } from './rules.ts';
import { REMOVE_RELEASE_API_KEYS } from './release-api-keys.ts';
import { AdminError, keyAdmin } from './service.ts';
import type { DepsFactory } from './targets.ts';

export { realDeps, type DepsFactory } from './targets.ts';

const STAGE_CHOICE = STAGE_NAMES.join('|');

/** The whole help (help.ts); `keys <command> --help` prints that command's. */
export const USAGE = usage();

export interface Io {
  out(line: string): void;
  err(line: string): void;
  /**
   * Asks the person at the terminal and returns the answer; absent when there is none (stdin not a tty: a script,
   * CI), and then a command that needs confirmation is refused unless `--yes` is given.
   */
  ask?(question: string): Promise<string>;
}

/**
 * Commands that take a production customer's access away at once, or delete at the gateway, and ask before they do
 * (or take `--yes`): a wrong id is an outage for someone else. restore and `rotate --overlap` are how the first two
 * are undone, and the prompt says so.
 */
const CONFIRMED_STAGES = new Set(['production']);
const CONFIRMED = new Set(['revoke', 'rotate', 'remove-release-api-keys']);

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
  'max-wait': { type: 'string' },
  minutes: { type: 'string' },
  actor: { type: 'string' },
  yes: { type: 'boolean' },
  overlap: { type: 'string' },
  show: { type: 'boolean' },
} as const;

/** Options every command takes. */
const GLOBAL = new Set(['local', 'stage', 'json', 'help', 'actor']);

/** The longest --max-wait: a day (a command's waits are counted in seconds to minutes). */
const MAX_WAIT_LIMIT_S = 86_400;

export async function runAdmin(argv: string[], io: Io, depsFor: DepsFactory): Promise<number> {
  // --json is read before parsing, so that even a command line that does not parse fails in JSON.
  const say = reporter(io, argv.includes('--json'), argv);
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
    return say.failure(new AdminError(`${parseFailure(err as Error & { code?: string })} (see --help)`), 1, true);
  }
  const { values: o, positionals, given } = parsed;
  if (o.help || !positionals[0]) {
    const [group, command] = positionals;
    io.out(group === 'keys' && command && Object.hasOwn(SHAPES, command) ? commandUsage(command) : USAGE);
    return o.help ? 0 : 2;
  }
  let command: ReturnType<typeof checked>;
  try {
    command = checked(o, positionals, given, io);
  } catch (err) {
    return say.failure(err, 1, true, positionals);
  }
  try {
    const { target, call, answered } = command;
    if (!(await confirmed(o, positionals, io)))
      return say.failure(new AdminError('not confirmed: nothing changed'), 1, false);
    const { human, data } = await call(keyAdmin(await depsFor(target), o.actor ? { actor: o.actor } : {}));
    if (!answered()) io.out(o.json ? JSON.stringify(data, null, 2) : human);
    return 0;
  } catch (err) {
    if (err instanceof PartialFailure) io.out(o.json ? JSON.stringify(err.output.data, null, 2) : err.output.human);
    return say.failure(err, (err as { exitCode?: number }).exitCode ?? 1, false);
  }
}

/**
 * A revoke or rotate on production goes ahead with `--yes`, or when the person at the terminal types the key id back
 * (a wrong id is noticed when it has to be typed); the removal of what 3357b0c made, when the stage name is. With
 * neither (a script without --yes), it is refused.
 */
async function confirmed(o: Options, [, command, id]: readonly string[], io: Io): Promise<boolean> {
  if (o.yes || !o.stage || !CONFIRMED_STAGES.has(o.stage) || !command || !CONFIRMED.has(command)) return true;
  if (!io.ask)
    throw new AdminError(
      `keys ${command} on ${o.stage} asks for confirmation and there is no terminal to ask: add --yes to go ahead`,
    );
  if (`keys ${command}` === REMOVE_RELEASE_API_KEYS) {
    const answer = await io.ask(
      `Delete the API keys and usage plans release 3357b0c made on ${o.stage}? Type the stage name to ` + 'confirm: ',
    );
    return answer.trim() === o.stage;
  }
  const answer = await io.ask(
    `${command === 'revoke' ? 'Revoke' : 'Rotate'} ${id} on ${o.stage}? Its current secret ` +
      `${command === 'revoke' ? 'gets 401 (`keys restore` undoes it)' : 'stops working unless --overlap is given'}. ` +
      'Type the key id to confirm: ',
  );
  return answer.trim() === id;
}

/** `--actor <name>`: one line of visible text, at most 128 characters (it is printed in `keys history`). */
function checkActor(v: string): string {
  const name = v.trim();
  if (!name || /[\p{Cc}\p{Cf}\u2028\u2029]/u.test(name) || [...name].length > 128)
    throw new AdminError('--actor must be one line of visible text, at most 128 characters');
  return name;
}

/** `--max-wait <seconds>`: a whole number of seconds, at most a day. */
function maxWait(v: string): number {
  const s = int('--max-wait', v)!;
  if (s < 0 || s > MAX_WAIT_LIMIT_S)
    throw new AdminError(`--max-wait must be whole seconds from 0 to ${MAX_WAIT_LIMIT_S}`);
  return s;
}

/**
 * How a failure is said: one `error:` line on stderr, or with --json one JSON object there ({ error, next }), with
 * the one command that finishes or corrects what was asked (null when there is none to give).
 */
function reporter(io: Io, json: boolean, argv: readonly string[]) {
  const target = argv.includes('--local')
    ? '--local'
    : argv.includes('--stage')
      ? `--stage ${argv[argv.indexOf('--stage') + 1] ?? '<stage>'}`
      : '--stage <stage>';
  const admin = (command: string) => `npm run admin -- ${command} ${target}`;
  return {
    /** `input`: the command line was refused before anything was connected. */
    failure(err: unknown, code: number, input: boolean, positionals: readonly string[] = []): number {
      // Whatever a message quotes of the command line, a secret pasted into it is not printed again (stderr is
      // often kept: a terminal's scrollback, a CI log).
      const message = redacted(failure(err, target));
      let next: string | null = null;
      const named = /`(keys [^`]+)`/.exec(message)?.[1];
      if (named) next = admin(named);
      // A wait cut short, or a DynamoDB that did not answer: the same command again finishes it (each is idempotent).
      else if (err instanceof ControlPlaneWaitExceeded || err instanceof UnavailableError)
        next = `npm run admin -- ${argv.map(shellWord).join(' ')}`;
      else if (input) {
        const [group, command] = positionals;
        next =
          group === 'keys' && command && Object.hasOwn(SHAPES, command)
            ? `npm run admin -- keys ${command} --help`
            : 'npm run admin -- --help';
      }
      const human =
        err instanceof ControlPlaneWaitExceeded
          ? `${message}; to finish, run the same command again: ${next}`
          : message;
      io.err(json ? JSON.stringify({ error: message, next }) : `error: ${human}`);
      return code;
    },
  };
}

/** The target and the command's call, once every argument is checked (before anything is connected). */
function checked(o: Options, [group, command, ...rest]: string[], given: readonly string[], io: Io) {
  if (group !== 'keys' || !command)
    throw new AdminError(`unknown command "${[group, command].filter(Boolean).join(' ')}" (see --help)`);
  if (!o.local === !o.stage) throw new AdminError(`choose one target: --local or --stage ${STAGE_CHOICE}`);
  if (o.stage && !(STAGE_NAMES as readonly string[]).includes(o.stage))
    throw new AdminError(`unknown stage "${o.stage}" (use ${STAGE_NAMES.join(' or ')})`);
  if (o.actor !== undefined) o.actor = checkActor(o.actor);
  const perMinute = int('--per-minute', o['per-minute']);
  const perDay = int('--per-day', o['per-day']);
  if (!Object.hasOwn(COMMANDS, command)) throw new AdminError(`unknown command "keys ${command}" (see --help)`);
  const shape = SHAPES[command]!;
  const stray = given.find((name) => !GLOBAL.has(name) && !shape.options.includes(name));
  if (stray) throw new AdminError(`keys ${command} takes no --${stray}`);
  if (rest.length > shape.positionals)
    throw new AdminError(`keys ${command}: unexpected argument "${echoed(rest[shape.positionals]!)}"`);
  const id = () => {
    if (!rest[0]) throw new AdminError(`keys ${command} needs a key id`);
    return checkKeyId(rest[0]);
  };
  const progress = (human: string, data: unknown) => io.err(o.json ? JSON.stringify(data) : human);
  // A command may print its answer before it ends (create: its secret, before the write that makes it work).
  let answered = false;
  const answer = ({ human, data }: Printed) => {
    answered = true;
    io.out(o.json ? JSON.stringify(data, null, 2) : human);
  };
  const call = COMMANDS[command]!({ o, rest, perMinute, perDay, id, progress, answer });
  const pacing: PacingOptions = {
    progress: (w) => io.err(o.json ? JSON.stringify({ waiting: w }) : describeWait(w)),
    ...(o['max-wait'] !== undefined ? { maxWaitMs: maxWait(o['max-wait']) * 1000 } : {}),
  };
  return { target: { local: !!o.local, stage: o.stage, pacing }, call, answered: () => answered };
}

/** An argument as a shell reads it back (the next command is printed to be pasted). */
const shellWord = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`);

/** parseArgs's own messages, said the way the rest of the tool says them. */
function parseFailure(err: Error & { code?: string }): string {
  const option = /'(--?[^' ]+)/.exec(err.message)?.[1];
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${option ?? ''}`.trim();
  if (err.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return `${option ?? 'an option'} needs a value`;
  return err.message;
}

/**
 * One line for the admin: our own errors as they are, an unreachable DynamoDB with where to look for the target the
 * command named (a local `npm start`, or the stage's AWS credentials and region: `npm start` has nothing to do with it).
 */
function failure(err: unknown, target: string): string {
  if (err instanceof AdminError || err instanceof PartialFailure) return err.message;
  if (err instanceof UnavailableError)
    return target === '--local'
      ? `DynamoDB did not answer (${String(err.cause)}). With --local: is \`npm start\` running, and do ` +
          'ANIMAL_STORE_DYNAMODB_PORT / ANIMAL_STORE_DYNAMODB_ENDPOINT name its DynamoDB?'
      : `DynamoDB did not answer (${String(err.cause)}) on ${target.replace('--stage ', 'stage ')}: check the ` +
          'network and your AWS credentials and region (AWS_PROFILE, AWS_REGION), then run the same command again';
  return `${(err as Error).name ?? 'Error'}: ${(err as Error).message}`;
}
