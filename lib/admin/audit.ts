/**
 * Who made a change, and the history entry written with it (lambdas/storage/audit-store.ts). Every command that
 * changes a key's record passes its entry to the record write, which puts both in one transaction: a change is never
 * without its entry. Who: on a stage the AWS principal the tool's credentials resolve to (STS GetCallerIdentity,
 * asked once per run before the first write; a principal that cannot be named changes nothing), locally the OS user;
 * `--actor <name>` names the person when a shared role or account made the call, and the principal is kept beside it,
 * so a name given on the command line never hides which credentials made the change.
 */
import { userInfo } from 'node:os';
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import { auditState, type AuditActor, type AuditEntry, type AuditStanding } from '../../lambdas/storage/audit-store.ts';
import type { AuditOf } from '../../lambdas/storage/key-store.ts';

export { AUDIT_RETENTION_DAYS, type AuditEntry } from '../../lambdas/storage/audit-store.ts';

/** The OS user running the tool, as the local target names it. */
export function osUser(): string {
  try {
    return `local:${userInfo().username}`;
  } catch {
    // No passwd entry (a container's arbitrary uid): the environment's name, else the uid.
    return `local:${process.env.USER ?? process.env.LOGNAME ?? `uid-${process.getuid?.() ?? '?'}`}`;
  }
}

/** Who: the principal (`whoami`), and the name `--actor` gave, if any. */
export async function resolveActor(whoami: () => Promise<string>, claimed?: string): Promise<AuditActor> {
  const principal = await whoami();
  return { actor: claimed ?? principal, principal };
}

/** What a change's entry says beside its record's state before and after. */
export interface Change {
  readonly who: AuditActor;
  readonly stage: string;
  readonly now: () => number;
  /** The command and its arguments, as typed (`set-plan free`): ids and plans only, never a secret. */
  readonly command: string;
  /** What the change did, in a line (from the record it leaves). */
  readonly result: (after: KeyRecord) => string;
  readonly standingBefore?: AuditStanding;
}

/** The entry of a change made on `before` (absent for a new key), for the record write to put with it. */
export const entryOf =
  (change: Change, before: KeyRecord | undefined): AuditOf =>
  (after): AuditEntry => ({
    keyId: after.keyId,
    at: new Date(change.now()).toISOString(),
    command: change.command,
    stage: change.stage,
    ...change.who,
    ...(before ? { before: auditState(before) } : {}),
    after: auditState(after),
    ...(change.standingBefore && Object.keys(change.standingBefore).length
      ? { standingBefore: change.standingBefore }
      : {}),
    result: change.result(after),
  });
