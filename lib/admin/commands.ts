/**
 * The admin tool's commands: what each takes (checked before anything is connected), what it calls, and what it
 * prints (lines for people, the data with --json).
 */
import { PLAN_NAMES, type PlanName } from '../../contract/plans.ts';
import { checkOwner, echoed } from './rules.ts';
import { CheckKeysUnfinished, printedCheckKeys } from './check-key.ts';
import { PartialFailure, printed, shellWord, type Printed } from './printed.ts';

export { PartialFailure, printed, type Printed } from './printed.ts';
import { AdminError, type KeyAdmin } from './service.ts';
import type { PlanChange } from './lifecycle.ts';
import { CursorRefused, LIST_PAGE } from './queries.ts';
import { MAX_OVERLAP_MINUTES, RESTORE_WINDOW_DAYS, type Created } from './lifecycle.ts';
import type { Removed } from './release-api-keys.ts';
import { chartWidth, renderUsageChart } from './usage-chart.ts';
import { describeKey, showLines } from './key-lines.ts';
import { exportHistoryCommand, historyCommand } from './audit-search.ts';
import { revokeOwnerCommand } from './owner-revoke.ts';
import { KEY_SCOPES, type KeyScope } from '../../lambdas/domain/keys.ts';
import { durationSeconds, expiryOf, momentSeconds } from './when.ts';

export interface Options {
  local?: boolean;
  stage?: string;
  json?: boolean;
  help?: boolean;
  owner?: string;
  plan?: string;
  'per-minute'?: string;
  'per-day'?: string;
  status?: string;
  limit?: string;
  after?: string;
  'max-wait'?: string;
  minutes?: string;
  actor?: string;
  yes?: boolean;
  overlap?: string;
  show?: boolean;
  expires?: string;
  scope?: string;
  expiring?: string;
  since?: string;
  until?: string;
  day?: string;
  timeout?: string;
  attempts?: string;
  another?: boolean;
  'end-overlaps'?: boolean;
}

/** A command's arguments, checked before any dependency is built. */
export interface CommandArgs {
  readonly o: Options;
  /** The positionals after `keys <command>`. */
  readonly rest: readonly string[];
  readonly perMinute?: number;
  readonly perDay?: number;
  /** The key id argument; throws when it is missing. */
  id(): string;
  /** A progress line on stderr (its data as one JSON line with --json): stdout stays the command's one answer. */
  progress(human: string, data: unknown): void;
  /**
   * Prints the command's answer on stdout now, before the command ends (create: its secret, before the write that
   * makes it work, so no key is ever usable with a secret nobody saw); what the command returns is then not printed.
   */
  answer(output: Printed): void;
}

/** Checks a command's arguments and binds them into the call to make once the target is connected. */
export type Command = (args: CommandArgs) => (admin: KeyAdmin) => Promise<Printed>;

/** The options and positionals each command takes: anything else is refused, never ignored. */
export const SHAPES: Readonly<Record<string, { readonly options: readonly string[]; readonly positionals: number }>> = {
  create: { options: ['owner', 'plan', 'per-minute', 'per-day', 'scope', 'expires', 'another'], positionals: 0 },
  list: { options: ['plan', 'owner', 'status', 'expiring', 'limit', 'after'], positionals: 0 },
  show: { options: [], positionals: 1 },
  history: { options: ['since', 'until', 'actor'], positionals: 1 },
  'export-history': { options: ['day'], positionals: 0 },
  revoke: { options: ['owner', 'yes'], positionals: 1 },
  restore: { options: [], positionals: 1 },
  rotate: { options: ['overlap', 'end-overlaps', 'yes'], positionals: 1 },
  'set-expiry': { options: [], positionals: 2 },
  'set-scope': { options: [], positionals: 2 },
  'set-plan': { options: ['per-minute', 'per-day'], positionals: 2 },
  usage: { options: [], positionals: 1 },
  unban: { options: [], positionals: 1 },
  ban: { options: ['minutes'], positionals: 1 },
  reindex: { options: [], positionals: 0 },
  'issue-check-key': { options: ['show'], positionals: 0 },
  'remove-release-api-keys': { options: ['max-wait', 'yes'], positionals: 0 },
};

export function int(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) throw new AdminError(`${name} must be a whole number`);
  return Number(v);
}

