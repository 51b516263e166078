/**
 * The update rules on the changes CloudFormation refuses mid-update although no resource is replaced: a global
 * secondary index changed in place, renamed, or two created in one update of one table, and a `live` alias moved
 * to another logical id. Each previous template is the synthesized one, mutated as an earlier release would have
 * had it; the CLI (`npm run preflight -- --previous`) names each index and exits 1.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { liveAliasLogicalId } from '../../lib/constructs/api-function.ts';
import type { CfnTemplate } from '../../lib/preflight/template.ts';
import { updateFindings } from '../../lib/preflight/update-rules.ts';
import { createApp } from '../../lib/stacks/app.ts';
import { preflightCli } from './preflight-cli.ts';
import { SYNTH_CONTEXT } from './synth-context.ts';

const dir = mkdtempSync(join(tmpdir(), 'animal-store-update-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let staging: CfnTemplate;
beforeAll(() => {
  staging = Template.fromStack(createApp({ context: { ...SYNTH_CONTEXT } }).stacks.staging).toJSON() as CfnTemplate;
}, 240_000);

type Mutation = (previous: any) => void;
const gsi = (t: any, table: string, name: string) =>
  t.Resources[table].Properties.GlobalSecondaryIndexes.find((g: any) => g.IndexName === name);

/** What an earlier release had: each mutation turns the current template into that release's. */
const MUTATIONS: Record<string, Mutation> = {
  projectionChanged: (t) => (gsi(t, 'PetsTable', 'byStatus').Projection = { ProjectionType: 'KEYS_ONLY' }),
  keySchemaChanged: (t) => (gsi(t, 'PetsTable', 'byStatus').KeySchema[1].AttributeName = 'name'),
  renamed: (t) => (gsi(t, 'ApiKeysTable', 'byKeyId').IndexName = 'byPublicId'),
  twoAdded: (t) => (t.Resources.ApiKeysTable.Properties.GlobalSecondaryIndexes = []),
  aliasMoved: (t) => {
    const id = liveAliasLogicalId('ListPets');
    t.Resources.ListPetsLiveAliasD2A1B3C4 = t.Resources[id];
    delete t.Resources[id];
  },
};

const previousWith = (...names: (keyof typeof MUTATIONS)[]) => {
  const previous = structuredClone(staging);
  for (const n of names) MUTATIONS[n]!(previous);
  return previous;
};

it('finds nothing against the template itself', () => {
  expect(updateFindings(staging, staging)).toEqual([]);
  // Every alias's logical id is the one pinned for its function (the deployed stacks' id), whatever its path.
  const aliases = Object.entries(staging.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Alias');
  expect(aliases.length).toBeGreaterThan(0);
  for (const [id, alias] of aliases) {
    const { Ref: fn } = alias.Properties?.FunctionName as { Ref: string };
    expect(id).toBe(liveAliasLogicalId(fn.replace(/Function[0-9A-F]{8}$/, '')));
  }
  expect(staging.Resources.ListPetsLiveB612E50C?.Type).toBe('AWS::Lambda::Alias');
});

it('names an index whose projection or key schema changes in place, and the two releases it takes', () => {
  expect(updateFindings(previousWith('projectionChanged'), staging)).toEqual([
    expect.stringMatching(
      /^update: PetsTable index byStatus: its projection changes in place, .*release 1 adds the new shape under another name, release 2 .* removes byStatus$/,
    ),
  ]);
  expect(updateFindings(previousWith('keySchemaChanged'), staging)).toEqual([
    expect.stringMatching(/^update: PetsTable index byStatus: its key schema changes in place/),
  ]);
});

it('names a renamed index and two indexes created at once, with the releases in order', () => {
  expect(updateFindings(previousWith('renamed'), staging)).toEqual([
    'update: ApiKeysTable index byPublicId renamed byKeyId: a delete and a create in one update, where CloudFormation allows one per table: split it into 2 releases, in this order: 1. add byKeyId; 2. remove byPublicId',
  ]);
  expect(updateFindings(previousWith('twoAdded'), staging)).toEqual([
    'update: ApiKeysTable indexes byKeyId, byListing: 2 created and 0 deleted in one update, where CloudFormation allows one per table: split it into 2 releases, in this order: 1. add byKeyId; 2. add byListing',
  ]);
  // One index added is what DynamoDB allows.
  const oneAdded = previousWith();
  (oneAdded.Resources.ApiKeysTable as any).Properties.GlobalSecondaryIndexes.pop();
  expect(updateFindings(oneAdded, staging)).toEqual([]);
});

it('names an index created in the same release as the code that reads it, and the wait between the two releases', () => {
  // The release before had no byStatus: this one adds it and ships listPets' status filter, which queries it.
  const before = previousWith();
  const pets = (before.Resources.PetsTable as any).Properties;
  pets.GlobalSecondaryIndexes = pets.GlobalSecondaryIndexes.filter((g: any) => g.IndexName !== 'byStatus');
  expect(updateFindings(before, staging)).toEqual([
    expect.stringMatching(
      /^update: PetsTable index byStatus is created in the same release as code that reads it \(listPets\): .*already exists.*release 1 adds byStatus alone; wait for it to be ACTIVE \(aws dynamodb describe-table .*IndexStatus'\); release 2 ships the code that reads it$/,
    ),
  ]);
  // An index no operation reads yet is one release, as before.
  expect(updateFindings(before, staging, () => [])).toEqual([]);
});

it('names a key attribute whose type changes, which DynamoDB cannot do in place', () => {
  const before = previousWith();
  const defs = (before.Resources.PetsTable as any).Properties.AttributeDefinitions as any[];
  const status = defs.find((a) => a.AttributeName === 'status');
  status.AttributeType = status.AttributeType === 'S' ? 'N' : 'S';
  expect(updateFindings(before, staging)).toEqual([
    expect.stringMatching(
      /^update: PetsTable key attribute status changes type [NS] to [NS], which DynamoDB cannot do/,
    ),
  ]);
});

it("names a live alias that moves to another logical id (a second 'live' on its function)", () => {
  expect(updateFindings(previousWith('aliasMoved'), staging)).toEqual([
    expect.stringMatching(
      /^update: ListPetsLiveAliasD2A1B3C4 \(AWS::Lambda::Alias\) moves to logical id ListPetsLiveB612E50C under the same name .*"live".*: pin the logical id back/,
    ),
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
  expect(first.stdout).toMatch(/PetsTable index byStatus: its projection changes in place/);
  expect(first.stdout).toMatch(/ApiKeysTable indexes byKeyId, byListing: 2 created/);
  expect(first.stdout).toMatch(
    /ListPetsLiveAliasD2A1B3C4 \(AWS::Lambda::Alias\) moves to logical id ListPetsLiveB612E50C/,
  );
  const second = await cli(previousWith('keySchemaChanged', 'renamed'));
  expect(second.code).toBe(1);
  expect(second.stdout).toMatch(/PetsTable index byStatus: its key schema changes in place/);
  expect(second.stdout).toMatch(/ApiKeysTable index byPublicId renamed byKeyId/);
}, 600_000);
