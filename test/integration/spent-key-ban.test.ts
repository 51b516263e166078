/**
 * A key whose day is spent and keeps sending is banned like any key that ignores its 429s, though its requests stop
 * at the gateway and never reach the limiter: the authorizer bans it when it comes back a minute or more after it was
 * first told its day is spent. Over HTTP through the local gateway with the cache off (TTL 0: every request asks the
 * authorizer, the costliest case) on the test's clock; the writes to the key's standing are counted.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PLANS, banSecondsFor } from '../../contract/plans.ts';
import { banMessage } from '../../contract/deny-context.ts';
import { LIST_PETS } from '../../contract/operations/list-pets.ts';
import { generateKey, hashKey } from '../../lambdas/domain/keys.ts';
import { SPENT_RETURN_SECONDS } from '../../lambdas/domain/refusal.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { onEveryClient, throttlingException } from '../helpers/clients.ts';
import { countInvocations, devKeyId, setDayCounters } from '../helpers/key-standing.ts';

const spender = generateKey();
const patient = generateKey();
const halted = generateKey();
let api: TestApi;
let reached: { readonly count: number };
/** UpdateItem calls on each key's standing item, by key. */
const standingWrites = new Map<string, number>();

beforeAll(async () => {
  api = await startTestApi({
    devKeys: [
      { key: spender, plan: 'free' },
      { key: patient, plan: 'free' },
      { key: halted, plan: 'free' },
    ],
  });
  reached = countInvocations(api, LIST_PETS.operationId);
  onEveryClient(api, 'countStandingWrites', ((next: (a: unknown) => unknown, context: { commandName?: string }) =>
    (args: { input: unknown }) => {
      const input = JSON.stringify(args.input);
      for (const key of [spender, patient])
        if (context.commandName === 'UpdateItemCommand' && input.includes(`ks#${hashKey(key)}`))
          standingWrites.set(key, (standingWrites.get(key) ?? 0) + 1);
      return next(args);
    }) as never);
});
afterAll(() => api?.close());

async function ask(key: string, atSec: number) {
  api.clock.set(() => atSec * 1000);
  const before = reached.count;
  const res = await api.call('/pets?limit=1', { key });
  const body = (await res.json()) as { code?: string; message?: string };
  return {
    status: res.status,
    code: res.ok ? undefined : body.code,
    message: body.message,
    retryAfter: Number(res.headers.get('retry-after')),
    by: reached.count > before ? 'function' : 'gateway',
  };
}

it('a spent key that comes back after its Deny is banned, escalating as the limiter bans; two writes a day and two a ban', async () => {
  const noon = Date.UTC(2034, 6, 3, 12, 0, 0) / 1000;
  const dayEnd = noon + 12 * 3600;
  await setDayCounters(api, devKeyId(spender), noon * 1000, { d: PLANS.free.limits!.perDay });
  // The function refuses it first (the gateway did not know) and records the spent day.
  expect(await ask(spender, noon)).toMatchObject({ status: 429, code: 'quota_exceeded', by: 'function' });
  // A minute of requests, each asking the authorizer: refused at the gateway, told the day's end, not banned.
  const told = [];
  for (let s = 1; s < 1 + SPENT_RETURN_SECONDS; s += 0.5) told.push(await ask(spender, noon + s));
  expect(told.every((a) => a.code === 'quota_exceeded' && a.by === 'gateway')).toBe(true);
  expect(told[0]!.retryAfter).toBe(dayEnd - (noon + 1));
  // Its first Deny noted once: one write besides the function's.
  expect(standingWrites.get(spender)).toBe(2);

  // A minute after its first Deny it is still sending: banned for a first ban's length, in the limiter's words.
  const back = noon + 1 + SPENT_RETURN_SECONDS;
  const banned = await ask(spender, back);
  expect(banned).toMatchObject({ status: 429, code: 'key_banned', by: 'gateway', retryAfter: banSecondsFor(1) });
  expect(banned.message).toBe(banMessage(back + banSecondsFor(1)));
  for (let s = 1; s < 100; s++) expect((await ask(spender, back + s)).code).toBe('key_banned');
  // The ban, and its end noted as when the key was last told its spent day.
  expect(standingWrites.get(spender)).toBe(4);

  // Back once the ban has ended, still spent: told its spent day again, not banned at once.
  const after = back + banSecondsFor(1) + 1;
  expect(await ask(spender, after)).toMatchObject({ code: 'quota_exceeded', by: 'gateway' });
  // Still sending a minute after that: banned again, twice as long.
  const again = after + SPENT_RETURN_SECONDS;
  expect(await ask(spender, again)).toMatchObject({ code: 'key_banned', retryAfter: banSecondsFor(2) });
  // Two standing writes a ban: the ban, and its end noted.
  expect(standingWrites.get(spender)).toBe(6);
  expect(reached.count).toBe(1);
}, 120_000);

