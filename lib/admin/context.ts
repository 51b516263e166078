/**
 * What every key administration command shares: its dependencies and clock, finding a record, re-applying a change
 * to the latest version of a record, and the Enterprise bracket pools already found complete in this run.
 */
import { StaleKeyRecordError, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { AdminError, type AdminDeps } from './ports.ts';

/** Attempts of a command whose record keeps changing under it (another admin at work) before it gives up. */
const MAX_ATTEMPTS = 5;

export interface AdminContext {
  readonly deps: AdminDeps;
  readonly now: () => number;
  find(keyId: string): Promise<KeyRecord>;
  /** Reads the key and applies a change to that version; when another write came first, reads again and retries. */
  onLatest<T>(keyId: string, apply: (record: KeyRecord) => Promise<T>): Promise<T>;
  /** Bracket ids whose pool this run has seen complete (reconcile.ts): asked of API Gateway once per run. */
  readonly pools: Set<string>;
}

export function adminContext(deps: AdminDeps): AdminContext {
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
    pools: new Set(),
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
          `key ${keyId} kept changing while this command ran (another admin at work?); nothing was changed, run it again`,
        );
    }
  }
}
