/**
 * Each sample request owns its data (test/helpers/samples.ts): a request that names a pet names one made for it
 * alone, so a destructive operation's sample (a DELETE) cannot break another sample, or another test's fixtures.
 */
import { expect, it } from 'vitest';
import { ROUTES } from '../../contract/routes.ts';
import { createAnimalStoreClient } from '../../client/index.ts';
import { fieldsOf, isOptional } from '../../contract/request-fields.ts';
import {
  OPERATION_SAMPLES,
  PLACEHOLDER_FIXTURES,
  clientCall,
  proxyEventOf,
  requestInit,
  sampleRequests,
} from '../helpers/samples.ts';

it('gives every sample request that names a pet a pet of its own, every time it is made', async () => {
  let made = 0;
  const fixtures = { make: async () => 1000 + made++ };
  const first = await sampleRequests(fixtures);
  const second = await sampleRequests(fixtures);
  const naming = ROUTES.filter((r) => 'params' in OPERATION_SAMPLES[r.operationId]).length;
  expect(naming).toBeGreaterThan(0);
  expect(made).toBe(2 * naming);
  const named = [...first, ...second].flatMap((r) => Object.values(r.pathParameters));
  expect(new Set(named).size).toBe(named.length);
});

it('carries the request headers its operation declares (every required one), in the Lambda event, the HTTP request and the client call alike', async () => {
  let declared = 0;
  for (const r of await sampleRequests(PLACEHOLDER_FIXTURES)) {
    const route = ROUTES.find((x) => x.operationId === r.operationId)!;
    for (const [name, field] of Object.entries(fieldsOf(route.request.headers))) {
      // A required header is always sent; an optional one the sample may leave out (an If-Match it cannot know).
      if (isOptional(field) && !(name in r.headers)) continue;
      declared++;
      expect(r.headers[name], `${r.operationId} ${name}`).toBeDefined();
      expect(proxyEventOf(r, {}).multiValueHeaders[name]).toEqual([r.headers[name]]);
      expect(new Headers(requestInit(r, { key: 'k' }).headers).get(name)).toBe(r.headers[name]);
      const sent: Request[] = [];
      const capture = async (req: Request) => (sent.push(req), new Response(null, { status: 204 }));
      const client = createAnimalStoreClient({
        baseUrl: 'http://api.test/v1',
        apiKey: 'k',
        fetch: capture as typeof fetch,
        retry: { maxAttempts: 1 },
      });
      await clientCall(client, r);
      expect(sent.at(-1)!.headers.get(name)).toBe(r.headers[name]);
    }
  }
  expect(declared).toBeGreaterThan(0);
});
