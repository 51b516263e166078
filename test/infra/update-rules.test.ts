/**
 * The update rules on the changes CloudFormation refuses mid-update although no resource is replaced: a global
 * secondary index changed in place, renamed, or two created in one update of one table, and a `live` alias moved
 * to another logical id. Each previous template is the synthesized one, mutated as an earlier release would have
 * had it; the CLI (`npm run preflight -- --previous`) names each index and exits 1.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEPLOYED_LIVE_ALIAS_IDS, liveAliasLogicalId } from '../../lib/constructs/api-function.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { updateFindings } from '../../lib/preflight/update-rules.ts';
import {
  indexReadByAnOperation,
  indexWithSortKey,
  literally,
  operationFunction,
  tableWithIndexes,
} from './declared.ts';
import { preflightCli } from './preflight-cli.ts';
import { sharedTemplateJson } from './shared-synth.ts';

const dir = mkdtempSync(join(tmpdir(), 'animal-store-update-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let staging: CfnTemplate;
beforeAll(() => {
  staging = sharedTemplateJson('staging') as CfnTemplate;
}, 240_000);

// What the rules are tried on, picked from the declarations: a table with two indexes (for the count rule), an
// index with a sort key on another table (so one previous template can hold both changes), an index an operation
// reads, and an operation's function (for its alias).
const twoIndexes = tableWithIndexes(2);
const [firstIndex, secondIndex] = [twoIndexes.def.indexes.at(-2)!, twoIndexes.def.indexes.at(-1)!];
const sorted = indexWithSortKey([twoIndexes.def]);
const read = indexReadByAnOperation();
const fn = operationFunction();
/** The index name an earlier release gave the index it renamed. */
const OLD_NAME = `${firstIndex.indexName}Before`;
/** The logical id an earlier release gave the alias (another construct path's hash). */
const MOVED_ALIAS = `${fn.constructId}LiveAliasD2A1B3C4`;
/** No operation reads any index: for the rules that count indexes, apart from the readers' own finding. */
const NO_READERS = () => [];

type Mutation = (previous: any) => void;
const gsi = (t: any, table: string, name: string) =>
  t.Resources[table].Properties.GlobalSecondaryIndexes.find((g: any) => g.IndexName === name);

/** What an earlier release had: each mutation turns the current template into that release's. */
const MUTATIONS: Record<string, Mutation> = {
  projectionChanged: (t) =>
    (gsi(t, sorted.logicalId, sorted.index.indexName).Projection = { ProjectionType: 'KEYS_ONLY' }),
  keySchemaChanged: (t) =>
    (gsi(t, sorted.logicalId, sorted.index.indexName).KeySchema[1].AttributeName =
      `${sorted.index.sortKey!.name}Before`),
  renamed: (t) => (gsi(t, twoIndexes.logicalId, firstIndex.indexName).IndexName = OLD_NAME),
  twoAdded: (t) => {
    const p = t.Resources[twoIndexes.logicalId].Properties;
    p.GlobalSecondaryIndexes = p.GlobalSecondaryIndexes.filter(
      (g: any) => g.IndexName !== firstIndex.indexName && g.IndexName !== secondIndex.indexName,
    );
  },
  aliasMoved: (t) => {
    t.Resources[MOVED_ALIAS] = t.Resources[fn.aliasId];
    delete t.Resources[fn.aliasId];
  },
};

const previousWith = (...names: (keyof typeof MUTATIONS)[]) => {
  const previous = structuredClone(staging);
  for (const n of names) MUTATIONS[n]!(previous);
  return previous;
};

const inPlace = (what: string) =>
  `update: ${literally(sorted.logicalId)} index ${literally(sorted.index.indexName)}: its ${what} changes in place`;
const renamedLine = `update: ${twoIndexes.logicalId} index ${OLD_NAME} renamed ${firstIndex.indexName}: a delete and a create in one update, where CloudFormation allows one per table: split it into 2 releases, in this order: 1. add ${firstIndex.indexName}; 2. remove ${OLD_NAME}`;
const twoAddedLine = `update: ${twoIndexes.logicalId} indexes ${firstIndex.indexName}, ${secondIndex.indexName}: 2 created and 0 deleted in one update, where CloudFormation allows one per table: split it into 2 releases, in this order: 1. add ${firstIndex.indexName}; 2. add ${secondIndex.indexName}`;
const aliasMovedLine = `update: ${literally(MOVED_ALIAS)} \\(AWS::Lambda::Alias\\) moves to logical id ${literally(fn.aliasId)} under the same name`;

