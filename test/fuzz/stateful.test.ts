/**
 * A stateful property test (fast-check commands). Random sequences of create / get / list one page /
 * paginate to the end / invalid create run over HTTP against the local server (DynamoDB Local) and are compared
 * with an in-memory model; any divergence fails with the shrunk command sequence and the seed.
 *
 * The server's table lives across runs, so the model does too: it is the set of pets this file has created (its
 * tables are its own). Each run starts from the model as the previous run left it, which is exactly the real state.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  DEFAULT_PET_STATUS,
  NAME_MAX_LENGTH,
  PAGE_SIZE,
  PET_STATUSES,
  type NewPet,
  type Pet,
  type PetStatus,
} from '../../contract/schemas.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { nextLink } from './exchange.ts';
import { enterpriseKey } from './keys.ts';
import { oddString, validNewPetWith } from './arbitraries.ts';
import { NEW_PET_RULES, newPetProblem } from './oracle.ts';
import { CREATE_AND_READ, createBySample, readBack, type CreateAndRead, type Made } from './route-samples.ts';
import { PLACEHOLDER_FIXTURES, sampleRequest } from '../helpers/samples.ts';
import { ROUTES, type OperationId } from '../../contract/routes.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20_260_107);
const RUNS = Number(process.env.STATEFUL_RUNS ?? 60);

interface Model {
  readonly pets: Map<number, Pet>;
  /** What the route-table commands made (every create with a read: route-samples.ts), by Location. */
  readonly made: Made;
}
interface Real {
  readonly api: TestApi;
  readonly keys: { readonly reads: string; readonly writes: string };
}

let api: TestApi;
let keys: Real['keys'];
const model: Model = { pets: new Map(), made: new Map() };
/**
 * What a create of a resource this file models by hand also tells that model: the generic commands create pets too,
 * and the pets model must know every pet to judge a list.
 */
const ALSO_MODELLED: Partial<Record<OperationId, (m: Model, body: unknown) => void>> = {
  createPet: (m, body) => m.pets.set((body as Pet).id, body as Pet),
};
let requests = 0;

beforeAll(async () => {
  // Authorizer results cached as in the cloud; one key for reads, one for writes.
  api = await startTestApi({ authCacheTtlSeconds: 300 });
  keys = { reads: await enterpriseKey(api, 'stateful-reads'), writes: await enterpriseKey(api, 'stateful-writes') };
});
afterAll(async () => {
  console.info(`[stateful] ${requests} requests, model holds ${model.pets.size} pets`);
  await api?.close();
});

const get = async (r: Real, path: string) => {
  requests++;
  return r.api.call(path, { key: r.keys.reads });
};
const filtered = (m: Model, status?: PetStatus) => [...m.pets.values()].filter((p) => !status || p.status === status);
const query = (limit?: number, status?: PetStatus) =>
  new URLSearchParams({ ...(limit ? { limit: String(limit) } : {}), ...(status ? { status } : {}) }).toString();

class Create implements fc.AsyncCommand<Model, Real> {
  readonly input: NewPet;
  constructor(input: Create['input']) {
    this.input = input;
  }
  check = () => true;
  async run(m: Model, r: Real) {
    requests++;
    const res = await r.api.call('/pets', { method: 'POST', key: r.keys.writes, body: JSON.stringify(this.input) });
    const pet = (await res.json()) as Pet;
    if (res.status === 201) m.pets.set(pet.id, pet); // first, so the model stays in step even if a check below fails
    expect(res.status).toBe(201);
    // What was sent, with the id and default status the service gives: every field the schema has, none listed here.
    expect(pet).toEqual({ ...this.input, id: expect.any(Number), status: this.input.status ?? DEFAULT_PET_STATUS });
    expect(res.headers.get('location')).toBe(`/v1/pets/${pet.id}`);
  }
  toString = () => `Create(${JSON.stringify(this.input)})`;
}

class CreateInvalid implements fc.AsyncCommand<Model, Real> {
  readonly body: unknown;
  constructor(body: unknown) {
    this.body = body;
  }
  check = () => true;
  async run(m: Model, r: Real) {
    requests++;
    const res = await r.api.call('/pets', { method: 'POST', key: r.keys.writes, body: JSON.stringify(this.body) });
    if (res.status === 201) {
      const pet = (await res.json()) as Pet;
      m.pets.set(pet.id, pet);
    }
    expect(res.status).toBe(400);
  }
  toString = () => `CreateInvalid(${JSON.stringify(this.body)})`;
}

class Get implements fc.AsyncCommand<Model, Real> {
  readonly pick: number;
  readonly unknown: boolean;
  constructor(pick: number, unknown: boolean) {
    this.pick = pick;
    this.unknown = unknown;
  }
  check = (m: Readonly<Model>) => this.unknown || m.pets.size > 0;
  async run(m: Model, r: Real) {
    const ids = [...m.pets.keys()];
    const id = this.unknown ? Math.max(0, ...ids) + 1 + this.pick : ids[this.pick % ids.length]!;
    const res = await get(r, `/pets/${id}`);
    const body = await res.json();
    if (m.pets.has(id)) {
      expect(res.status).toBe(200);
      expect(body).toEqual(m.pets.get(id));
    } else {
      expect(res.status).toBe(404);
    }
  }
  toString = () => `Get(${this.unknown ? `unknown+${this.pick}` : `#${this.pick}`})`;
}

