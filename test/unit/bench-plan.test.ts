/**
 * The bench follows the declarations: a resource it was never edited for (a `Kennels` table, `POST /v1/kennels`
 * and `GET /v1/kennels/{kennelId}`, declared here as a developer would declare them in contract/) gets its cells,
 * its table's seed and its route in the node:http floor from the route table and the table declarations alone. The
 * one addition the bench asks for is each operation's floor (bench/floors.ts, keyed by operationId: the compiler
 * names it). Then each cell's answers are checked against its route's status, on DynamoDB Local, as the bench
 * checks them: a cell answering otherwise is named, which fails the run. Names no real change would take (kennels,
 * not shelters), so a developer adding a resource of that name meets no clash here.
 */
import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import * as z from 'zod/mini';
import { LIMITER_GRANT } from '../../contract/operations/common.ts';
import { EXISTING_ITEM, ROUTES, type OperationId, type Route } from '../../contract/routes.ts';
import { meta } from '../../contract/schemas.ts';
import { TABLES, type TableDefinition } from '../../contract/tables.ts';
import { localClient, provisionLocalTables } from '../../lambdas/storage/provision.ts';
import { FLOORS, runFloor, tablesIn, type FloorDeps, type OperationFloor } from '../../bench/floors.ts';
import { createItemCommand } from '../../bench/floor-requests.ts';
import { answerBook } from '../../bench/lib/answers.ts';
import { MEASURED_BY, benchOpsOf, httpRequestOf } from '../../bench/lib/bench-ops.ts';
import { floorRouter } from '../../bench/lib/floor-router.ts';
import { seedItems, seedPlanOf, seededId } from '../../bench/lib/seed.ts';

// The declarations of a new resource, as they would be written in contract/tables.ts, schemas.ts and operations/.
const KENNELS_TABLE = {
  id: 'Kennels',
  envVar: 'KENNELS_TABLE_NAME',
  partitionKey: { name: 'id', type: 'N' },
  indexes: [{ indexName: 'byKind', partitionKey: { name: 'kind', type: 'S' }, sortKey: { name: 'id', type: 'N' } }],
} as const satisfies TableDefinition;
const NewKennel = z.strictObject({
  name: z.string().check(z.minLength(1)),
  kind: z.optional(z.enum(['rescue', 'sanctuary'])),
});
const Kennel = z.object({
  id: z.int().check(z.minimum(1)),
  name: z.string().check(z.minLength(1)),
  kind: z.enum(['rescue', 'sanctuary']),
  // Required in the answer, not in the create's sample: the seed takes it from its documented example.
  capacity: meta(z.int(), { example: 40 }),
});
const CREATE_KENNEL = {
  operationId: 'createKennel',
  method: 'POST',
  does: 'creates',
  path: '/kennels',
  summary: 'Add a kennel',
  request: { body: NewKennel },
  sample: { body: { name: 'Happy Paws' } },
  success: { status: 201, description: 'The kennel.', schema: Kennel },
  errors: [],
  access: { tables: [LIMITER_GRANT, { table: KENNELS_TABLE, actions: ['dynamodb:PutItem'] }] },
} as const satisfies Route;
const GET_KENNEL = {
  operationId: 'getKennel',
  method: 'GET',
  does: 'reads',
  path: '/kennels/{kennelId}',
  summary: 'Get a kennel',
  request: {},
  sample: { params: { kennelId: EXISTING_ITEM } },
  success: { status: 200, description: 'The kennel.', schema: Kennel },
  errors: [],
  access: { tables: [LIMITER_GRANT, { table: KENNELS_TABLE, actions: ['dynamodb:GetItem'] }] },
} as const satisfies Route;

const ROUTES_WITH_KENNELS: readonly Route[] = [...ROUTES, CREATE_KENNEL, GET_KENNEL];
const TABLES_WITH_KENNELS: readonly TableDefinition[] = [...TABLES, KENNELS_TABLE];

