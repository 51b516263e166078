/**
 * The history of changes searched and exported (lambdas/storage/audit-store.ts): `keys history` across keys by time
 * and by admin, and `keys export-history`, a UTC day's entries as JSON lines for an archive or a SIEM. Reads only:
 * nothing here writes an entry.
 */
import { durationSeconds, realDay } from './when.ts';
import {
  MAX_SEARCH_DAYS,
  readAuditDay,
  searchHistory,
  utcDays,
  type AuditEntry,
} from '../../lambdas/storage/audit-store.ts';
import type { CommandArgs } from './commands.ts';
import type { AdminContext } from './context.ts';
import { AdminError, describeError } from './ports.ts';
import { printed, shellWord, type Printed } from './printed.ts';
import { echoed } from './rules.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** What `keys history` without a key id reads when --since is not given: the last day. */
export const DEFAULT_SEARCH_MS = DAY;

/**
 * A time as an admin gives it, checked before anything is connected and resolved on the tool's clock when the
 * command runs: an instant, a UTC day, or a duration back from now.
 */
export type TimeSpec =
  | { readonly at: number; readonly given: string }
  | { readonly day: string; readonly given: string }
  | { readonly ago: number; readonly given: string };

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2})?$/i;

/**
 * `--since`/`--until`: a UTC day (`2025-01-31`: from its start with --since, through its end with --until), a time
 * (`2025-01-31T14:00`, `…:30Z`, `…+02:00`; without an offset it is UTC, as every time the tool prints), or a duration
 * back from now (`90m`, `24h`, `7d`).
 */
export function timeOption(name: string, v: string | undefined): TimeSpec | undefined {
  if (v === undefined) return undefined;
  const given = v.trim();
  const ago = durationSeconds(given);
  if (ago !== undefined) return { ago: ago * 1000, given };
  if (DATE.test(given) && realDay(given)) return { day: given, given };
  const t = DATE_TIME.exec(given);
  if (t && realDay(t[1]!) && Number(t[2]) < 24 && Number(t[3]) < 60 && Number(t[4] ?? 0) < 60) {
    const at = Date.parse(t[6] ? given.toUpperCase() : `${given}Z`);
    if (!Number.isNaN(at)) return { at, given };
  }
  throw new AdminError(
    `${name} "${echoed(v)}" is not a time: give a UTC day (2025-01-31), a time (2025-01-31T14:00, UTC unless it ` +
      'ends in an offset such as +02:00) or a duration back from now (90m, 24h, 7d)',
  );
}

/** A time given, in epoch ms on the tool's clock `now`: a day starts (`end`: ends) at its UTC midnight. */
export function resolveTime(spec: TimeSpec, now: number, end: boolean): number {
  if ('at' in spec) return spec.at;
  if ('ago' in spec) return now - spec.ago;
  const start = Date.parse(`${spec.day}T00:00:00Z`);
  return end ? start + DAY - 1 : start;
}

/**
 * Who `--actor` names in a search: the name an entry's `--actor` gave, its principal (an ARN, or `local:<user>`), or
 * the principal's last part (an assumed role's session or an IAM user's name: `…/alice@example.com`; the user of
 * `local:alice`), case-insensitively.
 */
export function byActor(name: string): (e: AuditEntry) => boolean {
  const want = name.trim().toLowerCase();
  return (e) => {
    const principal = e.principal.toLowerCase();
    const last = principal.startsWith('local:') ? principal.slice(6) : principal.slice(principal.lastIndexOf('/') + 1);
    return e.actor.toLowerCase() === want || principal === want || last === want;
  };
}

/** What `keys history` is asked: one key's entries or every key's, in a range of time, by an admin. */
export interface HistoryQuery {
  /** One key's history; absent: every key's, from --since (default: the last day) to --until (default: now). */
  readonly keyId?: string;
  readonly since?: TimeSpec;
  readonly until?: TimeSpec;
  readonly actor?: string;
}

/** What `keys history` found, and the range it read (ISO; null: unbounded, a key's whole history). */
export interface HistoryFound {
  readonly keyId?: string;
  readonly since: string | null;
  readonly until: string | null;
  readonly actor: string | null;
  readonly entries: AuditEntry[];
}

/** A day's export: its entries, oldest first. */
export interface DayExport {
  readonly day: string;
  readonly entries: AuditEntry[];
  /** The day is today (UTC): entries made later today are not in it. */
  readonly partial: boolean;
}