it('a spent key banned near the day’s end is banned until the day’s end only, and told its next spent day first', async () => {
  const late = Date.UTC(2034, 6, 5, 23, 50, 0) / 1000;
  const dayEnd = Date.UTC(2034, 6, 6) / 1000;
  const key = spender;
  await setDayCounters(api, devKeyId(key), late * 1000, { d: PLANS.free.limits!.perDay });
  expect((await ask(key, late)).code).toBe('quota_exceeded');
  expect((await ask(key, late + 1)).code).toBe('quota_exceeded');
  // A first ban is 15 minutes: this one ends with the day, so it costs no request of the next.
  const banned = await ask(key, late + 1 + SPENT_RETURN_SECONDS);
  expect(banned).toMatchObject({ code: 'key_banned', retryAfter: dayEnd - (late + 1 + SPENT_RETURN_SECONDS) });
  expect(await ask(key, dayEnd + 1)).toMatchObject({ status: 200, by: 'function' });
  // Spent again the next day: its first Deny tells it so, no ban carried over; coming back after it is banned.
  await setDayCounters(api, devKeyId(key), (dayEnd + 3600) * 1000, { d: PLANS.free.limits!.perDay });
  expect((await ask(key, dayEnd + 3600)).code).toBe('quota_exceeded');
  expect((await ask(key, dayEnd + 3601)).code).toBe('quota_exceeded');
  expect((await ask(key, dayEnd + 3601 + SPENT_RETURN_SECONDS)).code).toBe('key_banned');
}, 60_000);

it('a ban stopped after its end was noted and before it was written: denied as spent, banned when it comes back', async () => {
  const noon = Date.UTC(2034, 6, 8, 12, 0, 0) / 1000;
  const key = halted;
  await setDayCounters(api, devKeyId(key), noon * 1000, { d: PLANS.free.limits!.perDay });
  expect((await ask(key, noon)).code).toBe('quota_exceeded');
  expect((await ask(key, noon + 1)).code).toBe('quota_exceeded');
  // Every write of the ban itself fails: the limiter's day items and the standing's banUntil.
  const fail = onEveryClient(api, 'failBanWrites', ((next: (a: unknown) => unknown) => (args: { input: unknown }) => {
    if (/banUntil/.test(JSON.stringify(args.input))) throw throttlingException();
    return next(args);
  }) as never);
  const back = noon + 1 + SPENT_RETURN_SECONDS;
  try {
    expect(await ask(key, back)).toMatchObject({ status: 429, code: 'quota_exceeded', by: 'gateway' });
  } finally {
    fail();
  }
  // Its noted ban end stands in for a Deny: a return a minute after it is banned, one ban later in the day's count.
  const end = back + banSecondsFor(1);
  expect((await ask(key, end + 1)).code).toBe('quota_exceeded');
  expect(await ask(key, end + 1 + SPENT_RETURN_SECONDS)).toMatchObject({
    code: 'key_banned',
    retryAfter: banSecondsFor(2),
  });
}, 60_000);

it('a spent key that waits for the day end it was told is served then, never banned', async () => {
  const noon = Date.UTC(2034, 6, 4, 12, 0, 0) / 1000;
  const dayEnd = noon + 12 * 3600;
  await setDayCounters(api, devKeyId(patient), noon * 1000, { d: PLANS.free.limits!.perDay });
  expect((await ask(patient, noon)).code).toBe('quota_exceeded');
  const told = await ask(patient, noon + 5);
  expect(told).toMatchObject({ code: 'quota_exceeded', by: 'gateway', retryAfter: dayEnd - (noon + 5) });
  expect(await ask(patient, dayEnd)).toMatchObject({ status: 200, by: 'function' });
}, 60_000);