type Tables = FloorDeps['tables'] & { readonly kennels: string };
/** The only bench addition: the new operations' floors, as they would be added to FLOORS in bench/floors.ts. */
const KENNEL_FLOORS = {
  createKennel: {
    afterCount: true,
    jsonBody: true,
    assignsIds: true,
    run: async (req, { doc, tables, newId }) => {
      const kennel = { id: await newId(), kind: 'rescue', capacity: 40, ...(req.body as object) };
      await doc.send(createItemCommand((tables as Tables).kennels, 'id', kennel, req.keyId));
      return { status: 201, body: kennel };
    },
  },
  getKennel: {
    run: async (req, { doc, tables }) => {
      const Key = { id: Number(req.params.kennelId) };
      const out = await doc.send(new GetCommand({ TableName: (tables as Tables).kennels, Key }));
      return out.Item ? { status: 200, body: out.Item } : { status: 404, body: { code: 'not_found' } };
    },
  },
} as const satisfies Record<string, OperationFloor>;

// The compiler names the floor a new operation needs: FLOORS is checked against every OperationId.
// @ts-expect-error an operation the route table would list without its floor
const _withoutFloor: Record<OperationId | 'getKennel', OperationFloor> = FLOORS;
void _withoutFloor;

describe('a declared operation the bench was never edited for', () => {
  const ops = benchOpsOf(ROUTES_WITH_KENNELS);

  it('gets its cells in every phase, each expecting its route status', () => {
    const kennelOps = ops.filter((o) => o.route.operationId.endsWith('Kennel'));
    expect(kennelOps.map((o) => [o.op, o.expect, o.creates])).toEqual([
      ['createKennel', 201, true],
      ['getKennel', 200, false],
    ]);
    for (const measured of Object.values(MEASURED_BY))
      expect(ops.filter(measured).map((o) => o.op)).toEqual(expect.arrayContaining(['createKennel', 'getKennel']));
    // Its sample's EXISTING_ITEM names a seeded item, as every phase sends it.
    expect(httpRequestOf(kennelOps[1]!, seededId(42))).toEqual({ method: 'GET', path: '/kennels/1000000042' });
    expect(httpRequestOf(kennelOps[0]!, seededId(42))).toEqual({
      method: 'POST',
      path: '/kennels',
      body: '{"name":"Happy Paws"}',
    });
  });

  it('gets its table seeded from its create: the sample body made into the answer its schema describes', () => {
    const plan = seedPlanOf(TABLES_WITH_KENNELS, ROUTES_WITH_KENNELS);
    // Every table declared before keeps its seed, and the new one is seeded with items.
    expect(plan.map((s) => [s.table.id, s.kind])).toEqual([
      ...seedPlanOf().map((s) => [s.table.id, s.kind]),
      ['Kennels', 'items'],
    ]);
    const kennels = plan.find((s) => s.table.id === 'Kennels');
    if (kennels?.kind !== 'items') throw new Error('Kennels holds no items');
    expect(kennels.create).toBe('createKennel');
    // The key is the seeded id, an enum (an index's key) goes round its values, the rest is the sample's or the example.
    expect([0, 1].map(kennels.item)).toEqual([
      { id: seededId(0), name: 'Happy Paws', kind: 'rescue', capacity: 40 },
      { id: seededId(1), name: 'Happy Paws', kind: 'sanctuary', capacity: 40 },
    ]);
  });

  it('is refused by the node:http floor until its floor exists, naming the file, then routed by path and method', () => {
    expect(() => floorRouter(ROUTES_WITH_KENNELS, FLOORS)).toThrow(
      'no floor for createKennel, getKennel: add it to FLOORS in bench/floors.ts',
    );
    const route = floorRouter(ROUTES_WITH_KENNELS, { ...FLOORS, ...KENNEL_FLOORS });
    const get = route('GET', '/kennels/1000000042');
    expect('route' in get && [get.route.operationId, get.params, get.floor]).toEqual([
      'getKennel',
      { kennelId: '1000000042' },
      KENNEL_FLOORS.getKennel,
    ]);
    const create = route('POST', '/kennels');
    expect('route' in create && create.route.operationId).toBe('createKennel');
    // Every operation declared before is routed as before.
    for (const r of ROUTES) {
      const routed = route(r.method, r.path.replace(/\{\w+\}/g, '7'));
      expect('route' in routed && routed.route.operationId).toBe(r.operationId);
    }
    expect(route('DELETE', '/kennels/1')).toEqual({ status: 405 });
    expect(route('GET', '/cages')).toEqual({ status: 404 });
  });
});

