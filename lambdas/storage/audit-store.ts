/**
 * The admin tool's history of changes to keys, on the audit table (contract/tables.ts AUDIT_TABLE): one item per
 * change, written in the same transaction as the key record it describes (key-store.ts), so a change without its
 * entry, or an entry of a change that did not land, cannot exist. Items are only ever put, never updated: nothing the
 * tool does rewrites history. What an entry holds is chosen field by field (auditState): never a secret, its hash or
 * a write id, so a leaked history grants nothing and names no item a request could be replayed against.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { PlanLimits, PlanName } from '../../contract/plans.ts';
import type { KeyRecord, KeyStatus } from '../domain/keys.ts';
import { guarded, type Storage } from './client.ts';

/** How long an entry is kept (the table's TTL deletes it after): a year and a month, past a yearly review. */
export const AUDIT_RETENTION_DAYS = 400;

/** What an entry says of a key, before or after a change: what an admin changes and support is asked about. */
export interface AuditState {
  readonly plan: PlanName;
  readonly limits?: PlanLimits;
  readonly status: KeyStatus;
  readonly revokedAt?: string;
  readonly rotatedAt?: string;
  /** An admin's ban (unix seconds). */
  readonly bannedUntil?: number;
  /** Bans ending by then are lifted (unix seconds). */
  readonly unbannedThrough?: number;
  readonly version?: number;
}

/** The key's standing as the command read it (the limiter's and the gateway's), where it read it. */
export interface AuditStanding {
  readonly bannedUntil?: string;
  readonly daySpentUntil?: string;
}

/** Who made a change. */
export interface AuditActor {
  /** Who the entry names: `--actor` when given, else the principal or the OS user. */
  readonly actor: string;
  /** The AWS principal (STS GetCallerIdentity's ARN) on a stage; locally the OS user (`local:<name>`). */
  readonly principal: string;
}

/** One change, as `keys history` prints it. */
export interface AuditEntry extends AuditActor {
  readonly keyId: string;
  /** ISO time of the change. */
  readonly at: string;
  /** The command (`set-plan`, `revoke`…) and its arguments, without any secret (none is ever an argument). */
  readonly command: string;
  readonly stage: string;
  readonly before?: AuditState;
  readonly after: AuditState;
  readonly standingBefore?: AuditStanding;
  /** What the change did, in a line. */
  readonly result: string;
}

/** The fields of a record an entry keeps: explicitly chosen, so a field added to records later is not copied in. */
export function auditState(r: KeyRecord): AuditState {
  const pick = {
    plan: r.plan,
    limits: r.limits,
    status: r.status,
    revokedAt: r.revokedAt,
    rotatedAt: r.rotatedAt,
    bannedUntil: r.bannedUntil,
    unbannedThrough: r.unbannedThrough,
    version: r.version,
  };
  return Object.fromEntries(Object.entries(pick).filter(([, v]) => v !== undefined)) as unknown as AuditState;
}

/**
 * The item of an entry: sorted by the version the change wrote (each version is written once: a conditional write),
 * deleted by the table's TTL AUDIT_RETENTION_DAYS after the change.
 */
export function auditItem(entry: AuditEntry): Record<string, unknown> {
  const expiresAt = Math.floor(Date.parse(entry.at) / 1000) + AUDIT_RETENTION_DAYS * 86_400;
  return { ...entry, version: entry.after.version ?? 0, expiresAt };
}

/** A key's history, oldest first (one Query, paged). */
export async function readHistory({ doc, tables }: Storage, keyId: string): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await guarded(() =>
      doc.send(
        new QueryCommand({
          TableName: tables.audit,
          KeyConditionExpression: 'keyId = :k',
          ExpressionAttributeValues: { ':k': keyId },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      ),
    );
    for (const item of (out.Items ?? []) as Array<AuditEntry & { expiresAt?: number; version?: number }>) {
      const { expiresAt: _exp, version: _v, ...entry } = item;
      entries.push(entry);
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return entries;
}
