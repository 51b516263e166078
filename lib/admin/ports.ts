/**
 * What the key administration needs from outside (storage, limits, API Gateway, clock) and the error it reports.
 */
import type { KeyLayout } from '../../contract/key-layout.ts';
import type { PlanLimits, PlanName } from '../../contract/plans.ts';
import type { KeyRecord, Standing } from '../../lambdas/domain/keys.ts';
import type { LimitCounters, Windows } from '../../lambdas/domain/rate-limit.ts';
import type { Storage } from '../../lambdas/storage/client.ts';
import type { MinuteOpens } from '../../lambdas/storage/usage-history.ts';
import type { ListFilter, ListPage } from '../../lambdas/storage/key-listing.ts';
import type { StandingNote } from '../../lambdas/storage/standing.ts';
import type { AuditEntry } from '../../lambdas/storage/audit-store.ts';
import type { AuditOf } from '../../lambdas/storage/key-store.ts';
import type { KeyGateway } from './gateway.ts';

/** An error the admin prints as one line and exits non-zero for. */
export class AdminError extends Error {}

/** Writes are conditional on the version of the record passed in; StaleKeyRecordError when it changed meanwhile. */
export interface KeyAdminStorePort {
  /** `audit`: the change's history entry, written in the same transaction (audit.ts). */
  put(record: KeyRecord, audit?: AuditOf): Promise<void>;
  getById(keyId: string): Promise<KeyRecord | undefined>;
  list(): Promise<KeyRecord[]>;
  /** One page of `keys list`: up to `limit` records of the filter, from `after` (the last page's `next`). */
  listPage(filter: ListFilter, limit: number, after?: string): Promise<ListPage>;
  /** Gives records written before the listing index its attributes (once, after deploying it); how many. */
  reindex(): Promise<number>;
  /** Records that may have something for `keys purge` to delete at `cutoff` (ms); purge checks each again. */
  listDue(cutoff: number): Promise<KeyRecord[]>;
  /** Forgets the key's standing at the gateway (a spent day, a ban): lambdas/storage/standing.ts. */
  clearStanding(hash: string): Promise<void>;
  /** The key's standing at the gateway, and its parts forgotten or written (lambdas/storage/standing-admin.ts). */
  readStanding(hash: string): Promise<Standing>;
  clearStandingPart(hash: string, part: { spentDay: number } | { banUntil: number }): Promise<void>;
  noteStanding(hash: string, note: StandingNote): Promise<void>;
  /** Today's day counts of a key back to 0 (an admin lifted its spent day). */
  liftDay(subject: string, nowMs: number): Promise<void>;
  /** The day's bans of a key back to `bans` (an admin undid the plan change that caused the others). */
  resetDayBans(subject: string, dayStart: number, bans: number): Promise<void>;
  update(
    current: KeyRecord,
    changes: Partial<Omit<KeyRecord, 'hash' | 'keyId' | 'version' | 'writeId'>>,
    remove?: string[],
    audit?: AuditOf,
  ): Promise<KeyRecord>;
  /** A rotation; `overlapUntil` (unix seconds): the old secret is accepted until then (key-store.ts). */
  replaceHash(current: KeyRecord, next: KeyRecord, options?: { overlapUntil?: number; audit?: AuditOf }): Promise<void>;
  /** A key's history of changes, oldest first (lambdas/storage/audit-store.ts). */
  history(keyId: string): Promise<AuditEntry[]>;
}

/**
 * The pre-traffic check key's secret in Secrets Manager (`keys issue-check-key`: check-key.ts; the AWS side is
 * secrets.ts). Its value is the key's secret alone, as the hook reads it (lambdas/hooks/pre-traffic-entry.ts).
 */
export interface CheckKeySecretPort {
  /** The secret's value; undefined when there is no such secret yet. */
  read(name: string): Promise<string | undefined>;
  /** Sets the secret's value, creating the secret when there is none. */
  write(name: string, value: string): Promise<void>;
}

export interface AdminDeps {
  readonly store: KeyAdminStorePort;
  readonly limits: Pick<LimitCounters, 'usage' | 'ban'>;
  readonly gateway: KeyGateway;
  /** Usage plan id per standard plan on the target stage (empty locally). */
  readonly usagePlans: Partial<Record<PlanName, string>>;
  readonly stage: string;
  /**
   * How long after a revocation `purge` leaves the key's API Gateway key in place: at least the authorizer cache
   * TTL, so no cached result names a deleted API key. @default 2 minutes (twice the stages' 60 s TTL)
   */
  readonly revokedKeyGraceMs?: number;
  /** Today's minute history of a key (lambdas/storage/usage-history.ts), for the usage chart; absent: no history. */
  readonly history?: (subject: string, limits: PlanLimits, w: Windows) => Promise<MinuteOpens>;
  readonly now?: () => number;
  /**
   * Who the tool's credentials are, for the history of changes (audit.ts): on a stage the AWS principal's ARN (STS
   * GetCallerIdentity). @default the OS user (`local:<name>`)
   */
  readonly whoami?: () => Promise<string>;
  /**
   * Carries today's counts of a key from the shard layout of its old limits to that of its new ones (the limiter
   * splits a key over more counters above LIMITER.shardPerMinute); absent: nothing to carry (no counters).
   */
  /** Lifts a key's ban on the limiter's counters (lambdas/storage/ban-lift.ts); absent: no counters. */
  readonly liftBan?: (subject: string, nowMs: number) => Promise<void>;
  readonly carryCounts?: (subject: string, from: PlanLimits, to: PlanLimits, nowMs: number) => Promise<void>;
  /** The DynamoDB client and table names the stores are built on (what the target resolved to). */
  readonly storage?: Storage;
  /**
   * The key layout the stage's authorizer understands (its stack's KeyLayout output; contract/key-layout.ts): writes
   * that need a newer one are refused. @default this code's KEY_LAYOUT (a target running this code's authorizer)
   */
  readonly keyLayout?: KeyLayout;
  /** Where `keys issue-check-key` stores the check key's secret; absent: the target has none (`--local`). */
  readonly secrets?: CheckKeySecretPort;
}