describe("the new operation's cells on DynamoDB Local", () => {
  const prefix = `bench-plan-${process.pid}`;
  const client = localClient(inject('dynamoEndpoint'));
  const doc = DynamoDBDocumentClient.from(client);
  let tableEnv: Record<string, string>;
  const ops = benchOpsOf(ROUTES_WITH_KENNELS);
  const route = floorRouter(ROUTES_WITH_KENNELS, { ...FLOORS, ...KENNEL_FLOORS });
  let nextId = 3_000_000_000;

  /** One request of a bench op through the floor server's routing and its floor, as bench/floor-server.ts sends it. */
  async function send(op: string, env: Record<string, string>): Promise<number> {
    const o = ops.find((x) => x.op === op)!;
    const http = httpRequestOf(o, seededId(42));
    const url = new URL(http.path, 'http://floor');
    const routed = route(http.method, url.pathname);
    if ('status' in routed) return routed.status;
    const req = {
      params: routed.params,
      query: Object.fromEntries(url.searchParams),
      body: http.body === undefined ? undefined : (JSON.parse(http.body) as unknown),
      keyId: 'key_bench',
    };
    const deps = { doc, tables: tablesIn(env, TABLES_WITH_KENNELS), newId: async () => nextId++ };
    return (await runFloor(routed.floor, req, deps, async () => true)).status;
  }

  beforeAll(async () => {
    tableEnv = {
      ...(await provisionLocalTables(inject('dynamoEndpoint'), prefix)),
      // What provisioning does for every declared table, for the one this test declares.
      KENNELS_TABLE_NAME: `${prefix}-Kennels`,
    };
    await client.send(
      new CreateTableCommand({
        TableName: tableEnv.KENNELS_TABLE_NAME,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'id', AttributeType: 'N' },
          { AttributeName: 'kind', AttributeType: 'S' },
        ],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        GlobalSecondaryIndexes: [
          {
            IndexName: 'byKind',
            KeySchema: [
              { AttributeName: 'kind', KeyType: 'HASH' },
              { AttributeName: 'id', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
        ],
      }),
    );
  });
  afterAll(async () => {
    for (const name of Object.values(tableEnv ?? {}))
      await client.send(new DeleteTableCommand({ TableName: name })).catch(() => undefined);
    client.destroy();
  });

  it('answers the statuses its route expects once seeded, and a cell of an unseeded table is named', async () => {
    const book = answerBook();
    // Before the seed: the read names an item no table holds (the 404 a bench without the seed measured).
    book.answers('warm getKennel (before the seed)', 200, { [await send('getKennel', tableEnv)]: 1 });
    await seedItems(client, tableEnv, 0, 50, seedPlanOf(TABLES_WITH_KENNELS, ROUTES_WITH_KENNELS));
    for (const o of ops.filter(MEASURED_BY.warm))
      book.answers(`warm ${o.op}`, o.expect, { [await send(o.op, tableEnv)]: 1 });
    expect(book.unexpected).toEqual([
      { cell: 'warm getKennel (before the seed)', expected: '200', answers: { 404: 1 } },
    ]);
    // One cell per measured operation, and the one before the seed.
    const cells = ops.filter(MEASURED_BY.warm).length + 1;
    expect(book.failure()).toBe(
      `bench: 1 of ${cells} cells answered other than their route expects: warm getKennel (before the seed) (expected 200, got 404x1)`,
    );
    // The seeded kennel is what the floor read, and what the plan made.
    const seeded = await doc.send(
      new GetCommand({ TableName: tableEnv.KENNELS_TABLE_NAME, Key: { id: seededId(42) } }),
    );
    expect(seeded.Item).toEqual({ id: seededId(42), name: 'Happy Paws', kind: 'rescue', capacity: 40 });
  });
});