const STATUSES = ['active', 'revoked'] as const;
function status(v: string): (typeof STATUSES)[number] {
  const s = v.toLowerCase();
  if (!(STATUSES as readonly string[]).includes(s))
    throw new AdminError(`unknown status "${echoed(v)}" (use active or revoked)`);
  return s as (typeof STATUSES)[number];
}

/** `--scope` / set-scope's argument: `read` or `all`. */
export function scope(v: string | undefined, name = '--scope'): KeyScope {
  const s = v?.toLowerCase();
  if (!s || !(KEY_SCOPES as readonly string[]).includes(s))
    throw new AdminError(`${name} must be read (the key may only read) or all (every operation)`);
  return s as KeyScope;
}

/** An expiry as typed (when.ts): its form is checked before anything is connected, its moment on the admin's clock. */
function expiry(v: string, name: string): string {
  if (v !== 'never' && durationSeconds(v) === undefined && momentSeconds(v) === undefined) expiryOf(v, 0, name);
  return v;
}

export function plan(v: string | undefined): PlanName {
  if (v === undefined || v === '') throw new AdminError(`--plan is required (${PLAN_NAMES.join(', ')})`);
  const p = v.toLowerCase();
  if (!(PLAN_NAMES as readonly string[]).includes(p))
    throw new AdminError(`unknown plan "${echoed(v)}" (use ${PLAN_NAMES.join(', ')})`);
  return p as PlanName;
}

function describeUsage(u: Awaited<ReturnType<KeyAdmin['usage']>>): string {
  const lim = u.limits;
  return (
    `${u.keyId} (${u.plan}${u.status === 'revoked' ? `, REVOKED at ${u.revokedAt}` : ''}): this minute ${u.minute.count}${lim ? `/${lim.perMinute}` : ''}, today ${u.day.count}${lim ? `/${lim.perDay}` : ''}` +
    (u.bannedUntil ? `, banned until ${u.bannedUntil}` : '') +
    (u.history
      ? `\n${renderUsageChart(u.history, { ...u.history, width: chartWidth(), perMinute: lim?.perMinute }).join('\n')}`
      : '')
  );
}

/**
 * What a set-plan did to the key's standing, in lines: a spent day or ban it caused or lifted, what a move back
 * undid, and a minute already over the new limit (429s now, a ban if the client keeps on).
 */
function standingChange(k: PlanChange): string[] {
  const lines: string[] = [];
  const b = k.standing?.before;
  const a = k.standing?.after;
  const unban = `\`keys unban ${k.keyId}\` lifts it`;
  if (k.undid)
    lines.push(
      "Back where it was before today's first plan change: " +
        ([
          k.undid.liftedBanUntil ? `lifted the ban that change caused (until ${k.undid.liftedBanUntil})` : '',
          k.undid.bansToday !== null
            ? `today's bans set back to ${k.undid.bansToday} (its next ban is not escalated)`
            : '',
        ]
          .filter(Boolean)
          .join('; ') || 'it caused no ban to lift'),
    );
  if (!a) return [...lines, 'Its standing after the change could not be read: run `keys show ' + k.keyId + '`'];
  const limits = k.limits ? `${k.plan}'s ${k.limits.perDay}/day` : k.plan;
  if (a.daySpentUntil && !b?.daySpentUntil)
    lines.push(
      `Its day is now SPENT: ${a.dayCount} requests today, over ${limits} (429 until ${a.daySpentUntil}; ${unban})`,
    );
  if (!a.daySpentUntil && b?.daySpentUntil)
    lines.push(`Lifted its spent day: ${a.dayCount} requests today, within ${limits}`);
  if (b?.bannedUntil && !a.bannedUntil) lines.push(`Lifted its ban (until ${b.bannedUntil})`);
  if (a.bannedUntil) lines.push(`Still BANNED until ${a.bannedUntil} (${unban})`);
  if (k.overMinute)
    lines.push(
      `This minute it has sent ${k.overMinute.count} requests, over ${k.plan}'s ${k.overMinute.perMinute}/min: it ` +
        'gets 429s, and a ban if it keeps sending at this rate (a set-plan back today lifts what this move causes)',
    );
  return lines;
}

