/**
 * What the key administration needs from outside (storage, limits, clock, and for one command API Gateway's control
 * plane) and the error it reports.
 */
import type { PlanLimits } from '../../contract/plans.ts';
import type { KeyOverlapRef, KeyRecord, Standing } from '../../lambdas/domain/keys.ts';
import type { LimitCounters, Windows } from '../../lambdas/domain/rate-limit.ts';
import type { Storage } from '../../lambdas/storage/client.ts';
import type { MinuteOpens } from '../../lambdas/storage/usage-history.ts';
import type { ListFilter, ListPage } from '../../lambdas/storage/key-listing.ts';
import type { AuditEntry } from '../../lambdas/storage/audit-store.ts';
import type { AuditOf, WriteWith } from '../../lambdas/storage/key-store.ts';
import type { ControlPlane } from './release-api-keys.ts';

/** An error the admin prints as one line and exits non-zero for. */
export class AdminError extends Error {}

/** An error as one line for an admin, with its cause when it has one (a storage outage says which). */
export const describeError = (err: unknown) =>
  err instanceof AdminError
    ? err.message
    : `${(err as Error)?.name}: ${(err as Error)?.message}` +
      (typeof (err as Error)?.cause === 'string' ? ` (${(err as Error).cause as string})` : '');

/**
 * Writes are conditional on the version of the record passed in, and on what they read of the key's standing and
 * counters; StaleKeyRecordError when either changed meanwhile.
 */
export interface KeyAdminStorePort {
  /** `audit`: the change's history entry, written in the same transaction (audit.ts). */
  put(record: KeyRecord, audit?: AuditOf): Promise<void>;
  getById(keyId: string): Promise<KeyRecord | undefined>;
  list(): Promise<KeyRecord[]>;
  /** One page of `keys list`: up to `limit` records of the filter, from `after` (the last page's `next`). */
  listPage(filter: ListFilter, limit: number, after?: string): Promise<ListPage>;
  /** Gives records an earlier release listed otherwise the listing's attributes; how many. */
  reindex(): Promise<number>;
  /** Gives history entries an earlier release wrote the by-day index's attribute (audit-store.ts); how many. */
  reindexHistory(): Promise<number>;
  /** The key's standing at the gateway (lambdas/storage/standing.ts). */
  readStanding(hash: string): Promise<Standing>;
  /** `with_`: its history entry and what it changes of the key's standing, in the same transaction (key-store.ts). */
  update(
    current: KeyRecord,
    changes: Partial<Omit<KeyRecord, 'hash' | 'keyId' | 'version' | 'writeId'>>,
    remove?: string[],
    with_?: WriteWith,
  ): Promise<KeyRecord>;
  /**
   * A rotation; `overlapUntil` (unix seconds): the old secret is accepted until then; `carried`: earlier secrets whose
   * overlap runs, pointed at the new one (key-store.ts).
   */
  replaceHash(
    current: KeyRecord,
    next: KeyRecord,
    options?: WriteWith & { overlapUntil?: number; carried?: readonly KeyOverlapRef[] },
  ): Promise<void>;
  /** A key's history of changes, oldest first (lambdas/storage/audit-store.ts). */
  history(keyId: string): Promise<AuditEntry[]>;
}

/**
 * The pre-traffic check key's secret in Secrets Manager (`keys issue-check-key`: check-key.ts; the AWS side is
 * secrets.ts). Its value is every plan's check key, as lambdas/hooks/check-keys.ts formats and the hook reads them.
 */
export interface CheckKeySecretPort {
  /** The secret's value; undefined when there is no such secret yet. */
  read(name: string): Promise<string | undefined>;
  /** Sets the secret's value, creating the secret when there is none. */
  write(name: string, value: string): Promise<void>;
}

export interface AdminDeps {
  readonly store: KeyAdminStorePort;
  readonly limits: Pick<LimitCounters, 'usage'>;
  readonly stage: string;
  /** Today's minute history of a key (lambdas/storage/usage-history.ts), for the usage chart; absent: no history. */
  readonly history?: (subject: string, limits: PlanLimits, w: Windows) => Promise<MinuteOpens>;
  readonly now?: () => number;
  /**
   * Who the tool's credentials are, for the history of changes (audit.ts): on a stage the AWS principal's ARN (STS
   * GetCallerIdentity). @default the OS user (`local:<name>`)
   */
  readonly whoami?: () => Promise<string>;
  /** The DynamoDB client and table names the stores are built on (what the target resolved to). */
  readonly storage?: Storage;
  /** Where `keys issue-check-key` stores the check key's secret; absent: the target has none (`--local`). */
  readonly secrets?: CheckKeySecretPort;
  /**
   * The stage runs release 3357b0c's authorizer (its stack has no UsageKeys output, as during the upgrade until this
   * release's deploy completes): no paying key is made or moved there (rules.ts refuseOwnKeyAuthorizer).
   */
  readonly ownKeyAuthorizer?: boolean;
  /**
   * The stage's stack and API Gateway's control plane, for `keys remove-release-api-keys` alone (no key command calls
   * API Gateway); absent: the target has none (`--local`).
   */
  readonly controlPlane?: () => Promise<ControlPlane>;
}
