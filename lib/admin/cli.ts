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
import { checkKeyId, checkOwner, echoed, holdsSecret, redacted } from './rules.ts';
import { REMOVE_RELEASE_API_KEYS } from './release-api-keys.ts';
import { ownerActiveKeys } from './owner-revoke.ts';
import { AdminError, keyAdmin, type AdminDeps } from './service.ts';
import { ADMIN_DYNAMODB, DYNAMODB_LIMITS, type DepsFactory, type DynamoDbPatience } from './targets.ts';

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
  expires: { type: 'string' },
  scope: { type: 'string' },
  expiring: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  day: { type: 'string' },
  timeout: { type: 'string' },
  attempts: { type: 'string' },
  another: { type: 'boolean' },
  'end-overlaps': { type: 'boolean' },
} as const;

/** Options every command takes. */
const GLOBAL = new Set(['local', 'stage', 'json', 'help', 'actor', 'timeout', 'attempts']);

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
  say.state.patience = command.target.dynamodb;
  try {
    const { target, call, answered } = command;
    const deps = await depsFor(target);
    if (!(await confirmed(o, positionals, io, deps)))
      return say.failure(new AdminError('not confirmed: nothing changed'), 1, false);
    const { human, data } = await call(keyAdmin(deps, o.actor ? { actor: o.actor } : {}));
    if (!answered()) io.out(o.json ? JSON.stringify(data, null, 2) : human);
    return 0;
  } catch (err) {
    if (err instanceof PartialFailure) io.out(o.json ? JSON.stringify(err.output.data, null, 2) : err.output.human);
    return say.failure(err, (err as { exitCode?: number }).exitCode ?? 1, false);
  }
}

/** How many of an owner's active keys a confirmation names by id; the rest are counted. */
const NAMED_IN_PROMPT = 5;

/**
 * A revoke or rotate on production goes ahead with `--yes`, or when the person at the terminal types the key id back
 * (the owner, for `revoke --owner`), after being shown whose key it is (its owner and plan: a wrong id is noticed when
 * it has to be typed, and a right id of the wrong customer when the customer is named); the removal of what 3357b0c
 * made, when the stage name is. With neither (a script without --yes), it is refused. A key that does not exist, or
 * a revoke that would change nothing, asks nothing: the command itself says so.
 */
