/**
 * DynamoDB's rules for a table's global secondary indexes in one stack update, which no template diff shows as a
 * replacement: CloudFormation creates or deletes at most one GSI per table per update (a rename is a delete plus a
 * create, so two), and changes no index's key schema or projection in place. An update that breaks either fails
 * mid-way and rolls back. A change that needs more is a sequence of releases; the finding says the order: new
 * indexes first, one per release (the code may start reading each as soon as it is ACTIVE), then the old ones, one
 * per release, once no deployed code reads them. Two more a diff does not show:
 * - an index created in the same release as code that reads it: the code fails until the index is ACTIVE (minutes to
 *   hours on a table with data), a rollback of that release may leave the index, and the retry then fails on "already
 *   exists"; the readers are the operations whose table access names the index (contract/routes.ts);
 * - a key attribute whose type changes (AttributeDefinitions, for a table's or an index's key): DynamoDB changes no
 *   key in place, so it is a new attribute (and index) under another name.
 */
import type { CfnResource, CfnTemplate, Json } from './template.ts';

/** The operations that read an index, by `<table logical id>/<index name>`. */
export type IndexReaders = (tableLogicalId: string, indexName: string) => readonly string[];

const TABLE_TYPES = new Set(['AWS::DynamoDB::GlobalTable', 'AWS::DynamoDB::Table']);

interface Gsi {
  readonly IndexName: string;
  readonly KeySchema?: Json;
  readonly Projection?: Json;
}

const indexesOf = (r: CfnResource): Map<string, Gsi> =>
  new Map(((r.Properties?.GlobalSecondaryIndexes as Gsi[] | undefined) ?? []).map((g) => [g.IndexName, g]));

/** Key schema and projection, the parts of an index DynamoDB never changes in place (a projection's order aside). */
function shape(g: Gsi): string {
  const p = (g.Projection ?? {}) as { ProjectionType?: string; NonKeyAttributes?: string[] };
  return JSON.stringify([g.KeySchema ?? null, p.ProjectionType ?? 'ALL', [...(p.NonKeyAttributes ?? [])].sort()]);
}

/** Key attributes (of the table or an index, before or after) whose AttributeType differs: [name, now, before]. */
function keyTypeChanges(before: CfnResource, after: CfnResource): [string, string, string][] {
  const types = (r: CfnResource) =>
    new Map(
      (
        (r.Properties?.AttributeDefinitions as { AttributeName: string; AttributeType: string }[] | undefined) ?? []
      ).map((a) => [a.AttributeName, a.AttributeType]),
    );
  const keys = (r: CfnResource) =>
    [r.Properties?.KeySchema, ...[...indexesOf(r).values()].map((g) => g.KeySchema)].flatMap((k) =>
      ((k as { AttributeName: string }[] | undefined) ?? []).map((e) => e.AttributeName),
    );
  const [was, is] = [types(before), types(after)];
  const named = new Set([...keys(before), ...keys(after)]);
  return [...named].flatMap((n) => {
    const [a, b] = [was.get(n), is.get(n)];
    return a && b && a !== b ? [[n, b, a] as [string, string, string]] : [];
  });
}

/** What differs between two indexes of one name. */
function changedParts(was: Gsi, is: Gsi): string[] {
  const parts: string[] = [];
  if (JSON.stringify(was.KeySchema) !== JSON.stringify(is.KeySchema)) parts.push('key schema');
  const [a, b] = [shape({ ...was, KeySchema: null }), shape({ ...is, KeySchema: null })];
  if (a !== b) parts.push('projection');
  return parts;
}

/**
 * One line per table whose indexes the update changes in a way CloudFormation cannot apply in one update: an index
 * changed in place (one line each), or more than one index created or deleted (one line with the releases in order).
 * `skip` names tables that are replaced anyway (the replacement's own finding says so).
 */
export function indexFindings(
  previous: CfnTemplate,
  next: CfnTemplate,
  skip: ReadonlySet<string> = new Set(),
  readers: IndexReaders = () => [],
): string[] {
  const findings: string[] = [];
  for (const [id, r] of Object.entries(next.Resources)) {
    const before = previous.Resources[id];
    if (!TABLE_TYPES.has(r.Type) || before?.Type !== r.Type || skip.has(id)) continue;
    const [was, is] = [indexesOf(before), indexesOf(r)];
    for (const [name, type, then] of keyTypeChanges(before, r))
      findings.push(
        `update: ${id} key attribute ${name} changes type ${then} to ${type}, which DynamoDB cannot do to a key: release 1 adds an attribute under another name (and its index), release 2 (once no code reads the old one) removes the old`,
      );
    for (const name of [...is.keys()].filter((n) => !was.has(n))) {
      const reading = readers(id, name);
      if (reading.length)
        findings.push(
          `update: ${id} index ${name} is created in the same release as code that reads it (${reading.join(', ')}): that code fails until the index is ACTIVE, and a rollback may keep the index so the retry fails on "already exists": release 1 adds ${name} alone; wait for it to be ACTIVE (aws dynamodb describe-table --table-name <table> --query 'Table.GlobalSecondaryIndexes[?IndexName==\`${name}\`].IndexStatus'); release 2 ships the code that reads it`,
        );
    }
    for (const [name, g] of is) {
      const old = was.get(name);
      const parts = old ? changedParts(old, g) : [];
      if (parts.length)
        findings.push(
          `update: ${id} index ${name}: its ${parts.join(' and ')} changes in place, which DynamoDB cannot do in an update: release 1 adds the new shape under another name, release 2 (once no code reads ${name}) removes ${name}`,
        );
    }
    const added = [...is.keys()].filter((n) => !was.has(n));
    const removed = [...was.keys()].filter((n) => !is.has(n));
    if (added.length + removed.length <= 1) continue;
    const renamed =
      added.length === 1 && removed.length === 1 && shape(is.get(added[0]!)!) === shape(was.get(removed[0]!)!);
    const steps = [...added.map((n) => `add ${n}`), ...removed.map((n) => `remove ${n}`)];
    findings.push(
      `update: ${id} ${renamed ? `index ${removed[0]} renamed ${added[0]}: a delete and a create` : `indexes ${[...added, ...removed].join(', ')}: ${added.length} created and ${removed.length} deleted`} in one update, where CloudFormation allows one per table: split it into ${steps.length} releases, in this order: ${steps.map((s, i) => `${i + 1}. ${s}`).join('; ')}`,
    );
  }
  return findings;
}