/** A command on one key: its id is checked up front. */
const onKey =
  (run: (admin: KeyAdmin, id: string) => Promise<Printed>): Command =>
  (args) => {
    const id = args.id();
    return (admin) => run(admin, id);
  };

/** `keys revoke <id>`. */
const revokeById = onKey(async (admin, id) => {
  const { already, ...k } = await admin.revoke(id);
  return printed(
    already
      ? `${k.keyId} was already revoked at ${k.revokedAt} (nothing changed)` +
          (k.revokedBy?.startsWith('keys revoke') ? `: ${k.revokedBy}` : '')
      : `Revoked ${k.keyId} (requests with it get 401 once cached authorizer results expire; ` +
          `\`keys restore ${k.keyId}\` within ${RESTORE_WINDOW_DAYS} days undoes it)`,
    { ...k, alreadyRevoked: already },
  );
});

export const COMMANDS: Readonly<Record<string, Command>> = {
  create: ({ o, perMinute, perDay, answer }) => {
    checkOwner(o.owner);
    const chosen = plan(o.plan);
    const terms = {
      ...(o.scope !== undefined ? { scope: scope(o.scope) } : {}),
      ...(o.expires !== undefined ? { expires: expiry(o.expires, '--expires') } : {}),
      ...(o.another ? { another: true } : {}),
    };
    if (o.expires === 'never') throw new AdminError('--expires takes a date or a length: leave it out for no expiry');
    // Printed before the write that makes the secret work (lifecycle.ts create): an error after it says whether the
    // secret printed works and what finishes the key.
    const shown = ({ key, record, finished }: Created) =>
      printed(
        `${finished ? 'Finished (its earlier create stopped before showing a working secret)' : 'Created'} ` +
          `${describeKey(record)}\nAPI key (shown once, store it now): ${key}`,
        { key, ...record, ...(finished ? { finished } : {}) },
      );
    return async (admin) => {
      const created = await admin.create({ owner: o.owner!, plan: chosen, perMinute, perDay, ...terms }, (c) =>
        answer(shown(c)),
      );
      return shown(created);
    };
  },
  list: ({ o }) => {
    const filter = {
      ...(o.plan !== undefined ? { plan: plan(o.plan) } : {}),
      ...(o.owner !== undefined ? { owner: checkOwner(o.owner) } : {}),
      ...(o.status !== undefined ? { status: status(o.status) } : {}),
    };
    const limit = int('--limit', o.limit) ?? LIST_PAGE;
    if (limit < 1 || limit > 1000) throw new AdminError('--limit must be a whole number from 1 to 1,000');
    // A cursor refused: what to do instead is to copy the page's whole `More:` line, or to start this listing over.
    const startOver =
      ['keys list', ...Object.entries(filter).map(([k, v]) => `--${k} ${shellWord(v)}`)].join(' ') +
      (o.expiring !== undefined ? ` --expiring ${shellWord(o.expiring)}` : '') +
      (o.limit !== undefined ? ` --limit ${limit}` : '');
    const refused = (why: string) =>
      new CursorRefused(
        `--after: ${why}: copy the whole \`More:\` line of the page before, or start over: run \`${startOver}\``,
      );
    const expiringWithin = o.expiring !== undefined ? durationSeconds(o.expiring) : undefined;
    if (o.expiring !== undefined && expiringWithin === undefined)
      throw new AdminError('--expiring takes a length from now: 90m, 12h, 30d');
    if (o.after !== undefined && !/^[A-Za-z0-9_-]{1,4096}$/.test(o.after))
      throw refused('not a cursor of this listing (it takes the `next` that the page before printed)');
    return async (admin) => {
      const { keys, next, read } = await admin
        .list(filter, {
          limit,
          ...(o.after ? { after: o.after } : {}),
          ...(expiringWithin !== undefined ? { expiringWithin } : {}),
        })
        .catch((err: unknown) => {
          // The one command its message names is the start over.
          throw err instanceof CursorRefused
            ? refused(err.message.replace(/^--after: /, '').replaceAll('`keys list`', 'this listing'))
            : err;
        });
      const more = next ? `\nMore: add --after ${next}` : '';
      const undelivered = keys.filter((k) => k.undelivered).length;
      const lines = keys.map((k) => describeKey(k) + (k.undelivered ? '  NO WORKING SECRET' : ''));
      if (undelivered)
        lines.push(
          `${undelivered} of these key(s) with NO WORKING SECRET: a create stopped before showing one; ` +
            '`keys show <id>` names the create that finishes it',
        );
      const none =
        expiringWithin !== undefined
          ? `No keys expiring within ${o.expiring}${read !== undefined ? ` among the ${read} read` : ''}.`
          : 'No keys.';
      return printed((keys.length ? lines.join('\n') : none) + more, { keys, next: next ?? null });
    };
  },
  reindex: () => async (admin) => {
    const n = await admin.reindex();
    return printed(
      `Gave ${n.keys} key record(s) the listing index's attributes and ${n.history} history entr${n.history === 1 ? 'y' : 'ies'} the by-day index's`,
      { updated: n.keys, historyUpdated: n.history },
    );
  },
  show: onKey(async (admin, id) => {
    const k = await admin.show(id);
    return printed(showLines(k).join('\n'), k);
  }),
  history: historyCommand,
  'export-history': exportHistoryCommand,
  revoke: (args) => (args.o.owner !== undefined ? revokeOwnerCommand(args) : revokeById(args)),
  restore: onKey(async (admin, id) => {
    const { already, ...k } = await admin.restore(id);
    return printed(
      already
        ? `${k.keyId} is active (nothing changed)`
        : `Restored ${describeKey(k)}\nIts secret works again once cached authorizer results expire (up to the ` +
            'authorizer cache TTL, 60 s in the cloud).',
      { ...k, alreadyActive: already },
    );
  }),
  rotate: (args) => {
    const id = args.id();
    const overlap = int('--overlap', args.o.overlap) ?? 0;
    if (overlap < 0 || overlap > MAX_OVERLAP_MINUTES)
      throw new AdminError(`--overlap must be whole minutes from 0 to ${MAX_OVERLAP_MINUTES.toLocaleString('en-US')}`);
    const endOverlaps = !!args.o['end-overlaps'];
    return async (admin) => {
      const { key, record, oldSecretUntil, carried, ended } = await admin.rotate(id, overlap, { endOverlaps });
      const old = oldSecretUntil
        ? `the old secret keeps working until ${oldSecretUntil} (--overlap ${overlap}), then is refused once cached ` +
          'authorizer results expire'
        : 'the old secret is refused once cached authorizer results expire (up to the authorizer cache TTL, 60 s in ' +
          'the cloud; at once locally with ANIMAL_STORE_AUTH_CACHE_TTL=0)';
      const earlier = [
        ...(carried.length
          ? [`Earlier secrets still accepted, as their rotations said: until ${carried.join(', ')}.`]
          : []),
        ...(ended.length ? [`Ended ${ended.length} earlier overlap(s) (they ran until ${ended.join(', ')}).`] : []),
      ];
      return printed([`Rotated ${record.keyId}: ${old}.`, ...earlier, `New API key (shown once): ${key}`].join('\n'), {
        key,
        ...record,
        oldSecretUntil,
        carriedOverlaps: carried,
        endedOverlaps: ended,
      });
    };
  },
  'set-plan': ({ rest, perMinute, perDay, id }) => {
    const chosen = plan(rest[1]);
    const keyId = id();
    return async (admin) => {
      const { changed, ...record } = await admin.setPlan(keyId, { plan: chosen, perMinute, perDay });
      if (!changed)
        return printed(
          `No change: ${record.keyId} is already on ${record.plan} with these limits (nothing written)` +
            (record.movedBy ? `: another command moved it there while this one ran (${record.movedBy})` : ''),
          {
            ...record,
            changed,
          },
        );
      return printed(
        [
          `Moved ${describeKey(record)}`,
          ...standingChange({ ...record, changed }),
          'The gateway applies it once cached authorizer results expire (up to the authorizer cache TTL, 60 s in the ' +
            'cloud).',
        ].join('\n'),
        { ...record, changed },
      );
    };
  },
  'set-expiry': ({ rest, id }) => {
    const keyId = id();
    if (!rest[1]) throw new AdminError('keys set-expiry needs a date, a length (30d) or never after the key id');
    const when = expiry(rest[1], 'the expiry');
    return async (admin) => {
      const { changed, ...k } = await admin.setExpiry(keyId, when);
      const at = k.validUntil ? `expires at ${new Date(k.validUntil * 1000).toISOString()}` : 'never expires';
      return printed(
        changed
          ? `${k.keyId} now ${at}: the gateway applies it once cached authorizer results expire (up to 60 s in the cloud)`
          : `No change: ${k.keyId} already ${at} (nothing written)`,
        { ...k, changed },
      );
    };
  },
  'set-scope': ({ rest, id }) => {
    const keyId = id();
    const chosen = scope(rest[1], 'the scope');
    return async (admin) => {
      const { changed, ...k } = await admin.setScope(keyId, chosen);
      const may =
        chosen === 'read' ? 'may only read (other operations get 403 key_read_only)' : 'may call every operation';
      return printed(
        changed
          ? `${k.keyId} now ${may}, once cached authorizer results expire (up to 60 s in the cloud)`
          : `No change: ${k.keyId} already ${may} (nothing written)`,
        { ...k, changed },
      );
    };
  },
  usage: onKey(async (admin, id) => {
    const u = await admin.usage(id);
    return printed(describeUsage(u), u);
  }),
  unban: onKey(async (admin, id) => {
    const k = await admin.unban(id);
    const lifted = [
      k.wasBannedUntil ? `its ban (until ${k.wasBannedUntil})` : '',
      k.liftedDay ? "today's spent quota" : '',
    ]
      .filter(Boolean)
      .join(' and ');
    return printed(
      lifted
        ? `Lifted ${lifted} of ${k.keyId}: requests get through once cached authorizer results expire (up to the ` +
            'authorizer cache TTL, 60 s in the cloud)'
        : `${k.keyId} is neither banned nor out of its day: nothing changed`,
      k,
    );
  }),
  ban: (args) => {
    const id = args.id();
    const minutes = int('--minutes', args.o.minutes) ?? 15;
    return async (admin) => {
      const k = await admin.ban(id, minutes);
      return printed(
        `Banned ${k.keyId} until ${k.adminBannedUntil} (refused once cached authorizer results expire; \`keys unban ${k.keyId}\` lifts it)`,
        k,
      );
    };
  },
  'issue-check-key': ({ o }) => {
    // The local API's pre-traffic check is run by its tests with a key they pass it: nothing locally reads a secret.
    if (o.local)
      throw new AdminError(
        "keys issue-check-key stores the key in a stage's Secrets Manager, which --local has none of (the local " +
          'pre-traffic check is given its key by its tests): use --stage, or `keys create --owner pre-traffic-check ' +
          '--plan business` for a local key',
      );
    const stage = o.stage!;
    return async (admin) => {
      try {
        return printedCheckKeys(await admin.issueCheckKey(stage), !!o.show);
      } catch (err) {
        // What it did before it stopped is printed too: every key made so far, and whether it is stored.
        if (err instanceof CheckKeysUnfinished && err.done.keys.length)
          throw new PartialFailure(err.message, printedCheckKeys(err.done, !!o.show, true));
        throw err;
      }
    };
  },
  'remove-release-api-keys': ({ o, progress }) => {
    if (o.local)
      throw new AdminError(
        "keys remove-release-api-keys deletes what release 3357b0c made at a stage's API Gateway, which --local has " +
          'none of: use --stage',
      );
    return async (admin) => {
      const r = await admin.removeReleaseApiKeys((line) => progress(line, { progress: line }));
      return printed(removedText(r), r);
    };
  },
};

/** What the removal did, in a line or two. */
function removedText(r: Removed): string {
  const parts = [
    r.deletedApiKeys.length ? `deleted ${r.deletedApiKeys.length} API key(s)` : '',
    r.detachedApiKeys.length
      ? `took ${r.detachedApiKeys.length} API key(s) another stage's usage plan holds off this stage's plans`
      : '',
    r.deletedUsagePlans.length ? `deleted ${r.deletedUsagePlans.length} usage plan(s)` : '',
    r.leftUsagePlans.length
      ? `took this stage off ${r.leftUsagePlans.length} usage plan(s) another stage uses (they stay)`
      : '',
  ].filter(Boolean);
  return parts.length
    ? `${r.stage}: ${parts.join('; ')}. Nothing release 3357b0c made is left on the stage; its stack's ` +
        'plan keys and usage plans stay.'
    : `${r.stage}: nothing release 3357b0c made is left on the stage (stack ${r.stack}).`;
}
