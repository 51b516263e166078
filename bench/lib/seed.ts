/**
 * Seeds tables directly (its own client, so the request meter never sees it): every declared table gets what its
 * declaration says it holds (seedPlanOf), and the bench's keys.
 *
 * A table keyed by a number the service assigns, with a create among the routes (a route that `creates`, answering
 * 201, whose access puts items in it), holds items: each is the create's sample body made into the record its success schema describes
 * (contract/schemas.ts), with a seeded id, each enum field (an index's key, as pets' status) taken in rotation, and a
 * field neither gives from its documented example or default. No field is listed here: a new resource's table, or a
 * field a schema gains, is seeded with no edit. A table the authorizer reads and no operation writes holds the
 * bench's keys (seedKey, per phase); any other (the state table: the functions write its items on demand; the
 * admin's audit: no function reads it) is left empty, and the plan says why.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import * as z from 'zod/mini';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { AUTHORIZER, ROUTES, type Route } from '../../contract/routes.ts';
import { TABLES, type TableDefinition } from '../../contract/tables.ts';
import type { PlanLimits, PlanName } from '../../contract/plans.ts';
import { rangeWriter, type RangeWriter } from './batch-write.ts';
import { BENCH_AUTH } from './events.ts';

/** Seeded items get ids from here up, far above the id allocator's blocks, so creates never collide with them. */
export const SEED_ID_BASE = 1_000_000_000;
export const seededId = (i: number) => SEED_ID_BASE + i;

/** What the bench puts in a table, from its declaration. */
export type TableSeed =
  | {
      readonly table: TableDefinition;
      readonly kind: 'items';
      /** The create whose sample and success schema make the items. */
      readonly create: string;
      /** The i-th item, keyed seededId(i). */
      readonly item: (i: number) => Record<string, unknown>;
      readonly write: RangeWriter;
    }
  | { readonly table: TableDefinition; readonly kind: 'keys' }
  | { readonly table: TableDefinition; readonly kind: 'none'; readonly why: string };

type Json = {
  $ref?: string;
  $defs?: Record<string, Json>;
  properties?: Record<string, Json>;
  required?: string[];
  enum?: unknown[];
  example?: unknown;
  examples?: unknown[];
  default?: unknown;
};

