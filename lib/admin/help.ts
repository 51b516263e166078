/**
 * The admin tool's help: `--help` lists every command, `keys <command> --help` prints that one's usage. Each
 * command's synopsis is derived from what it takes (SHAPES in commands.ts: its options and positionals), so the help
 * cannot offer an option the command refuses; what each command and option does is said here, once.
 */
import { PLAN_NAMES } from '../../contract/plans.ts';
import { STAGE_NAMES } from '../config/stage-names.ts';
import { CHECK_KEY_ENTERPRISE_LIMITS } from './check-key.ts';
import { SHAPES } from './commands.ts';
import { REMOVAL_PERMISSIONS } from './release-api-keys.ts';

const STAGE_CHOICE = STAGE_NAMES.join('|');

interface CommandHelp {
  /** The positionals' names, in order. */
  readonly args?: readonly string[];
  /** The positionals may be left out (`keys history` without an id searches every key). */
  readonly argsOptional?: boolean;
  /** Options the command needs (the others of its SHAPES entry are optional). */
  readonly required?: readonly string[];
  /** Options given together or not at all, written as one group. */
  readonly together?: readonly string[];
  readonly about: string;
  /** More for `keys <command> --help` than the command list has room for. */
  readonly more?: string;
}

const TTL = 'once cached authorizer results expire (up to 60 s in the cloud: the authorizer cache TTL)';

