/**
 * Each sample request owns its data (test/helpers/samples.ts): a request that names a pet names one made for it
 * alone, so a destructive operation's sample (a DELETE) cannot break another sample, or another test's fixtures.
 */
import { expect, it } from 'vitest';
import { ROUTES } from '../../contract/routes.ts';
import { OPERATION_SAMPLES, sampleRequests } from '../helpers/samples.ts';

it('gives every sample request that names a pet a pet of its own, every time it is made', async () => {
  let made = 0;
  const fixtures = { newPet: async () => 1000 + made++ };
  const first = await sampleRequests(fixtures);
  const second = await sampleRequests(fixtures);
  const naming = ROUTES.filter((r) => 'params' in OPERATION_SAMPLES[r.operationId]).length;
  expect(naming).toBeGreaterThan(0);
  expect(made).toBe(2 * naming);
  const named = [...first, ...second].flatMap((r) => Object.values(r.pathParameters));
  expect(new Set(named).size).toBe(named.length);
});