/** The command line that reads the same entries again, its times absolute (a rerun reads what this run was asked). */
function historyLine(q: HistoryQuery, since: number | undefined, until: number | undefined): string {
  return [
    'keys history',
    ...(q.keyId ? [q.keyId] : []),
    ...(since !== undefined ? ['--since', new Date(since).toISOString()] : []),
    ...(until !== undefined ? ['--until', new Date(until).toISOString()] : []),
    ...(q.actor !== undefined ? ['--actor', shellWord(q.actor)] : []),
  ].join(' ');
}

/** The storage the searches read; a target without it (none of the tool's) cannot search. */
function storageOf(ctx: AdminContext) {
  const storage = ctx.deps.storage;
  if (!storage) throw new AdminError('this target gives no access to the history table: search one key by its id');
  return storage;
}

/**
 * `keys history`: a key's entries (one Query of its history), or every key's in a range of time (a Query per UTC day
 * of the byDay index, at most MAX_SEARCH_DAYS days at once), either filtered by --actor; oldest first.
 */
export async function findHistory(ctx: AdminContext, q: HistoryQuery): Promise<HistoryFound> {
  const now = ctx.now();
  const keep = q.actor !== undefined ? byActor(q.actor) : () => true;
  if (q.keyId !== undefined) {
    const since = q.since ? resolveTime(q.since, now, false) : undefined;
    const until = q.until ? resolveTime(q.until, now, true) : undefined;
    refuseEmptyRange(since, until);
    const all = await ctx.deps.store.history(q.keyId).catch((err: unknown) => {
      throw unread(err, historyLine(q, since, until));
    });
    const inRange = (e: AuditEntry) => {
      const t = Date.parse(e.at);
      return (since === undefined || t >= since) && (until === undefined || t <= until);
    };
    return {
      keyId: q.keyId,
      since: since === undefined ? null : new Date(since).toISOString(),
      until: until === undefined ? null : new Date(until).toISOString(),
      actor: q.actor ?? null,
      entries: all.filter((e) => inRange(e) && keep(e)),
    };
  }
  const until = q.until ? resolveTime(q.until, now, true) : now;
  const since = q.since ? resolveTime(q.since, now, false) : until - DEFAULT_SEARCH_MS;
  refuseEmptyRange(since, until);
  const days = utcDays(since, until).length;
  if (days > MAX_SEARCH_DAYS) {
    // The first MAX_SEARCH_DAYS days of what was asked: the admin goes on from there.
    const firstEnd = Math.floor(since / DAY) * DAY + MAX_SEARCH_DAYS * DAY - 1;
    throw new AdminError(
      `${new Date(since).toISOString()} to ${new Date(until).toISOString()} spans ${days} UTC days, and a search ` +
        `across keys reads at most ${MAX_SEARCH_DAYS} (a query per day): run ` +
        `\`${historyLine(q, since, firstEnd)}\`, then go on from where it ends`,
    );
  }
  const storage = storageOf(ctx);
  const entries = await searchHistory(storage, { since, until, keep }).catch((err: unknown) => {
    throw unread(err, historyLine(q, since, until));
  });
  return {
    since: new Date(since).toISOString(),
    until: new Date(until).toISOString(),
    actor: q.actor ?? null,
    entries,
  };
}

function refuseEmptyRange(since: number | undefined, until: number | undefined): void {
  if (since !== undefined && until !== undefined && since > until)
    throw new AdminError(
      `--since ${new Date(since).toISOString()} is after --until ${new Date(until).toISOString()}: nothing to search`,
    );
}

/** A read that failed: nothing is printed of it (a part would look whole), and the same read again finishes it. */
const unread = (err: unknown, again: string) =>
  err instanceof AdminError
    ? err
    : new AdminError(`the history could not be read (${describeError(err)}); nothing was changed: run \`${again}\``);

/** `keys export-history --day`: every key's entries of a UTC day, oldest first (a Query of the byDay index). */
export async function exportDay(ctx: AdminContext, day: string): Promise<DayExport> {
  const today = new Date(ctx.now()).toISOString().slice(0, 10);
  if (day > today)
    throw new AdminError(`--day ${day} is after today (${today}, UTC): there is nothing of it to export yet`);
  const entries = await readAuditDay(storageOf(ctx), day).catch((err: unknown) => {
    throw unread(err, `keys export-history --day ${day}`);
  });
  return { day, entries, partial: day === today };
}

