import { Annotations, RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  Billing,
  TableEncryptionV2,
  TableV2,
  type Attribute,
  type ITableV2,
} from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { pinLogicalId } from './logical-ids.ts';
import { TABLES, type KeyAttribute, type TableDefinition } from '../../contract/tables.ts';
import { ACCOUNT_THROTTLE } from '../../contract/plans.ts';
import { UNITS_PER_CALL } from '../config/capacity.ts';

export interface DataTablesProps {
  /** @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
  /** @default true */
  readonly deletionProtection?: boolean;
  /**
   * Use an existing table instead of creating one, by definition id (e.g. a point-in-time restore of `Pets`):
   * the stack then points the functions, grants, alarms and outputs at it and no longer manages it. The table the
   * stack created leaves the template (kept if the removal policy retains it, DELETED if it is DESTROY).
   * @default - create every table
   */
  readonly existingTableNames?: Readonly<Record<string, string>>;
  /**
   * On-demand maximum throughput of every table and index, in read and in write request units per second: a cost
   * ceiling (DynamoDB throttles past it, and the functions answer 503 with Retry-After). requestUnitCeiling sizes it
   * from what the stage can admit. @default - no ceiling
   */
  readonly maxRequestUnitsPerSecond?: number;
}

export { UNITS_PER_CALL } from '../config/capacity.ts';

/**
 * The ceiling that never throttles what the stage admits: every route's method at the stage throttle's rate plus a
 * full bucket in the same second, within the account's throttle (API Gateway applies the stage throttle per method),
 * times UNITS_PER_CALL (derived from the route entries' grants): a bill a runaway caller or a bug can reach, and no
 * further. The docs' figures for both stages are generated from it (lib/api/docs-figures.ts).
 */
export function requestUnitCeiling(
  throttle: { readonly rateLimit: number; readonly burstLimit: number },
  methods: number,
): number {
  const rate = Math.min(ACCOUNT_THROTTLE.rateLimit, throttle.rateLimit * methods);
  const burst = Math.min(ACCOUNT_THROTTLE.burstLimit, throttle.burstLimit * methods);
  return UNITS_PER_CALL * (rate + burst);
}

/** The pinned logical id of a declared table's resource: `PetsTable`. */
export const tableLogicalIdOf = (def: Pick<TableDefinition, 'id'>): string => `${def.id}Table`;

const attribute = (a: KeyAttribute): Attribute => ({
  name: a.name,
  type: a.type === 'N' ? AttributeType.NUMBER : AttributeType.STRING,
});

/**
 * Every table of contract/tables.ts: on-demand, encrypted at rest with the key DynamoDB owns (no KMS charge, no key
 * policy to manage; the AWS managed `aws/dynamodb` key would bill KMS requests and only add CloudTrail entries of its
 * use), point-in-time recovery on, TTL where the definition names an attribute. Physical names are left to
 * CloudFormation; logical ids are pinned (`<id>Table`).
 */
export class DataTables extends Construct {
  /** Tables by their definition id (`Pets`, `ApiKeys`, `State`). */
  private readonly byId = new Map<string, ITableV2>();

  constructor(scope: Construct, id: string, props: DataTablesProps = {}) {
    super(scope, id);
    const max = props.maxRequestUnitsPerSecond;
    for (const def of TABLES as readonly TableDefinition[]) {
      const existing = props.existingTableNames?.[def.id];
      if (existing) {
        this.byId.set(def.id, TableV2.fromTableName(this, def.id, existing));
        Annotations.of(this).addWarningV2(
          `animal-store:existingTable:${def.id}`,
          `Table ${def.id} is the existing table ${existing}: the stack no longer manages its settings (PITR, TTL, deletion protection, indexes, encryption); set them on it by hand`,
        );
        continue;
      }
      const table = new TableV2(this, def.id, {
        partitionKey: attribute(def.partitionKey),
        ...(def.sortKey ? { sortKey: attribute(def.sortKey) } : {}),
        billing: Billing.onDemand(max ? { maxReadRequestUnits: max, maxWriteRequestUnits: max } : undefined),
        encryption: TableEncryptionV2.dynamoOwnedKey(),
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        ...(def.ttlAttribute ? { timeToLiveAttribute: def.ttlAttribute } : {}),
        globalSecondaryIndexes: def.indexes.map((ix) => ({
          indexName: ix.indexName,
          partitionKey: attribute(ix.partitionKey),
          ...(ix.sortKey ? { sortKey: attribute(ix.sortKey) } : {}),
          ...(max ? { maxReadRequestUnits: max, maxWriteRequestUnits: max } : {}),
        })),
        removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
        deletionProtection: props.deletionProtection ?? true,
      });
      pinLogicalId(table, tableLogicalIdOf(def));
      this.byId.set(def.id, table);
    }
  }

  /** The table built from (or given for) a definition. */
  table(def: Pick<TableDefinition, 'id'>): ITableV2 {
    const table = this.byId.get(def.id);
    if (!table) throw new Error(`No table for definition ${def.id}`);
    return table;
  }

  /** Each definition with its table (for env vars and outputs). */
  entries(): { def: TableDefinition; table: ITableV2 }[] {
    return (TABLES as readonly TableDefinition[]).map((def) => ({ def, table: this.table(def) }));
  }
}
