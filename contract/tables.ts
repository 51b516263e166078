/**
 * Table design, declared once: the CDK data construct and the local server both create tables from this.
 * Plain data, no SDK or CDK imports.
 */
export type AttributeType = 'S' | 'N';
export interface KeyAttribute {
  readonly name: string;
  readonly type: AttributeType;
}
export interface IndexDefinition {
  readonly indexName: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
}
export interface TableDefinition {
  /** Logical name, used for CDK construct ids and local physical names. */
  readonly id: string;
  /**
   * The environment variable through which a function whose access names the table learns its physical name. The
   * rest is derived from it: the table's key in the storage's names (`PET_OWNERS_TABLE_NAME` → `petOwners`,
   * tableKey), the config entry, the stack output (lib/stacks/outputs.ts), the local physical name.
   */
  readonly envVar: `${string}_TABLE_NAME`;
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
  readonly indexes: readonly IndexDefinition[];
  readonly ttlAttribute?: string;
}

/**
 * pets: one item per animal, keyed by its numeric id. A plain Scan with Limit returns full pages (no filter);
 * the byStatus index (status, id) serves the status filter as a Query, also full pages, ordered by id.
 */
export const PETS_TABLE = {
  id: 'Pets',
  envVar: 'PETS_TABLE_NAME',
  partitionKey: { name: 'id', type: 'N' },
  indexes: [{ indexName: 'byStatus', partitionKey: { name: 'status', type: 'S' }, sortKey: { name: 'id', type: 'N' } }],
} as const satisfies TableDefinition;

/**
 * keys: one item per API key, keyed by the SHA-256 (hex) of the key; the plaintext is never stored.
 * byKeyId finds a key by its public id. byListing serves `keys list` (by plan, status, owner) and `keys purge` as
 * Queries, never a Scan (lambdas/storage/key-listing.ts). Indexes are only appended: CloudFormation creates one
 * global secondary index per table per update.
 */
export const KEYS_TABLE = {
  id: 'ApiKeys',
  envVar: 'KEYS_TABLE_NAME',
  partitionKey: { name: 'hash', type: 'S' },
  indexes: [
    { indexName: 'byKeyId', partitionKey: { name: 'keyId', type: 'S' } },
    { indexName: 'byListing', partitionKey: { name: 'listKey', type: 'S' }, sortKey: { name: 'listSort', type: 'S' } },
  ],
  // Only a rotated secret's overlap item carries it (`keys rotate --overlap`); key records never expire.
  ttlAttribute: 'expiresAt',
} as const satisfies TableDefinition;

/**
 * state: small service-owned items keyed by a string: rate-limit windows (`rl#<key>#<day>`), id-block counters
 * (`ids#pets`), idempotency records. Items that matter only for a while carry `expiresAt`. That TTL is housekeeping
 * only: each such item is keyed by its window, so a late deletion never changes a decision.
 */
export const STATE_TABLE = {
  id: 'State',
  envVar: 'STATE_TABLE_NAME',
  partitionKey: { name: 'pk', type: 'S' },
  indexes: [],
  ttlAttribute: 'expiresAt',
} as const satisfies TableDefinition;

/**
 * audit: the admin tool's history of key changes (lib/admin/audit.ts), one item per change, so `keys history` is one
 * Query. The sort key is the record version the change wrote: versioned writes are ordered, whatever the clocks.
 * A table of its own: byKeyId would hand history items to key lookups, and the state table has no sort key.
 * No function is granted it. Its TTL (AUDIT_RETENTION_DAYS) drops old entries. No entry holds a secret or its hash.
 */
export const AUDIT_TABLE = {
  id: 'AdminAudit',
  envVar: 'AUDIT_TABLE_NAME',
  partitionKey: { name: 'keyId', type: 'S' },
  sortKey: { name: 'version', type: 'N' },
  // byDay: every key's entries by the UTC day of the change (`atDay`, YYYY-MM-DD), sorted by time (`at`). A search by
  // time or a day's export is a Query per day, not a read of every history. `keys reindex` fills an old entry's atDay.
  indexes: [{ indexName: 'byDay', partitionKey: { name: 'atDay', type: 'S' }, sortKey: { name: 'at', type: 'S' } }],
  ttlAttribute: 'expiresAt',
} as const satisfies TableDefinition;

/** Every table. A new one is declared above and listed here: nothing else lists tables. */
export const TABLES = [PETS_TABLE, KEYS_TABLE, STATE_TABLE, AUDIT_TABLE] as const satisfies readonly TableDefinition[];

type Camel<S extends string> = S extends `${infer H}_${infer T}`
  ? `${Lowercase<H>}${Capitalize<Camel<T>>}`
  : Lowercase<S>;
/** A table's key in the storage's table names, from its variable: `PETS_TABLE_NAME` → `pets`. */
export type TableKeyOf<E extends string> = E extends `${infer P}_TABLE_NAME` ? Camel<P> : never;
export type TableKey = TableKeyOf<(typeof TABLES)[number]['envVar']>;
/** The environment variables of every table (each optional in a function's configuration: it holds its own). */
export type TableEnvVar = (typeof TABLES)[number]['envVar'];

/** A table's key in the storage's table names (`storage.tables.pets`), from its variable (see TableKeyOf). */
export const tableKey = <E extends string>(def: { readonly envVar: E }): TableKeyOf<E> =>
  def.envVar
    .replace(/_TABLE_NAME$/, '')
    .toLowerCase()
    .replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) as TableKeyOf<E>;

/** The distinct tables of a list of grants (a function's access), in the order first named. */
export const tablesOf = (grants: readonly { readonly table: TableDefinition }[]): TableDefinition[] => [
  ...new Map(grants.map((g) => [g.table.id, g.table])).values(),
];

/**
 * Every DynamoDB operation the service may perform (lambdas/storage: Get/Put/Update/Delete, Query, Scan, the
 * idempotent create's TransactWriteItems, and the authorizer's BatchGetItem of a key and its standing), in the order
 * the alarms sum them.
 */
export const DYNAMODB_OPERATIONS = [
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'TransactWriteItems',
  'BatchGetItem',
] as const;