const HELP: Readonly<Record<string, CommandHelp>> = {
  create: {
    required: ['owner', 'plan'],
    together: ['per-minute', 'per-day'],
    about:
      'a new key on a plan; prints its secret once (Enterprise takes its limits); --scope read for a key that may ' +
      'only read, --expires for one that expires',
    more:
      'The secret printed works once the command exits 0. A create that stopped before that leaves a key with no ' +
      'working secret (`keys show` says so): the same command again gives that key a new secret, never a second key. ' +
      'The same create within 15 minutes of a finished one is refused (a rerun after a lost answer): --another makes a ' +
      'second key for that owner and plan.',
  },
  list: {
    about:
      'at most N keys (default 100, at most 1,000) by plan, status and owner (matched exactly, case-insensitively); ' +
      '--after continues from the `More:` line of the page before',
    more:
      'A cursor only continues the listing that printed it, on the same stage: give the same --plan, --owner and ' +
      '--status. A cursor refused names the listing to start over (without --after).',
  },
  show: {
    args: ['id'],
    about: 'one key: plan, limits, status, a ban or a spent day with its end',
  },
  history: {
    args: ['id'],
    argsOptional: true,
    about:
      "changes made to keys, oldest first: with <id>, that key's; without, every key's from --since (default: 24 " +
      'hours before --until) to --until (default: now), at most 31 UTC days at once; when, the command, who (the AWS ' +
      'principal on a stage, the OS user locally, --actor beside either) and what it did; --json adds the record ' +
      'before and after',
    more:
      'Times: a UTC day (2025-01-31: from its start with --since, through its end with --until), a time ' +
      '(2025-01-31T14:00, UTC unless it ends in an offset such as +02:00) or a duration back from now (90m, 24h, 7d). ' +
      "Here --actor shows only that admin's changes; it changes nothing. Across keys it reads one query per UTC day; " +
      'a change made in the last second may not be found yet. Entries from before this release are found by time ' +
      'once `keys reindex` has run.',
  },
  'export-history': {
    required: ['day'],
    about:
      "every key's changes of a UTC day as JSON lines on stdout (one entry each, oldest first, as `keys history " +
      '--json` prints them); the count on stderr',
    more: "Today's export holds the changes made so far. Entries are kept 400 days.",
  },
  revoke: {
    args: ['id'],
    argsOptional: true,
    about:
      `the key gets 401 ${TTL}; \`keys restore\` undoes it within 7 days; --owner <name> instead of an id revokes ` +
      'every active key of that owner, each reported',
    more:
      'On production it asks for the key id (or the owner) to be typed back, or takes --yes. With --owner it lists ' +
      "the owner's active keys first, then revokes them one by one (each with its own history entry); a key that " +
      'fails does not stop the others, and the command exits 1 naming `keys revoke --owner <owner>`, which revokes ' +
      'what is left. The pre-traffic-check owner is refused: revoke its keys by id.',
  },
  restore: {
    args: ['id'],
    about: 'a key revoked within the last 7 days is active again, with the same secret, plan and limits',
  },
  rotate: {
    args: ['id'],
    about:
      'a new secret for the same id and plan; the old secret keeps working until cached authorizer results expire ' +
      '(up to 60 s in the cloud: the authorizer cache TTL), then gets 401; --overlap keeps it working longer',
    more:
      'An earlier secret whose overlap still runs keeps working until its end, as its rotation said; ' +
      '--end-overlaps refuses those too (a leaked secret). At most 3 earlier secrets run at once. On production it ' +
      'asks for the key id to be typed back, or takes --yes.',
  },
  'set-plan': {
    args: ['id', 'plan'],
    about: `the gateway applies it ${TTL}`,
    more:
      `<plan> is one of ${PLAN_NAMES.join(', ')}; Enterprise takes --per-minute and --per-day, and an Enterprise ` +
      "key's limit not given is kept.",
  },
  'set-expiry': {
    args: ['id', 'when'],
    about: `when the key expires: a date (2027-01-31, that day's start UTC), an ISO time, a length (30d) or never; ${TTL}`,
    more:
      'An expired key gets 401 key_expired for a day, then a plain 401. Every secret of the key expires with it, an ' +
      "overlap's too. A later expiry brings an expired key back.",
  },
  'set-scope': {
    args: ['id', 'scope'],
    about: `read: the key may only call operations that read (others get 403 key_read_only); all: every operation; ${TTL}`,
  },
  usage: { args: ['id'], about: "today's counts from the rate limiter, and a minute-by-minute chart of the day" },
  unban: {
    args: ['id'],
    about: `lifts a ban (the limiter's 15 minutes after a flood of 429s, or an admin's) and a spent day (today's quota starts again); the gateway lets it through ${TTL}`,
  },
  ban: {
    args: ['id'],
    about: 'refuses the key for N minutes (default 15, at most 1,440) until it ends or `keys unban`',
  },
  reindex: {
    about:
      'once after upgrading from release 3357b0c: lists again the revoked keys it kept apart (waiting for a purge of ' +
      'their API keys) and any record an earlier release listed otherwise (safe to run again)',
  },
  'issue-check-key': {
    about:
      "the stage's pre-traffic check keys: one key per plan (Enterprise at " +
      `${CHECK_KEY_ENTERPRISE_LIMITS.perMinute}/min, ${CHECK_KEY_ENTERPRISE_LIMITS.perDay}/day) with owner ` +
      'pre-traffic-check, stored as JSON by plan in the secret animal-store/<stage>/pre-traffic-check-key where the ' +
      'hook reads them; run again, it finishes what a run left and says when there is nothing to do',
    more:
      "It prints every plan's key id and what it did. It never makes a second check key on a plan: a key whose " +
      'secret never reached the secret is given a new one under the same id (a rotation, in `keys history`); a ' +
      'secret holding one key (the old form) is upgraded, keeping that key on its plan. Needs secretsmanager:CreateSecret, PutSecretValue, DescribeSecret ' +
      'and GetSecretValue on that secret. Stage targets only: locally nothing reads the secret.',
  },
  'remove-release-api-keys': {
    about:
      "once after upgrading from release 3357b0c: deletes what it made on the stage (its admin tool's API keys and " +
      "Enterprise usage plans, its Free pool): every API key on the stage's usage plans but the stack's plan keys, " +
      "every usage plan of the stage but the stack's; no key uses them since. Paced to 2 API Gateway calls a second; " +
      'run again after any failure, it lists what is left and goes on',
    more:
      'It refuses unless the stage stack is settled (a *_COMPLETE status, not a rollback), its deployed template ' +
      "has the plan keys and no longer 3357b0c's UsagePlanFreePool, and the authorizer cache TTL has passed since " +
      'it last changed: no release the stack can run or roll back to, nor an answer cached before, names what it ' +
      "deletes. An API key another stage's usage plan also holds is only taken off this stage's " +
      `plans. Stage targets only; on production it asks for the stage name to be typed back, or takes --yes. Needs ${REMOVAL_PERMISSIONS}.`,
  },
};

