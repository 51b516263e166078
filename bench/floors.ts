/**
 * Each operation's floor: the DynamoDB work its function does for one request, written as directly as it can be, and
 * the request schemas it checks first. The three floors run these (bench/floor-handler.ts cold,
 * bench/floor-warm-handler.ts warm in process, bench/floor-server.ts behind plain node:http), each around them with
 * its own limiter's count: a read's request starts beside the count, a write's waits for it to admit (as
 * lambdas/shared/admission.ts). Keyed by operationId, so the compiler names the one place a new operation needs its
 * floor; everything else the bench does for it (its cells, its seed, its route in the floor server) follows from the
 * route table and the table declarations.
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { OperationId } from '../contract/routes.ts';
import { TABLES, tableKey, type TableDefinition, type TableKey } from '../contract/tables.ts';
import { createItemCommand, listPetsCommand } from './floor-requests.ts';

/** A request as the floor is given it: path parameters and query as strings, the body as parsed JSON. */
export interface FloorRequest {
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  readonly body: unknown;
  /** The calling key's id, as the authorizer's context names it. */
  readonly keyId: string;
}

export interface FloorDeps {
  readonly doc: DynamoDBDocumentClient;
  /** Every declared table's physical name, by its key in the storage's names (`pets`, `state`). */
  readonly tables: Readonly<Record<TableKey, string>>;
  /** An id for a new item, from a range of the floor's own (far from the allocator's and the seeded ones). */
  newId(): Promise<number>;
}

export interface FloorAnswer {
  readonly status: number;
  readonly body: unknown;
}

export interface OperationFloor {
  /**
   * Checks the request as the function's envelope does, with schemas as light as the library allows (the Lambda
   * floors call it; the node:http floor, which carries no validation library, does not).
   */
  readonly check?: (req: FloorRequest) => void;
  /** Its work waits for the limiter to admit the request (a write, or nothing to do); a read starts beside it. */
  readonly afterCount?: boolean;
  /** It takes a JSON body: the Lambda floors run the body parser, as the function's envelope does. */
  readonly jsonBody?: boolean;
  /**
   * It makes an item under an id the service assigns: the cold floor reserves an id block at init, as the allocator
   * does.
   */
  readonly assignsIds?: boolean;
  readonly run: (req: FloorRequest, deps: FloorDeps) => Promise<FloorAnswer>;
}

/** Every declared table's physical name from its variable (`PETS_TABLE_NAME`), by its key in the storage's names. */
export const tablesIn = (
  from: Readonly<Record<string, string | undefined>>,
  tables: readonly TableDefinition[] = TABLES,
) => Object.fromEntries(tables.map((t) => [tableKey(t), from[t.envVar] ?? ''])) as Record<TableKey, string>;

const Status = z.enum(['available', 'pending', 'sold']);
// Not strict: the floor is a baseline, not the contract, so a field added to the contract's NewPet (and its sample)
// must not make the floor refuse the sample and force an edit here.
const NewPet = z.object({
  name: z.string().check(z.minLength(1), z.maxLength(200)),
  categoryId: z.int().check(z.minimum(1)),
  status: z.optional(Status),
});
const PetId = z.object({ petId: z.string().check(z.regex(/^[1-9][0-9]{0,15}$/)) });
const Limit = z.optional(z.string().check(z.regex(/^[0-9]+$/)));
const ListQuery = z.object({ limit: Limit, status: z.optional(Status) });

const found = (item: unknown): FloorAnswer =>
  item ? { status: 200, body: item } : { status: 404, body: { code: 'not_found' } };

/** Every operation's floor: the compiler names a new operation's here (`satisfies Record<OperationId, …>`). */
export const FLOORS = {
  getPet: {
    check: (req) => void PetId.parse(req.params),
    run: async (req, { doc, tables }) =>
      found((await doc.send(new GetCommand({ TableName: tables.pets, Key: { id: Number(req.params.petId) } }))).Item),
  },
  listPets: {
    check: (req) => void ListQuery.parse(req.query),
    run: async (req, { doc, tables }) => {
      const out = await doc.send(listPetsCommand(tables.pets, Number(req.query.limit ?? 20), req.query.status));
      return { status: 200, body: out.Items ?? [] };
    },
  },
  createPet: {
    check: (req) => void NewPet.parse(req.body),
    afterCount: true,
    jsonBody: true,
    assignsIds: true,
    run: async (req, { doc, tables, newId }) => {
      const body = req.body as { status?: string };
      const id = await newId();
      const pet = { id, ...body, status: body.status ?? 'available' };
      await doc.send(createItemCommand(tables.pets, 'id', pet, req.keyId));
      return { status: 201, body: pet };
    },
  },
  listOrders: {
    afterCount: true,
    run: async () => ({ status: 501, body: { code: 'not_implemented' } }),
  },
} as const satisfies Record<OperationId, OperationFloor>;

/** The floor of an operation the bench names by id (FLOOR_OF); a name with none fails by name. */
export function floorOf(
  operationId: string,
  floors: Readonly<Record<string, OperationFloor>> = FLOORS,
): OperationFloor {
  const floor = floors[operationId];
  if (!floor) throw new Error(`no floor for ${operationId}: add it to FLOORS in bench/floors.ts`);
  return floor;
}

const RATE_LIMITED: FloorAnswer = { status: 429, body: { code: 'rate_limited' } };

/**
 * An operation's floor around the limiter's count (`admit`: false when a window is full): a read's request starts
 * beside the count, a write's waits for it to admit, as lambdas/shared/admission.ts orders them.
 */
export async function runFloor(
  floor: OperationFloor,
  req: FloorRequest,
  deps: FloorDeps,
  admit: () => Promise<boolean>,
): Promise<FloorAnswer> {
  if (floor.afterCount) return (await admit()) ? floor.run(req, deps) : RATE_LIMITED;
  const [admitted, answer] = await Promise.all([admit(), floor.run(req, deps)]);
  return admitted ? answer : RATE_LIMITED;
}