/** One page: at most `limit` pets, all known and as the model has them; no Link only if nothing else matches. */
class ListPage implements fc.AsyncCommand<Model, Real> {
  readonly limit: number | undefined;
  readonly status: PetStatus | undefined;
  constructor(limit: number | undefined, status: PetStatus | undefined) {
    this.limit = limit;
    this.status = status;
  }
  check = () => true;
  async run(m: Model, r: Real) {
    const res = await get(r, `/pets?${query(this.limit, this.status)}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as Pet[];
    const expected = filtered(m, this.status);
    const max = this.limit ?? PAGE_SIZE.default;
    expect(page.length).toBeLessThanOrEqual(max);
    for (const p of page) expect(p).toEqual(m.pets.get(p.id));
    if (!nextLink(res.headers)) expect(page.length, 'a last page holds everything that matches').toBe(expected.length);
    if (expected.length > max) expect(nextLink(res.headers), 'more pets match than fit: a next page').toBeDefined();
  }
  toString = () => `ListPage(limit=${this.limit}, status=${this.status})`;
}

/** Every page to the end: each matching pet exactly once, nothing else. */
class Paginate implements fc.AsyncCommand<Model, Real> {
  readonly limit: number;
  readonly status: PetStatus | undefined;
  constructor(limit: number, status: PetStatus | undefined) {
    this.limit = limit;
    this.status = status;
  }
  check = () => true;
  async run(m: Model, r: Real) {
    const seen: Pet[] = [];
    let path: string | undefined = `/pets?${query(this.limit, this.status)}`;
    for (let pages = 0; path; pages++) {
      expect(pages, 'pagination terminates').toBeLessThanOrEqual(m.pets.size + 1);
      const res = await get(r, path);
      expect(res.status).toBe(200);
      const page = (await res.json()) as Pet[];
      expect(page.length).toBeLessThanOrEqual(this.limit);
      seen.push(...page);
      path = nextLink(res.headers);
    }
    const ids = seen.map((p) => p.id).sort((a, b) => a - b);
    expect(ids, 'each matching pet exactly once').toEqual(
      filtered(m, this.status)
        .map((p) => p.id)
        .sort((a, b) => a - b),
    );
    for (const p of seen) expect(p).toEqual(m.pets.get(p.id));
  }
  toString = () => `Paginate(limit=${this.limit}, status=${this.status})`;
}

const status = fc.option(fc.constantFrom(...PET_STATUSES), { nil: undefined });
const validInput = validNewPetWith({
  name: fc
    .oneof(oddString, fc.string({ minLength: NAME_MAX_LENGTH - 1, maxLength: NAME_MAX_LENGTH }))
    .filter((s) => NEW_PET_RULES.name.problem(s) === undefined),
  categoryId: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
});
const invalidInput = fc
  .oneof(
    validInput.map((p) => ({ ...p, categoryId: String(p.categoryId) })),
    validInput.map((p) => ({ ...p, status: 'lost' })),
    validInput.map((p) => ({ categoryId: p.categoryId })),
    fc.constant({ name: '\ud800', categoryId: 1 }),
    fc.constant({ name: 'x'.repeat(NAME_MAX_LENGTH + 1), categoryId: 1 }),
  )
  .filter((b) => newPetProblem(b) !== undefined);

type Cmd = fc.AsyncCommand<Model, Real>;

/** Any resource's create (its sample) and read back, from the route table: a new one is modelled with no edit. */
const createByRoute = ({ create }: CreateAndRead): Cmd => ({
  check: () => true,
  async run(m, r) {
    requests++;
    // A create's sample names nothing (it is made afresh: a new Idempotency-Key each time, a create of its own).
    const sample = await sampleRequest(
      ROUTES.find((x) => x.operationId === create)!,
      PLACEHOLDER_FIXTURES,
    );
    ALSO_MODELLED[create]?.(m, await createBySample(r.api, r.keys.writes, sample, m.made));
  },
  toString: () => `CreateByRoute(${create})`,
});
const readByRoute = (pick: number | undefined): Cmd => ({
  check: (m) => m.made.size > 0,
  async run(m, r) {
    requests++;
    await readBack(r.api, r.keys.reads, m.made, pick);
  },
  toString: () => `ReadByRoute(${pick ?? 'unknown'})`,
});

const command: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 5, arbitrary: validInput.map((i): Cmd => new Create(i)) },
  { weight: 1, arbitrary: invalidInput.map((b): Cmd => new CreateInvalid(b)) },
  { weight: 3, arbitrary: fc.tuple(fc.nat(), fc.boolean()).map(([n, u]): Cmd => new Get(n, u)) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }), status)
      .map(([l, s]): Cmd => new ListPage(l, s)),
  },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(3, 10, 25, 100), status).map(([l, s]): Cmd => new Paginate(l, s)) },
  { weight: 2, arbitrary: fc.constantFrom(...CREATE_AND_READ).map(createByRoute) },
  { weight: 2, arbitrary: fc.option(fc.nat(), { nil: undefined }).map(readByRoute) },
);

it('create / get / list / paginate sequences agree with an in-memory model', async () => {
  const started = Date.now();
  await fc.assert(
    fc.asyncProperty(fc.commands([command], { maxCommands: 30 }), (cmds) =>
      fc.asyncModelRun(() => ({ model, real: { api, keys } }), cmds),
    ),
    { seed: SEED, numRuns: RUNS, verbose: 1 },
  );
  console.info(`[stateful] ${RUNS} runs in ${((Date.now() - started) / 1000).toFixed(1)} s (seed ${SEED})`);
}, 120_000);
