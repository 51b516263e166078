/**
 * The request's deadline cuts off real SDK calls (lambdas/storage/client.ts `guarded`): a DynamoDB request still
 * unanswered, or one the SDK is between attempts of, ends as a 503 at the deadline, well before the client's own
 * timeout (8 s here), so the function answers instead of Lambda ending it silently. On DynamoDB Local through the
 * fault proxy, with the SDK's own retry and HTTP handler: the signal's form is the one the SDK reads without an event
 * listener, and an SDK that stopped reading it would fail here.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { UnavailableError } from '../../lambdas/domain/errors.ts';
import { withDeadline } from '../../lambdas/storage/deadline.ts';
import { guarded, type Storage } from '../../lambdas/storage/client.ts';
import { localStorage, provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { uniquePrefix } from '../helpers/api.ts';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.ts';

let proxy: FaultProxy;
let storage: Storage;
let counter = 0;

beforeAll(async () => {
  proxy = await startFaultProxy(inject('dynamoEndpoint'));
  storage = localStorage(proxy.url, await provisionLocalTables(inject('dynamoEndpoint'), uniquePrefix()));
});
afterAll(async () => {
  storage?.ddb.destroy();
  await proxy?.close();
});

/** A read of an item of its own (so a rule picks only its requests), inside a request with `ms` left. */
const readWithin = (ms: number) => {
  const id = 900_000_000 + ++counter;
  const read = async () => {
    const started = performance.now();
    const outcome = await withDeadline(ms, () =>
      guarded((options) => storage.doc.send(new GetCommand({ TableName: storage.tables.pets, Key: { id } }), options)),
    ).catch((e: unknown) => e);
    return { outcome, tookMs: performance.now() - started };
  };
  return { body: `"N":"${id}"`, read };
};
/** The deadline (300 ms after the 1 s cleanup reserve) ended it, not the client's own 8 s timeout. */
const endedAtDeadline = ({ outcome, tookMs }: { outcome: unknown; tookMs: number }) => {
  expect(outcome).toBeInstanceOf(UnavailableError);
  expect((outcome as UnavailableError).cause).toBe('Deadline');
  expect(tookMs).toBeLessThan(2_000);
};
const reads = (body: string) => proxy.log.filter((r) => r.target === 'GetItem' && r.body.includes(body));

describe('a request deadline over real SDK calls', () => {
  it('ends an unanswered request at the deadline: 503 Deadline, not resent', async () => {
    const { body, read } = readWithin(1_300);
    proxy.add({ target: 'GetItem', body, fault: { kind: 'hang' } });
    endedAtDeadline(await read());
    expect(reads(body)).toHaveLength(1);
  });

  it('ends a call the SDK is retrying, between or during its attempts', async () => {
    const { body, read } = readWithin(1_300);
    proxy.add({
      target: 'GetItem',
      body,
      times: 1,
      fault: { kind: 'error', status: 400, type: 'ThrottlingException' },
    });
    proxy.add({ target: 'GetItem', body, fault: { kind: 'hang' } });
    endedAtDeadline(await read());
    expect(reads(body).length).toBeLessThanOrEqual(2);
  });

  it('leaves a call that answered in time alone: its item, and no abort after it', async () => {
    const { read } = readWithin(1_300);
    const { outcome } = await read();
    expect(outcome).toEqual(expect.objectContaining({ $metadata: expect.objectContaining({ httpStatusCode: 200 }) }));
  });
});
