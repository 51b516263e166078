/**
 * The infrastructure tests hold no hand-written copy of today's world: every table, index, operation and route they
 * check comes from the declarations (contract/tables.ts, contract/routes.ts and the operations it lists), so a new
 * table or operation is checked with no edit to them, and a renamed one cannot leave a test checking the old name.
 * This reads every file under test/infra for the names the declarations define and fails naming file:line for each
 * literal one. The names come from the declarations themselves, so a new declaration is guarded with no edit here.
 * Comments count too: one naming a table or an operation describes a world the test no longer pins.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../contract/routes.ts';
import { TABLES } from '../../contract/tables.ts';
import { existingTableContextKey } from '../../lib/config/stages.ts';
import { functionConstructId } from '../../lib/stacks/function-access.ts';
import { tableNameOutputId } from '../../lib/stacks/outputs.ts';

const INFRA = fileURLToPath(new URL('../infra/', import.meta.url));

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A declared name, as an identifier or the start of one: `Pets` also finds `PetsTable` and `Data/Pets` (logical ids
 * and construct paths are built from it), `ListPets` finds `ListPetsLiveB612E50C`, but `State` does not find
 * `Statement` nor `StateMachine`'s lowercase neighbours.
 */
const asName = (name: string) => new RegExp(`(?<![A-Za-z0-9_$])${escape(name)}(?![a-z0-9_])`);

/**
 * A route's path written out (its segments before the first parameter), right after a quote, the base path or a
 * method (an execute-api ARN's `/GET/...`).
 */
const asPath = (fixed: string) => new RegExp(`(?:['"\`]|/v1|/[A-Z]+)${escape(fixed)}(?![\\w-])`);

interface Forbidden {
  readonly what: string;
  readonly pattern: RegExp;
}

/** Every name the declarations define that a test could write by hand. */
const FORBIDDEN: readonly Forbidden[] = [
  ...TABLES.flatMap((t) => [
    { what: `table ${t.id} (and its logical ids)`, pattern: asName(t.id) },
    { what: `table ${t.id}'s variable`, pattern: asName(t.envVar) },
    { what: `table ${t.id}'s stack output`, pattern: asName(tableNameOutputId(t)) },
    // The context key that points a stage at an existing table (`-c animal-store:<stage>:<id>TableName=`).
    {
      what: `table ${t.id}'s context key`,
      pattern: asName(existingTableContextKey('staging', t.id).split(':').pop()!),
    },
    ...t.indexes.map((i) => ({ what: `index ${i.indexName} of ${t.id}`, pattern: asName(i.indexName) })),
  ]),
  ...ROUTES.flatMap((r) => [
    { what: `operation ${r.operationId}`, pattern: asName(r.operationId) },
    {
      what: `operation ${r.operationId}'s function (${functionConstructId(r.operationId)}...)`,
      pattern: asName(functionConstructId(r.operationId)),
    },
  ]),
  // A route's fixed part once, however many operations share it (`/pets` for the list and the create).
  ...[...new Set(ROUTES.map((r) => r.path.split('/{')[0]!))].map((fixed) => ({
    what: `route ${fixed}`,
    pattern: asPath(fixed),
  })),
];

const files = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|mjs|js|json)$/.test(f))
    .map((f) => join(dir, f));

/** Each literal occurrence as `file:line: what (the line)`. */
function namesIn(file: string, text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, i) =>
      FORBIDDEN.filter(({ pattern }) => pattern.test(line)).map(
        ({ what }) => `test/infra/${file}:${i + 1}: ${what}: ${line.trim().slice(0, 100)}`,
      ),
    );
}

describe('test/infra derives what it checks from the declarations', () => {
  it('the guard knows every table, index and operation, and finds a name written out', () => {
    expect(FORBIDDEN.length).toBeGreaterThanOrEqual(TABLES.length * 4 + ROUTES.length * 2);
    const [table] = TABLES;
    const [route] = ROUTES;
    expect(namesIn('x.ts', `const id = '${table.id}Table';`)).toHaveLength(1);
    expect(namesIn('x.ts', `find((r) => r.operationId === '${route.operationId}')`)).toHaveLength(1);
    expect(namesIn('x.ts', `t.Resources.${functionConstructId(route.operationId)}LiveAlias12345678`)).toHaveLength(1);
    expect(namesIn('x.ts', `await call('${route.path.split('/{')[0]}?limit=1')`).length).toBeGreaterThanOrEqual(1);
    expect(namesIn('x.ts', `const id = tableLogicalIdOf(def); // derived`)).toEqual([]);
  });

  it('names no table, logical id, index, operation or route in any file under test/infra', () => {
    const all = files(INFRA);
    expect(all.length).toBeGreaterThan(20);
    const found = all.flatMap((path) => namesIn(path.slice(INFRA.length), readFileSync(path, 'utf8')));
    expect(found, found.join('\n')).toEqual([]);
  });
});
