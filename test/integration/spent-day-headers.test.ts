/**
 * A key whose day is spent is told the same thing by the gateway as by the function: its day limit, nothing left,
 * the end of its UTC day and the seconds until then, where the gateway used to say `0`, `0` and an hour. Over HTTP
 * through the local gateway with the template's authorizer cache (60 s), as deployed: the first refused request
 * reaches the function, which records the spent day; once the cached Allow expires, the authorizer counts the key on
 * the spent-keys API key and its Allow carries those values for the QUOTA_EXCEEDED response to map.
 */
import { expect, it } from 'vitest';
import { PLANS } from '../../contract/plans.ts';
import { cachedAdminFixture, setDayCounters } from '../helpers/key-standing.ts';

const fixture = cachedAdminFixture('pro');
const perDay = PLANS.pro.limits!.perDay;

interface Seen {
  readonly code: string;
  readonly message: string;
  readonly headers: Record<string, string | null>;
}

async function call(atMs: number): Promise<Seen> {
  fixture.api.clock.set(() => atMs);
  const res = await fixture.api.call('/pets?limit=1', { key: fixture.key });
  const body = (await res.json()) as { code: string; message: string };
  const h = (name: string) => res.headers.get(name);
  return {
    code: `${res.status} ${body.code}`,
    message: body.message,
    headers: {
      'X-RateLimit-Limit': h('x-ratelimit-limit'),
      'X-RateLimit-Remaining': h('x-ratelimit-remaining'),
      'X-RateLimit-Reset': h('x-ratelimit-reset'),
      'Retry-After': h('retry-after'),
    },
  };
}

/** The function's quota_exceeded names the limit in its message; the gateway's does not (it has no limiter). */
const byFunction = (s: Seen) => s.message.startsWith(`Daily quota of ${perDay} requests exceeded`);

it("the gateway's 429 for a spent day carries the function's exact headers", async () => {
  const noon = Date.UTC(2034, 4, 6, 12, 0, 0);
  const dayEnd = Date.UTC(2034, 4, 7) / 1000;
  await setDayCounters(fixture.api, fixture.keyId, noon, { d: perDay });

  // The first refused request reaches the function (the gateway does not know yet): its limiter answers exactly.
  const fromFunction = await call(noon);
  expect(fromFunction.code).toBe('429 quota_exceeded');
  expect(byFunction(fromFunction), fromFunction.message).toBe(true);
  expect(fromFunction.headers).toEqual({
    'X-RateLimit-Limit': String(perDay),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': String(dayEnd),
    'Retry-After': String(dayEnd - noon / 1000),
  });

  // Once the cached Allow expires, the gateway refuses the key (the spent-keys usage plan admits at most the day's
  // first request of all spent keys, which the function refuses again): its answer is the function's, a minute on.
  const later = noon + 61_000;
  let fromGateway: Seen | undefined;
  for (let i = 0; i < 3 && !fromGateway; i++) {
    const seen = await call(later);
    expect(seen.code).toBe('429 quota_exceeded');
    if (!byFunction(seen)) fromGateway = seen;
  }
  expect(fromGateway, 'the gateway refused the key').toBeDefined();
  expect(fromGateway!.headers).toEqual({
    ...fromFunction.headers,
    'Retry-After': String(Number(fromFunction.headers['Retry-After']) - 61),
  });
  expect(fromGateway!.headers['Retry-After']).toBe(String(dayEnd - later / 1000));
}, 120_000);
