/**
 * DynamoDB's rules for a table's global secondary indexes in one stack update, which no template diff shows as a
 * replacement: CloudFormation creates or deletes at most one GSI per table per update (a rename is a delete plus a
 * create, so two), and changes no index's key schema or projection in place. An update that breaks either fails
 * mid-way and rolls back. A change that needs more is a sequence of releases; the finding says the order: new
 * indexes first, one per release (the code may start reading each as soon as it is ACTIVE), then the old ones, one
 * per release, once no deployed code reads them.
 */
import type { CfnResource, CfnTemplate, Json } from './template.ts';

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
): string[] {
  const findings: string[] = [];
  for (const [id, r] of Object.entries(next.Resources)) {
    const before = previous.Resources[id];
    if (!TABLE_TYPES.has(r.Type) || before?.Type !== r.Type || skip.has(id)) continue;
    const [was, is] = [indexesOf(before), indexesOf(r)];
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
