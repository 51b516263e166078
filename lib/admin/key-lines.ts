/**
 * How a key reads in the admin tool's lines: one line per key (`keys list`, and what create, restore and set-plan
 * print) and the lines of `keys show`.
 */
import { finishingCreate } from './lifecycle.ts';
import { LAST_USE_DAYS } from './last-use.ts';
import type { KeyTerms, ShownKey } from './queries.ts';
import type { KeyView } from './rules.ts';

/**
 * What a key's line is made of: any key view (a record's, `keys list`'s or `keys show`'s). `expired` is what the
 * line says of an expiry; without it (a view taken without the clock) an expiry is printed as `expires=`.
 * `lastUsedAt`, when the view has it (a listing that read it), adds a column.
 */
export type DescribedKey = Omit<KeyView, 'overlaps'> &
  Partial<Pick<KeyTerms, 'expired'>> & {
    readonly lastUsedAt?: string | null;
    readonly lastUseSince?: string | null;
  };

const iso = (sec: number) => new Date(sec * 1000).toISOString();
/** `2035-02-09T09:14Z`: a minute, short enough for a column. */
const isoMinute = (at: string) => `${at.slice(0, 16)}Z`;
/** `2035-02-09 09:14 UTC`: a minute, for a sentence. */
const minuteUtc = (at: string) => `${at.slice(0, 10)} ${at.slice(11, 16)} UTC`;

function lastUsedColumn(k: DescribedKey): string {
  if (k.lastUsedAt === undefined) return '';
  if (k.lastUsedAt !== null) return `  last-used=${isoMinute(k.lastUsedAt)}`;
  return k.lastUseSince ? `  last-used=none-since-${k.lastUseSince.slice(0, 10)}` : '';
}

function line(k: DescribedKey, withLastUse: boolean): string {
  const limits = k.limits ? `${k.limits.perMinute}/min, ${k.limits.perDay}/day` : 'no limits set';
  const expiry = k.validUntil !== undefined ? `  ${k.expired ? 'EXPIRED' : 'expires'}=${iso(k.validUntil)}` : '';
  return (
    `${k.keyId}  ${k.status.padEnd(7)}  ${k.plan.padEnd(10)}  ${limits.padEnd(22)}  owner=${k.owner}  created=${k.createdAt}` +
    (k.rotatedAt ? `  rotated=${k.rotatedAt}` : '') +
    (k.revokedAt ? `  revoked=${k.revokedAt}` : '') +
    (k.scope === 'read' ? '  scope=read' : '') +
    expiry +
    (withLastUse ? lastUsedColumn(k) : '')
  );
}

/**
 * One line for a key: id, status, plan, limits, owner, when it was made, rotated and revoked, then what is set of
 * its scope (`scope=read`) and expiry (`expires=<ISO>`, `EXPIRED=<ISO>`), and its last use when the view has it.
 */
export const describeKey = (k: DescribedKey): string => line(k, true);

/** The lines of `keys show`: the key's line, its standing, the secrets it accepts, its terms and its last use. */
export function showLines(k: ShownKey): string[] {
  const standing = [
    k.bannedUntil ? `BANNED until ${k.bannedUntil}` : '',
    k.daySpentUntil ? `DAY SPENT until ${k.daySpentUntil}` : '',
  ].filter(Boolean);
  const lines = [
    line(k, false),
    ...(standing.length
      ? [`${standing.join(', ')} (\`keys unban ${k.keyId}\` lifts ${standing.length > 1 ? 'both' : 'it'})`]
      : []),
    // A revoked key refuses every secret: its overlaps are printed only while they work.
    ...(k.status === 'active' ? k.overlaps : []).map(
      (o) => `old secret accepted until ${o.until} (a rotation's overlap; refused from then)`,
    ),
  ];
  if (k.expiresAt)
    lines.push(
      k.expired
        ? `EXPIRED at ${k.expiresAt}: every request with it gets 401 key_expired`
        : `expires ${k.expiresAt}: from then every request with it gets 401 key_expired`,
    );
  if (k.scope === 'read') lines.push('scope: read (reads only): a request that changes data gets 403 key_read_only');
  if (k.lastUsedAt) lines.push(`last used ${minuteUtc(k.lastUsedAt)}`);
  else if (k.lastUseSince)
    lines.push(
      `no use recorded since ${minuteUtc(k.lastUseSince)} (the limiter's counts of the last ${LAST_USE_DAYS} ` +
        'UTC days: nothing older is kept)',
    );
  if (k.undelivered)
    lines.push(
      'NO WORKING SECRET: its create stopped before showing one, so every request with it is refused: run ' +
        `\`${finishingCreate(k)}\`, which gives this key a new secret and shows it`,
    );
  return lines;
}
