/**
 * What every key administration command shares: its dependencies and clock, finding a record, and re-applying a
 * change to the latest version of a record.
 */
import { StaleKeyRecordError, type KeyRecord } from '../../lambdas/domain/keys.ts';
import type { AuditActor } from '../../lambdas/storage/audit-store.ts';
import { osUser, resolveActor } from './audit.ts';
import { AdminError, type AdminDeps } from './ports.ts';

/** Attempts of a command whose record keeps changing under it (another admin at work) before it gives up. */
const MAX_ATTEMPTS = 5;

export interface AdminContext {
  readonly deps: AdminDeps;
  readonly now: () => number;
  find(keyId: string): Promise<KeyRecord>;
  /**
   * Reads the key and applies a change to that version; when another write came first (to the record, or to what the
   * change read of its standing and counters), reads again and retries.
   */
  onLatest<T>(keyId: string, apply: (record: KeyRecord) => Promise<T>): Promise<T>;
  /**
   * Who is making this run's changes (audit.ts), asked once, before the first write: a principal that cannot be
   * named stops the command with nothing changed.
   */
  actor(): Promise<AuditActor>;
}

export function adminContext(deps: AdminDeps, options: { actor?: string } = {}): AdminContext {
  let who: Promise<AuditActor> | undefined;
  const actor = () =>
    (who ??= resolveActor(deps.whoami ?? (async () => osUser()), options.actor).catch((err: unknown) => {
      who = undefined;
      throw new AdminError(
        `could not tell who you are (${(err as Error)?.name}: ${(err as Error)?.message}), and every change is ` +
          'recorded with who made it: nothing was changed; check your AWS credentials and run the same command again',
      );
    }));
  const find = async (keyId: string): Promise<KeyRecord> => {
    const record = await deps.store.getById(keyId);
    if (!record) throw new AdminError(`no key with id ${keyId}`);
    return record;
  };
  return {
    deps,
    now: deps.now ?? Date.now,
    find,
    onLatest: (keyId, apply) => onLatest(find, keyId, apply),
    actor,
  };
}

async function onLatest<T>(
  find: (keyId: string) => Promise<KeyRecord>,
  keyId: string,
  apply: (record: KeyRecord) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await apply(await find(keyId));
    } catch (err) {
      if (!(err instanceof StaleKeyRecordError)) throw err;
      if (attempt >= MAX_ATTEMPTS)
        throw new AdminError(
          `key ${keyId} kept changing while this command ran (another admin at work, or its requests); nothing was ` +
            'changed, run it again',
        );
    }
  }
}
