/**
 * Counts DynamoDB requests made through clients and sums their consumed capacity: an SDK middleware that asks
 * every request for ReturnConsumedCapacity TOTAL and records command, table, capacity and Scan/Query counts.
 * It sits at the initialize step, so it counts logical calls (SDK retries of one call are not counted again).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { tableKey } from '../../contract/tables.ts';
import { SEED_PLAN } from './seed.ts';

export interface MeteredCall {
  readonly command: string;
  readonly table: string;
  /**
   * The state-table item's key prefix (`rl` limiter, `ids` id counter), when the key is known; `auth` for the keys
   * the authorizer reads; else the table's key in the storage's names (`pets`: ITEM_ROLES).
   */
  readonly role: string;
  /** The item's partition key, when the call names one item. */
  readonly pk?: string;
  readonly capacity: number;
  readonly scanned?: number;
  readonly count?: number;
  readonly failed?: string;
}

export interface Meter {
  calls: MeteredCall[];
  reset(): void;
}

function pkOf(key: unknown): string | undefined {
  const pk = (key as { pk?: unknown } | undefined)?.pk;
  return typeof pk === 'string' ? pk : (pk as { S?: string } | undefined)?.S;
}

/** The role of a request on each declared table (by its local physical name's end, `-<id>`), from the seed plan. */
const TABLE_ROLES = SEED_PLAN.map((s) => ({
  suffix: `-${s.table.id}`,
  role: s.kind === 'keys' ? 'auth' : tableKey(s.table),
}));
/** The roles of the tables of items (bench/lib/seed.ts): an operation's own requests, as against auth and limiter. */
export const ITEM_ROLES: ReadonlySet<string> = new Set(
  SEED_PLAN.filter((s) => s.kind === 'items').map((s) => tableKey(s.table)),
);

function roleOf(table: string, key: unknown): string {
  const s = pkOf(key);
  if (s) return s.split('#')[0]!;
  return TABLE_ROLES.find((t) => table.endsWith(t.suffix))?.role ?? table;
}

/** One meter over several clients (each function of the local API has its own). */
export function attachMeter(clients: readonly DynamoDBClient[]): Meter {
  const meter: Meter = {
    calls: [],
    reset() {
      this.calls = [];
    },
  };
  for (const client of clients)
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, unknown>;
        input.ReturnConsumedCapacity = 'TOTAL';
        const batch = input.RequestItems as Record<string, unknown> | undefined;
        const table = String(input.TableName ?? (batch ? Object.keys(batch).join('+') : 'transaction'));
        const base = {
          command: context.commandName ?? '?',
          table,
          // A batch read of a key and its standing is the authorizer's lookup, part of authorizing the call.
          role:
            batch && Object.keys(batch).some((t) => roleOf(t, undefined) === 'auth')
              ? 'auth'
              : roleOf(table, input.Key),
          pk: pkOf(input.Key),
        };
        try {
          const r = await next(args);
          const out = r.output as {
            ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }>;
            ScannedCount?: number;
            Count?: number;
          };
          meter.calls.push({
            ...base,
            // One entry per table for a batch or a transaction.
            capacity: [out.ConsumedCapacity ?? []].flat().reduce((a, c) => a + (c.CapacityUnits ?? 0), 0),
            scanned: out.ScannedCount,
            count: out.Count,
          });
          return r;
        } catch (err) {
          meter.calls.push({ ...base, capacity: 0, failed: (err as Error).name });
          throw err;
        }
      },
      { step: 'initialize', name: 'benchMeter', override: true },
    );
  return meter;
}