/** What each option takes and does, as the synopsis and the option list print it. */
const OPTION_HELP: Readonly<Record<string, { readonly value?: string; readonly about: string }>> = {
  owner: { value: '<name>', about: 'the customer: one line of visible text, at most 128 characters' },
  plan: { value: 'plan', about: `one of ${PLAN_NAMES.join(', ')}` },
  'per-minute': { value: 'N', about: 'requests per minute (Enterprise)' },
  'per-day': { value: 'N', about: 'requests per day (Enterprise)' },
  status: { value: 'active|revoked', about: 'only keys with this status' },
  limit: { value: 'N', about: 'print at most N keys (1 to 1,000; default 100)' },
  after: { value: 'NEXT', about: 'continue from the `More:` line (or `next` with --json) of the page before' },
  minutes: { value: 'N', about: 'how long the ban lasts (1 to 1,440; default 15)' },
  overlap: {
    value: 'N',
    about: 'the old secret keeps working for N minutes (1 to 1,440), so the customer can deploy the new one first',
  },
  yes: { about: 'go ahead on production without asking' },
  expiring: {
    value: '<length>',
    about:
      'only keys that expire within this length from now (90m, 12h, 30d), the expired ones too; read from the ' +
      'listing and filtered (at most 10,000 records a page)',
  },
  since: {
    value: '<time>',
    about:
      'from this time: a UTC day (2025-01-31), a time (2025-01-31T14:00, UTC unless it ends in an offset) or a ' +
      'duration back from now (90m, 24h, 7d); across keys, default 24 hours before --until',
  },
  until: { value: '<time>', about: 'through this time (a day: through its end), written as --since; default now' },
  day: { value: 'YYYY-MM-DD', about: 'the UTC day to export' },
  actor: {
    value: '<who>',
    about:
      "only changes by this admin: the name --actor gave, the AWS principal's ARN or its last part (a role " +
      "session's or user's name), or the local user; case-insensitive",
  },
  scope: { value: 'read|all', about: 'read: the key may only call operations that read (default all)' },
  expires: {
    value: '<when>',
    about:
      "a date (2027-01-31: that day's start, UTC), an ISO time with its zone, or a length from now (90m, 12h, 30d)",
  },
  another: { about: 'make a second key for an owner whose key of this plan was made in the last 15 minutes' },
  'end-overlaps': { about: 'refuse now the earlier secrets whose overlap still runs (a leaked secret)' },
  'max-wait': {
    value: '<seconds>',
    about:
      "stop once API Gateway's control plane has been waited for this long in all (it allows one usage-plan change " +
      'per 20 s per account), say what is left and the command that finishes it; a wait of more than a few seconds ' +
      'prints a line on stderr',
  },
  show: {
    about:
      'print the secret too; without it the secret is not printed: it lives in Secrets Manager, where the hook reads ' +
      'it, and a terminal or CI log would be one more copy',
  },
};

const GLOBAL_HELP = `Targets:
  --local                   DynamoDB Local of \`npm start\` (ANIMAL_STORE_DYNAMODB_ENDPOINT, else port
                            ANIMAL_STORE_DYNAMODB_PORT, default 8000)
  --stage <name>            the stage's stack in AWS (its stackName in lib/config/stages.ts): credentials and region
                            from the environment or profile (AWS_REGION, else the profile's region), resolved once for
                            every AWS client

Every command:
  --json                    the data as JSON on stdout; an error as one JSON object on stderr ({ error, next })
  --actor <name>            who is making the change, recorded in \`keys history\` beside the AWS principal (or OS
                            user) that made it: a person behind a shared role
  --timeout <seconds>       how long the tool waits for each DynamoDB answer (default 60, at most 900)
  --attempts <n>            how many times it sends each DynamoDB request (default 4, at most 20)
  --help, -h                this text (\`keys <command> --help\`: that command's)`;