it('finds nothing against the template itself', () => {
  expect(updateFindings(staging, staging)).toEqual([]);
  // Every alias's logical id is the one pinned for its function (the deployed stacks' id), whatever its path.
  const aliases = Object.entries(staging.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Alias');
  expect(aliases.length).toBeGreaterThan(0);
  for (const [id, alias] of aliases) {
    const { Ref: fnId } = alias.Properties?.FunctionName as { Ref: string };
    expect(id).toBe(liveAliasLogicalId(fnId.replace(/Function[0-9A-F]{8}$/, '')));
  }
  for (const id of Object.values(DEPLOYED_LIVE_ALIAS_IDS))
    expect(staging.Resources[id]?.Type, id).toBe('AWS::Lambda::Alias');
});

it('names an index whose projection or key schema changes in place, and the two releases it takes', () => {
  expect(updateFindings(previousWith('projectionChanged'), staging)).toEqual([
    expect.stringMatching(
      new RegExp(
        `^${inPlace('projection')}, .*release 1 adds the new shape under another name, release 2 .* removes ${literally(sorted.index.indexName)}$`,
      ),
    ),
  ]);
  expect(updateFindings(previousWith('keySchemaChanged'), staging)).toEqual([
    expect.stringMatching(new RegExp(`^${inPlace('key schema')}`)),
  ]);
});

it('names a renamed index and two indexes created at once, with the releases in order', () => {
  expect(updateFindings(previousWith('renamed'), staging, NO_READERS)).toEqual([renamedLine]);
  expect(updateFindings(previousWith('twoAdded'), staging, NO_READERS)).toEqual([twoAddedLine]);
  // One index added is what DynamoDB allows.
  const oneAdded = previousWith();
  (oneAdded.Resources[twoIndexes.logicalId] as any).Properties.GlobalSecondaryIndexes.pop();
  expect(updateFindings(oneAdded, staging, NO_READERS)).toEqual([]);
});

it('names an index created in the same release as the code that reads it, and the wait between the two releases', () => {
  // The release before had no such index: this one adds it and ships the operations that query it.
  const before = previousWith();
  const table = (before.Resources[read.logicalId] as any).Properties;
  table.GlobalSecondaryIndexes = table.GlobalSecondaryIndexes.filter((g: any) => g.IndexName !== read.index.indexName);
  const name = literally(read.index.indexName);
  expect(updateFindings(before, staging)).toEqual([
    expect.stringMatching(
      new RegExp(
        `^update: ${literally(read.logicalId)} index ${name} is created in the same release as code that reads it \\(${literally(read.readers.join(', '))}\\): .*already exists.*release 1 adds ${name} alone; wait for it to be ACTIVE \\(aws dynamodb describe-table .*IndexStatus'\\); release 2 ships the code that reads it$`,
      ),
    ),
  ]);
  // An index no operation reads yet is one release, as before.
  expect(updateFindings(before, staging, NO_READERS)).toEqual([]);
});

it('names a key attribute whose type changes, which DynamoDB cannot do in place', () => {
  // An index's key attribute, not the table's own (whose change is a replacement, named as such).
  const attribute = sorted.index.partitionKey.name;
  expect(attribute).not.toBe(sorted.def.partitionKey.name);
  const before = previousWith();
  const defs = (before.Resources[sorted.logicalId] as any).Properties.AttributeDefinitions as any[];
  const key = defs.find((a) => a.AttributeName === attribute);
  key.AttributeType = key.AttributeType === 'S' ? 'N' : 'S';
  expect(updateFindings(before, staging)).toEqual([
    expect.stringMatching(
      new RegExp(
        `^update: ${literally(sorted.logicalId)} key attribute ${literally(attribute)} changes type [NS] to [NS], which DynamoDB cannot do`,
      ),
    ),
  ]);
});

it("names a live alias that moves to another logical id (a second 'live' on its function)", () => {
  expect(updateFindings(previousWith('aliasMoved'), staging)).toEqual([
    expect.stringMatching(new RegExp(`^${aliasMovedLine} .*"live".*: pin the logical id back`)),
  ]);
});

it('npm run preflight -- --previous exits 1 naming each index and the alias', async () => {
  // Two runs, as no table takes all four index changes at once.
  const cli = async (previous: CfnTemplate) => {
    const path = join(dir, `previous-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify(previous));
    return preflightCli(dir, ['--stage', 'staging', '--exclusively', '--previous', path]);
  };
  const first = await cli(previousWith('projectionChanged', 'twoAdded', 'aliasMoved'));
  expect(first.code).toBe(1);
  expect(first.stdout).toMatch(new RegExp(inPlace('projection')));
  expect(first.stdout).toContain(twoAddedLine.split(' in one update')[0]);
  expect(first.stdout).toMatch(new RegExp(aliasMovedLine));
  const second = await cli(previousWith('keySchemaChanged', 'renamed'));
  expect(second.code).toBe(1);
  expect(second.stdout).toMatch(new RegExp(inPlace('key schema')));
  expect(second.stdout).toContain(renamedLine.split(':')[1]);
}, 600_000);
