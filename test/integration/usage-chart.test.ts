/**
 * `keys usage` on DynamoDB Local: requests through the local gateway (the functions' limiter records the minute
 * history) show up in the admin tool's per-minute numbers (--json) and its terminal chart.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AdminDeps } from '../../lib/admin/service.ts';
import { type TestApi } from '../helpers/api.ts';
import { runLocalAdmin, startLocalAdmin } from '../helpers/admin.ts';

let api: TestApi;
let deps: AdminDeps;

async function admin(...args: string[]) {
  const { code, out, err } = await runLocalAdmin(deps, ...args);
  expect(err).toBe('');
  expect(code).toBe(0);
  return out;
}

beforeAll(async () => {
  ({ api, deps } = await startLocalAdmin());
});
afterAll(() => api?.close());

it('shows the day minute by minute: the numbers with --json add up to the day count, and a chart otherwise', async () => {
  const created = JSON.parse(await admin('keys', 'create', '--owner', 'chart', '--plan', 'pro', '--json')) as {
    key: string;
    keyId: string;
  };
  const before = JSON.parse(await admin('keys', 'usage', created.keyId, '--json'));
  expect(before.history).toMatchObject({ minutes: [], unattributed: 0 });
  expect(await admin('keys', 'usage', created.keyId)).toContain('No requests recorded minute by minute today');

  for (let i = 0; i < 7; i++) expect((await api.call('/pets', { key: created.key })).status).toBe(200);
  const usage = JSON.parse(await admin('keys', 'usage', created.keyId, '--json'));
  expect(usage.day.count).toBe(7);
  const minutes = usage.history.minutes as Array<{ minuteStart: number; count: number }>;
  expect(minutes.reduce((sum, m) => sum + m.count, 0)).toBe(7); // every request in some minute (1 or 2 of them)
  expect(minutes.length).toBeGreaterThanOrEqual(1);
  expect(usage.history.unattributed).toBe(0);
  for (const m of minutes) expect(m.minuteStart % 60).toBe(0);

  const human = (await admin('keys', 'usage', created.keyId)).split('\n');
  expect(human[0]).toMatch(new RegExp(`^${created.keyId} \\(pro\\): this minute \\d+/300, today 7/10000`));
  expect(human[1]).toMatch(/^Requests per minute today, 00:00-\d\d:\d\d UTC/);
  expect(human[2]).toMatch(/^\|[ ▁▂▃▄▅▆▇█]+\|$/u);
  expect(human[2]).toContain('█');
  expect([...human[2]!].length).toBeLessThanOrEqual(62); // 60 columns when not a terminal, plus the frame
  expect(human[4]).toMatch(/^Peak [4-7]\/min at \d\d:\d\d UTC \(\d+% of 300\/min\); [12] active minute\(s\)\.$/);
});