/** A schema's JSON Schema with its `$ref`s to its own `$defs` followed. */
function resolved(root: Json, s: Json): Json {
  const ref = s.$ref?.replace(/^#\/\$defs\//, '');
  return ref !== undefined && root.$defs?.[ref] ? resolved(root, root.$defs[ref]) : s;
}

/** The i-th item of a create's table: its sample body made into the record its success schema describes. */
function itemMaker(table: TableDefinition, create: Route): (i: number) => Record<string, unknown> {
  const schema = create.success?.schema as z.ZodMiniType;
  const root = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' }) as Json;
  const record = resolved(root, root);
  const sample = (create.sample?.body ?? {}) as Record<string, unknown>;
  const key = table.partitionKey.name;
  const fields = Object.entries(record.properties ?? {}).map(([name, s]) => {
    const field = resolved(root, s);
    if (name === key) return { name, value: (i: number) => seededId(i) };
    const values = field.enum;
    if (values?.length) return { name, value: (i: number) => values[i % values.length] };
    const value = sample[name] ?? field.example ?? field.examples?.[0] ?? field.default;
    if (value === undefined && record.required?.includes(name))
      throw new Error(
        `${table.id}: ${create.operationId}'s sample, example and default give no value for the required field ${name}: give its schema an example`,
      );
    return { name, value: () => value };
  });
  const item = (i: number) =>
    Object.fromEntries(fields.flatMap((f) => (f.value(i) === undefined ? [] : [[f.name, f.value(i)]])));
  // Refused by the schema (a rule the sample does not meet, a partition key the record does not have): say so now.
  const check = (schema as unknown as { safeParse(v: unknown): { success: boolean; error?: unknown } }).safeParse(
    item(0),
  );
  if (!check.success)
    throw new Error(`${table.id}: a seeded item is not a valid ${create.operationId} answer: ${String(check.error)}`);
  if (!(key in item(0))) throw new Error(`${table.id}: ${create.operationId}'s answer has no ${key}, the table's key`);
  return item;
}

/** Whether a grant puts items in the table itself (not in one of its indexes). */
const putsIn = (route: Route, table: TableDefinition) =>
  route.access.tables.some((g) => g.table.id === table.id && !g.index && g.actions.includes('dynamodb:PutItem'));

const WRITES = new Set(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']);

/** What every declared table holds in the bench, from the declarations (see the file's comment). */
export function seedPlanOf(
  tables: readonly TableDefinition[] = TABLES,
  routes: readonly Route[] = ROUTES,
): TableSeed[] {
  const authorizer = new Set<string>(AUTHORIZER.access.tables.map((g) => g.table.id));
  return tables.map((table): TableSeed => {
    const create = routes.find((r) => r.does === 'creates' && r.success?.status === 201 && putsIn(r, table));
    if (table.partitionKey.type === 'N' && create?.success?.schema) {
      const item = itemMaker(table, create);
      return {
        table,
        kind: 'items',
        create: create.operationId,
        item,
        write: rangeWriter((i) => marshall(item(i), { removeUndefinedValues: true })),
      };
    }
    const grants = routes.flatMap((r) => r.access.tables.filter((g) => g.table.id === table.id));
    const written = grants.some((g) => g.actions.some((a) => WRITES.has(a)));
    // What the authorizer reads and no operation writes is the admin tool's: the keys, which each phase seeds.
    if (authorizer.has(table.id) && !written) return { table, kind: 'keys' };
    return {
      table,
      kind: 'none',
      why: written
        ? 'the functions write its items on demand'
        : authorizer.has(table.id) || grants.length
          ? 'no create makes its items'
          : 'no function reads it',
    };
  });
}

export const SEED_PLAN: readonly TableSeed[] = seedPlanOf();

/**
 * Writes items [from, to) to every table of the plan that holds items (ids seededId(i)), 25 per BatchWrite;
 * resolves to the milliseconds it took. A sample's EXISTING_ITEM is seededId(n) for any n below `to`, in any table.
 */
export async function seedItems(
  client: DynamoDBClient,
  tableEnv: Readonly<Record<string, string | undefined>>,
  from: number,
  to: number,
  plan: readonly TableSeed[] = SEED_PLAN,
): Promise<number> {
  const t0 = performance.now();
  for (const s of plan) if (s.kind === 'items') await s.write(client, tableEnv[s.table.envVar]!, from, to);
  return performance.now() - t0;
}

/**
 * An Enterprise key at the whole account's rate (600,000/min, the most shards a key has), which no benchmark reaches:
 * the limiter never rejects.
 */
export async function seedBenchKey(client: DynamoDBClient, keysTable: string, key: string): Promise<void> {
  await seedKey(client, keysTable, key, {
    keyId: BENCH_AUTH.keyId,
    plan: BENCH_AUTH.plan,
    limits: { perMinute: BENCH_AUTH.perMinute, perDay: BENCH_AUTH.perDay },
  });
}

/** An active key record; `limits` only for Enterprise (a standard plan's come from contract/plans.ts). */
export async function seedKey(
  client: DynamoDBClient,
  keysTable: string,
  key: string,
  record: { keyId: string; plan: PlanName; limits?: PlanLimits },
): Promise<void> {
  await DynamoDBDocumentClient.from(client).send(
    new PutCommand({
      TableName: keysTable,
      Item: {
        hash: hashKey(key),
        keyId: record.keyId,
        owner: 'bench',
        plan: record.plan,
        ...(record.limits ? { limits: record.limits } : {}),
        status: 'active',
        createdAt: new Date().toISOString(),
      },
    }),
  );
}