async function confirmed(o: Options, [, command, id]: readonly string[], io: Io, deps: AdminDeps): Promise<boolean> {
  if (o.yes || !o.stage || !CONFIRMED_STAGES.has(o.stage) || !command || !CONFIRMED.has(command)) return true;
  const ask = (question: string) => {
    if (!io.ask)
      throw new AdminError(
        `keys ${command} on ${o.stage} asks for confirmation and there is no terminal to ask: add --yes to go ahead`,
      );
    return io.ask(question);
  };
  if (`keys ${command}` === REMOVE_RELEASE_API_KEYS) {
    const answer = await ask(
      `Delete the API keys and usage plans release 3357b0c made on ${o.stage}? Type the stage name to ` + 'confirm: ',
    );
    return answer.trim() === o.stage;
  }
  if (command === 'revoke' && !id && o.owner !== undefined) {
    const owner = checkOwner(o.owner);
    const active = (await ownerActiveKeys(deps.store, owner)).map((r) => r.keyId);
    if (!active.length) return true;
    const named = active.slice(0, NAMED_IN_PROMPT).join(', ');
    const more = active.length > NAMED_IN_PROMPT ? ` and ${active.length - NAMED_IN_PROMPT} more` : '';
    const answer = await ask(
      `Revoke every active key of owner ${owner} on ${o.stage}: ${active.length} key(s) (${named}${more})? Their ` +
        'secrets get 401 (`keys restore <id>` undoes each). Type the owner to confirm: ',
    );
    return answer.trim() === owner;
  }
  if (!id) return true;
  const record = await deps.store.getById(id);
  if (!record || (command === 'revoke' && record.status === 'revoked')) return true;
  const whose = `${id} (owner ${record.owner}, plan ${record.plan}${record.status === 'active' ? '' : `, ${record.status}`})`;
  const answer = await ask(
    `${command === 'revoke' ? 'Revoke' : 'Rotate'} ${whose} on ${o.stage}? Its current secret ` +
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
 * the one command that finishes or corrects what was asked (null when there is none to give): nextStep's.
 */
function reporter(io: Io, json: boolean, argv: readonly string[]) {
  const target = targetOf(argv);
  const state = { patience: ADMIN_DYNAMODB };
  return {
    /** What the command line asked of DynamoDB, once it is known (a timeout names it). */
    state,
    /** `input`: the command line was refused before anything was connected. */
    failure(err: unknown, code: number, input: boolean, positionals: readonly string[] = []): number {
      // Whatever a message quotes of the command line, a secret pasted into it is not printed again (stderr is
      // often kept: a terminal's scrollback, a CI log).
      const message = redacted(failure(err, target, state.patience));
      const rerun =
        err instanceof ControlPlaneWaitExceeded || err instanceof UnavailableError
          ? slowDynamoDb(err)
            ? longerTimeout(argv, state.patience)
            : argv
          : undefined;
      const next = nextStep(message, argv, { input, positionals, ...(rerun ? { rerun } : {}) });
      const named = /`(keys [^`]+)`/.exec(message)?.[1];
      const human =
        err instanceof ControlPlaneWaitExceeded
          ? `${message}; to finish, run the same command again: ${next}`
          : // The message names a change the admin did not ask for (another admin's key, another command): the
            // next step given is a read of where it stands, and the human line says so too.
            named && next && !next.endsWith(`-- ${named} ${target}`) && !isRerun(named, argv)
            ? `${message} (to see where it stands first: ${next})`
            : message;
      io.err(json ? JSON.stringify({ error: message, next }) : `error: ${human}`);
      return code;
    },
  };
}

/** The target as the admin gave it, for the commands a failure names. */
function targetOf(argv: readonly string[]): string {
  return argv.includes('--local')
    ? '--local'
    : argv.includes('--stage')
      ? `--stage ${argv[argv.indexOf('--stage') + 1] ?? '<stage>'}`
      : '--stage <stage>';
}

/** The commands that only read: a `next` may always name one. */
const READS = new Set(['show', 'list', 'history', 'usage']);

/** The words of a command line, without what says where or how it runs (target, output, patience, confirmation). */
function essential(words: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '--stage' || w === '--timeout' || w === '--attempts' || w === '--actor') i++;
    else if (w !== '--local' && w !== '--json' && w !== '--yes') out.push(w);
  }
  return out;
}

/**
 * Whether a command a message names is the command line the admin ran (run again, it finishes what was asked):
 * the same command, and nothing in it the admin did not give (a named `keys create --owner a --plan free` is the
 * `keys create --plan free --owner a --local` that was run; a `keys rotate <id>` named by a create is not).
 */
function isRerun(named: string, argv: readonly string[]): boolean {
  const want = essential(named.split(/\s+/));
  const ran = essential(argv);
  if (want[0] !== ran[0] || want[1] !== ran[1]) return false;
  const given = new Set(ran.slice(2));
  return want.slice(2).every((w) => given.has(w));
}

/**
 * The one `next` step of a failure. It never names a command that changes or destroys what another admin did: it is
 * (a) a read (`keys show|list|history|usage`, `--help`), or (b) the very command line the admin ran, which run again
 * finishes it. A message naming any other change (revoke, rotate, set-plan, create…: the admin's to choose, knowing
 * the state) gets a read of the state instead: `keys show <id>` of the key it names, or of the key the admin named,
 * else `keys list` (of the owner it names). The first command the message names that is allowed wins.
 * `rerun`: the failure is one the same command finishes (a wait cut short, DynamoDB not answering): that line.
 */
export function nextStep(
  message: string,
  argv: readonly string[],
  options: { input?: boolean; positionals?: readonly string[]; rerun?: readonly string[] } = {},
): string | null {
  const target = targetOf(argv);
  const admin = (command: string) => `npm run admin -- ${command} ${target}`;
  const again = (words: readonly string[]) => `npm run admin -- ${words.map(shellWord).join(' ')}`;
  const named = [...message.matchAll(/`(keys [^`]+)`/g)].map((m) => m[1]!.trim());
  for (const command of named) {
    if (command.endsWith('--help') || READS.has(command.split(/\s+/)[1] ?? '')) return admin(command);
    if (isRerun(command, argv)) return again(argv);
  }
  if (named.length) {
    const words = named[0]!.split(/\s+/);
    const id = words.find((w) => /^key_[A-Za-z0-9_-]+$/.test(w)) ?? keyIdIn(argv);
    if (id) return admin(`keys show ${id}`);
    const owner = words.indexOf('--owner');
    return admin(owner > 0 && words[owner + 1] ? `keys list --owner ${words[owner + 1]}` : 'keys list');
  }
  if (options.rerun) return again(options.rerun);
  if (options.input) {
    const [group, command] = options.positionals ?? [];
    return group === 'keys' && command && Object.hasOwn(SHAPES, command)
      ? `npm run admin -- keys ${command} --help`
      : 'npm run admin -- --help';
  }
  return null;
}

/** The key id the admin's command line names, if it is one (checked: never a secret). */
function keyIdIn(argv: readonly string[]): string | undefined {
  const id = essential(argv)[2];
  return id && !id.startsWith('-') && /^[A-Za-z0-9_-]{1,64}$/.test(id) && !holdsSecret(id) ? id : undefined;
}

/** DynamoDB took longer than the client waits (rather than refusing or failing): more patience may finish it. */
const slowDynamoDb = (err: unknown) =>
  err instanceof UnavailableError && /timed?out|abort/i.test(String((err as Error).cause ?? err.message));

/** The same command line, waiting twice as long per attempt (`--timeout`), within what --timeout accepts. */
function longerTimeout(argv: readonly string[], { timeoutMs }: DynamoDbPatience): readonly string[] {
  const seconds = String(Math.min(DYNAMODB_LIMITS.timeoutS.max, Math.ceil((timeoutMs * 2) / 1000)));
  const at = argv.indexOf('--timeout');
  return at >= 0 ? argv.map((w, i) => (i === at + 1 ? seconds : w)) : [...argv, '--timeout', seconds];
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
  return {
    target: { local: !!o.local, stage: o.stage, pacing, dynamodb: patience(o) },
    call,
    answered: () => answered,
  };
}

/** `--timeout <seconds>` and `--attempts <n>`: the admin's DynamoDB client, each defaulting on its own. */
function patience(o: Options & { timeout?: string; attempts?: string }): DynamoDbPatience {
  const { timeoutS, attempts } = DYNAMODB_LIMITS;
  const seconds = int('--timeout', o.timeout);
  if (seconds !== undefined && (seconds < timeoutS.min || seconds > timeoutS.max))
    throw new AdminError(`--timeout must be whole seconds from ${timeoutS.min} to ${timeoutS.max}`);
  const n = int('--attempts', o.attempts);
  if (n !== undefined && (n < attempts.min || n > attempts.max))
    throw new AdminError(`--attempts must be a whole number from ${attempts.min} to ${attempts.max}`);
  return {
    timeoutMs: seconds === undefined ? ADMIN_DYNAMODB.timeoutMs : seconds * 1000,
    attempts: n ?? ADMIN_DYNAMODB.attempts,
  };
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
function failure(err: unknown, target: string, patience: DynamoDbPatience = ADMIN_DYNAMODB): string {
  if (err instanceof AdminError || err instanceof PartialFailure) return err.message;
  if (err instanceof UnavailableError) {
    // A timeout is said with what the client waited and the options that wait longer: a slow DynamoDB (a large
    // table on an emulator, a throttled one) is finished by more patience, not by looking for a fault.
    const waited = slowDynamoDb(err)
      ? `; it waited ${patience.timeoutMs / 1000} s per attempt, ${patience.attempts} attempt(s): give it longer ` +
        'with --timeout <seconds> (and --attempts <n>)'
      : '';
    return target === '--local'
      ? `DynamoDB did not answer (${String(err.cause)}). With --local: is \`npm start\` running, and do ` +
          `ANIMAL_STORE_DYNAMODB_PORT / ANIMAL_STORE_DYNAMODB_ENDPOINT name its DynamoDB?${waited}`
      : `DynamoDB did not answer (${String(err.cause)}) on ${target.replace('--stage ', 'stage ')}: check the ` +
          `network and your AWS credentials and region (AWS_PROFILE, AWS_REGION), then run the same command again${waited}`;
  }
  return `${(err as Error).name ?? 'Error'}: ${(err as Error).message}`;
}