const COLUMN = 28;
const WIDTH = 120;

/** Words wrapped to the help's width, every line but the first indented to the description column. */
function wrapped(text: string, indent = COLUMN): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && indent + line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

/** `--name VALUE`; a plan the command needs shows the plans, a filter by plan just `<plan>` (the width). */
const optionUse = (name: string, required = false) => {
  const value = OPTION_HELP[name]?.value;
  if (!value) return `--${name}`;
  return `--${name} ${value === 'plan' ? (required ? `<${PLAN_NAMES.join('|')}>` : '<plan>') : value}`;
};

/** `keys <command> <args> <required options> [optional ones]`, from what the command takes. */
export function synopsis(command: string): string {
  const shape = SHAPES[command];
  const help = HELP[command];
  const args = (help?.args ?? [])
    .slice(0, shape?.positionals ?? 0)
    .map((a) => (help?.argsOptional ? `[<${a}>]` : `<${a}>`));
  const options = shape?.options ?? [];
  const required = options.filter((o) => help?.required?.includes(o)).map((o) => optionUse(o, true));
  const together = options.filter((o) => help?.together?.includes(o));
  const optional = options
    .filter((o) => !help?.required?.includes(o) && !together.includes(o))
    .map((o) => `[${optionUse(o)}]`);
  const group = together.length ? [`[${together.map((o) => optionUse(o)).join(' ')}]`] : [];
  return ['keys', command, ...args, ...required, ...group, ...optional].join(' ');
}

/** One command's entry in the command list: its synopsis, then what it does from the description column. */
function entry(command: string): string {
  const head = `  ${synopsis(command)}`;
  const about = wrapped(HELP[command]?.about ?? '');
  return head.length < COMMAND_FITS ? `${head.padEnd(COLUMN)}${about}` : `${head}\n${' '.repeat(COLUMN)}${about}`;
}
const COMMAND_FITS = COLUMN - 1;

/** The whole help: every command the tool has (SHAPES), the targets, and the options every command takes. */
export function usage(): string {
  return [
    `Usage: npm run admin -- <command> [options] (--local | --stage ${STAGE_CHOICE}) [--json]`,
    '',
    'Commands:',
    ...Object.keys(SHAPES).map(entry),
    '',
    GLOBAL_HELP,
  ].join('\n');
}

/** `keys <command> --help`: its synopsis, what it does, its options, and the targets. */
export function commandUsage(command: string): string {
  const help = HELP[command];
  const options = SHAPES[command]?.options ?? [];
  const optionLines = options.map((o) => {
    const head = `  ${optionUse(o)}`;
    const about = wrapped(OPTION_HELP[o]?.about ?? '');
    return head.length < COMMAND_FITS ? `${head.padEnd(COLUMN)}${about}` : `${head}\n${' '.repeat(COLUMN)}${about}`;
  });
  return [
    `Usage: npm run admin -- ${synopsis(command)} (--local | --stage ${STAGE_CHOICE}) [--json]`,
    '',
    wrapped(help?.about ? `${help.about[0]!.toUpperCase()}${help.about.slice(1)}.` : '', 0),
    ...(help?.more ? [wrapped(help.more, 0)] : []),
    ...(optionLines.length ? ['', 'Options:', ...optionLines] : []),
    '',
    GLOBAL_HELP,
  ].join('\n');
}

/** Commands the help says nothing about (a test keeps this empty). */
export const undocumented = () => [
  ...Object.keys(SHAPES).filter((c) => !HELP[c]),
  ...Object.values(SHAPES).flatMap((s) => s.options.filter((o) => !OPTION_HELP[o])),
];