/** What the admin's key administration (service.ts keyAdmin) gains from this module, bound to its context. */
export function auditAdmin(ctx: AdminContext) {
  return {
    /** `keys history [<id>] [--since] [--until] [--actor]`: see findHistory. */
    findHistory: (q: HistoryQuery) => findHistory(ctx, q),
    /** `keys export-history --day`: see exportDay. */
    exportHistory: (day: string) => exportDay(ctx, day),
  };
}

/** What the commands below call: keyAdmin with auditAdmin's methods. */
export type AuditAdmin = ReturnType<typeof auditAdmin>;

/** An entry as one line: when, which key (across keys), the command, who, and what it did. */
const entryLine = (e: AuditEntry, withKey: boolean) =>
  `${e.at}  ${withKey ? `${e.keyId}  ` : ''}${e.command}  by ${e.actor}${e.actor !== e.principal ? ` (as ${e.principal})` : ''}: ${e.result}`;

/** What a search was asked, in words: the range and the admin. */
const rangeText = (f: HistoryFound) =>
  [
    f.since && f.until
      ? `from ${f.since} to ${f.until}`
      : f.since
        ? `since ${f.since}`
        : f.until
          ? `until ${f.until}`
          : '',
    f.actor !== null ? `by ${f.actor}` : '',
  ]
    .filter(Boolean)
    .join(' ');

/** The options these commands read (commands.ts Options has them once registered: cli.ts parses them). */
interface AuditOptions {
  readonly since?: string;
  readonly until?: string;
  readonly day?: string;
  readonly actor?: string;
}

/**
 * `keys history [<id>] [--since <time>] [--until <time>] [--actor <who>] [--json]`: with an id, that key's changes
 * (the options filter them); without, every key's changes from --since (default: 24 hours before --until) to --until
 * (default: now), at most 31 UTC days at once. --actor here picks the admin whose changes are shown. Its arguments are
 * checked when it is bound (before anything is connected), as every command's.
 */
export const historyCommand = ({ o, rest, id }: CommandArgs) => {
  const opts = o as AuditOptions;
  const q: HistoryQuery = {
    ...(rest[0] !== undefined ? { keyId: id() } : {}),
    ...(opts.since !== undefined ? { since: timeOption('--since', opts.since)! } : {}),
    ...(opts.until !== undefined ? { until: timeOption('--until', opts.until)! } : {}),
    ...(opts.actor !== undefined ? { actor: opts.actor } : {}),
  };
  return async (admin: AuditAdmin): Promise<Printed> => {
    const found = await admin.findHistory(q);
    const range = rangeText(found);
    const lines = found.entries.map((e) => entryLine(e, found.keyId === undefined));
    const none = found.keyId
      ? `No recorded changes of ${found.keyId}${range ? ` ${range}` : ''}.`
      : `No recorded changes ${range}.`;
    const head = found.keyId === undefined && lines.length ? [`Changes ${range} (UTC), oldest first:`] : [];
    return printed(lines.length ? [...head, ...lines].join('\n') : none, found);
  };
};

/**
 * `keys export-history --day <YYYY-MM-DD>`: every key's changes of that UTC day as JSON lines on stdout, one entry
 * each, oldest first (what `keys history --json` prints of an entry); the count on stderr.
 */
export const exportHistoryCommand = ({ o, progress }: CommandArgs) => {
  const day = (o as AuditOptions).day?.trim();
  if (!day) throw new AdminError('--day is required: the UTC day to export, as 2025-01-31');
  if (!DATE.test(day) || !realDay(day))
    throw new AdminError(`--day "${echoed(day)}" is not a day: give a UTC day as 2025-01-31`);
  return async (admin: AuditAdmin): Promise<Printed> => {
    const out = await admin.exportHistory(day);
    // The count on stderr: stdout is the JSON lines alone, ready for a file or a pipe.
    progress(`${out.entries.length} change(s) on ${day} (UTC)${out.partial ? ', so far: the day is not over' : ''}`, {
      day,
      entries: out.entries.length,
      partial: out.partial,
    });
    return printed(out.entries.map((e) => JSON.stringify(e)).join('\n'), out.entries);
  };
};
