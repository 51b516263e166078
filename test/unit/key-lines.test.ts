/** A key's line and the lines of `keys show` (lib/admin/key-lines.ts), and the terms they are made from (queries.ts). */
import { describe, expect, it } from 'vitest';
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import { describeKey, showLines } from '../../lib/admin/key-lines.ts';
import { lastUseDays } from '../../lib/admin/last-use.ts';
import { termsView, type ShownKey } from '../../lib/admin/queries.ts';

const sec = (iso: string) => Date.parse(iso) / 1000;
const NOW = sec('2035-02-09T09:20:00Z');

const record: KeyRecord = {
  hash: 'f'.repeat(64),
  keyId: 'key_0123456789abcdef',
  owner: 'acme',
  plan: 'pro',
  status: 'active',
  createdAt: '2035-01-01T00:00:00.000Z',
  version: 3,
};

const shown = (r: Partial<KeyRecord>, extra: Partial<ShownKey> = {}): ShownKey => ({
  ...termsView({ ...record, ...r }, NOW),
  bannedUntil: null,
  daySpentUntil: null,
  lastUsedAt: null,
  lastUseSince: null,
  ...extra,
});

describe('describeKey', () => {
  it('is the line `keys list` printed before, for a key with no scope, expiry or last use', () => {
    expect(describeKey(termsView(record, NOW))).toBe(
      'key_0123456789abcdef  active   pro         300/min, 10000/day      owner=acme  created=2035-01-01T00:00:00.000Z',
    );
  });

  it('adds a read-only scope, the expiry (EXPIRED once passed) and the last-use column', () => {
    const line = describeKey({
      ...termsView({ ...record, scope: 'read', validUntil: sec('2035-03-01T00:00:00Z') }, NOW),
      lastUsedAt: '2035-02-09T09:14:00.000Z',
      lastUseSince: '2035-02-08T00:00:00.000Z',
    });
    expect(line).toMatch(/ {2}scope=read {2}expires=2035-03-01T00:00:00\.000Z {2}last-used=2035-02-09T09:14Z$/);
    expect(describeKey(termsView({ ...record, validUntil: NOW }, NOW))).toMatch(
      / {2}EXPIRED=2035-02-09T09:20:00\.000Z$/,
    );
    expect(
      describeKey({ ...termsView(record, NOW), lastUsedAt: null, lastUseSince: '2035-02-08T00:00:00.000Z' }),
    ).toMatch(/ {2}last-used=none-since-2035-02-08$/);
  });
});

describe('showLines', () => {
  it('prints a running overlap, an expiry, a read-only scope and the last use, each on its line', () => {
    const lines = showLines(
      shown(
        {
          scope: 'read',
          validUntil: sec('2035-03-01T00:00:00Z'),
          overlaps: [
            { hash: 'a'.repeat(64), until: sec('2035-02-09T10:00:00Z') },
            { hash: 'b'.repeat(64), until: NOW },
          ],
        },
        { lastUsedAt: '2035-02-09T09:14:00.000Z', lastUseSince: '2035-02-08T00:00:00.000Z' },
      ),
    );
    expect(lines).toEqual([
      'key_0123456789abcdef  active   pro         300/min, 10000/day      owner=acme  created=2035-01-01T00:00:00.000Z' +
        '  scope=read  expires=2035-03-01T00:00:00.000Z',
      "old secret accepted until 2035-02-09T10:00:00.000Z (a rotation's overlap; refused from then)",
      'expires 2035-03-01T00:00:00.000Z: from then every request with it gets 401 key_expired',
      'scope: read (reads only): a request that changes data gets 403 key_read_only',
      'last used 2035-02-09 09:14 UTC',
    ]);
    expect(lines.join('\n')).not.toMatch(/aaaa|bbbb|ffff/);
  });

  it('says an expired key is refused, a key with no recent use how far back that holds, and nothing it cannot know', () => {
    const lines = showLines(
      shown({ validUntil: sec('2035-02-01T00:00:00Z') }, { lastUseSince: '2035-02-08T00:00:00.000Z' }),
    );
    expect(lines).toContain('EXPIRED at 2035-02-01T00:00:00.000Z: every request with it gets 401 key_expired');
    expect(lines).toContain(
      "no use recorded since 2035-02-08 00:00 UTC (the limiter's counts of the last 2 UTC days: nothing older is kept)",
    );
    // A target without limiter counters (lastUseSince null): no last-use line at all.
    expect(showLines(shown({})).join('\n')).not.toMatch(/use/);
    expect(showLines(shown({}))).toHaveLength(1);
  });

  it('keeps the standing and the unfinished create as `keys show` printed them', () => {
    const lines = showLines(
      shown(
        { undelivered: true, scope: 'read' },
        { bannedUntil: '2035-02-09T09:35:00.000Z', daySpentUntil: '2035-02-10T00:00:00.000Z' },
      ),
    );
    expect(lines[1]).toBe(
      'BANNED until 2035-02-09T09:35:00.000Z, DAY SPENT until 2035-02-10T00:00:00.000Z (`keys unban key_0123456789abcdef` lifts both)',
    );
    expect(lines.at(-1)).toMatch(/^NO WORKING SECRET: .*`keys create --owner acme --plan pro --scope read`/);
  });
});

describe('termsView', () => {
  it('has no hash, only the overlaps that run, and a key expired from its validUntil on', () => {
    const v = termsView(
      {
        ...record,
        validUntil: NOW,
        overlaps: [
          { hash: 'a'.repeat(64), until: NOW + 1 },
          { hash: 'b'.repeat(64), until: NOW },
        ],
      },
      NOW,
    );
    expect(v).toMatchObject({
      scope: 'all',
      expiresAt: '2035-02-09T09:20:00.000Z',
      expired: true,
      overlaps: [{ until: '2035-02-09T09:20:01.000Z' }],
    });
    expect(JSON.stringify(v)).not.toMatch(/aaaa|bbbb|ffff/);
    expect(termsView(record, NOW)).toMatchObject({ expiresAt: null, expired: false, overlaps: [] });
  });
});

describe('lastUseDays', () => {
  it('reads today and yesterday: the days whose limiter items TTL cannot have deleted', () => {
    expect(lastUseDays(Date.parse('2035-02-09T00:00:00Z'))).toEqual([
      sec('2035-02-09T00:00:00Z'),
      sec('2035-02-08T00:00:00Z'),
    ]);
    expect(lastUseDays(Date.parse('2035-02-09T23:59:59Z'))).toHaveLength(2);
  });
});
