/**
 * The smoke's write checks that follow from the route table: each create (with `--write`) sends its route entry's
 * example and reads what it made back at its Location, so a new resource is smoke-tested with no edit. createPet
 * has a check of its own (checks.ts: with an Idempotency-Key, through the typed client's own method).
 */
import { BASE_PATH, createAndRead } from '../../contract/routes.ts';
import type { Check } from './checks.ts';
import { fail } from './probe.ts';

/** Creates checked by hand in checks.ts. */
const OWN_CHECK: readonly string[] = ['createPet'];

type Raw = (path: string, init: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export const ROUTE_WRITE_CHECKS: readonly Check[] = createAndRead()
  .filter(({ create }) => !OWN_CHECK.includes(create.operationId))
  .map(({ create, read }) => ({
    name: `${create.operationId} and read-back (${read.operationId})`,
    writes: true,
    async run(ctx) {
      if (create.example === undefined) fail(`${create.operationId} has no example on its route entry to send`);
      const raw = ctx.client.raw as unknown as Record<'POST' | 'GET', Raw>;
      const made = await raw.POST(create.path, { body: create.example });
      const location = made.response.headers.get('Location') ?? '';
      if (made.response.status !== 201) fail(`create: expected 201, got ${made.response.status}`);
      if (!location.startsWith(`${BASE_PATH}/`)) fail(`create: Location is "${location}"`);
      const param = /\{(\w+)\}$/.exec(read.path)![1]!;
      const got = await raw.GET(read.path, { params: { path: { [param]: location.split('/').pop() } } });
      if (got.response.status !== 200) fail(`read-back of ${location}: got ${got.response.status}`);
      if (JSON.stringify(got.data) !== JSON.stringify(made.data))
        fail(`read-back of ${location}: ${JSON.stringify(got.data)}, created ${JSON.stringify(made.data)}`);
      return `created at ${location}, read back`;
    },
  }));
