/**
 * The admin tool's storage ports in memory, for runs too large for DynamoDB Local (a command on 100,000 keys): the key
 * store's contract (lambdas/storage/key-store.ts) kept where the commands rely on it (writes conditional on the version
 * read, StaleKeyRecordError otherwise; a rotation moves the record under its new hash; each write's history entry made
 * from the record it leaves) and no more: no listing index but the pending keys and the owners', no counters (every key unused today),
 * and the standing changes a write carries are counted, not applied.
 */
import { StaleKeyRecordError, type KeyRecord } from '../../lambdas/domain/keys.ts';
import type { AdminDeps, KeyAdminStorePort } from '../../lib/admin/service.ts';

export interface MemoryStore extends KeyAdminStorePort {
  /** History entries and standing changes the writes carried. */
  readonly written: { entries: number; standing: number };
  readonly size: () => number;
}

export function memoryStore(): MemoryStore {
  const byHash = new Map<string, KeyRecord>();
  const hashOf = new Map<string, string>();
  /** The pending partition: hashes of undelivered records (what a create run again reads). */
  const pending = new Set<string>();
  /** Key ids by owner (lower case): what a create reads of the owner's recent keys. */
  const byOwner = new Map<string, Set<string>>();
  const written = { entries: 0, standing: 0 };
  const current = (r: KeyRecord) => {
    const now = byHash.get(r.hash);
    if (!now || (now.version ?? 0) !== (r.version ?? 0)) throw new StaleKeyRecordError(r.keyId);
  };
  const put = (r: KeyRecord) => {
    byHash.set(r.hash, r);
    hashOf.set(r.keyId, r.hash);
    const owner = r.owner.toLowerCase();
    if (!byOwner.has(owner)) byOwner.set(owner, new Set());
    byOwner.get(owner)!.add(r.keyId);
    if (r.undelivered) pending.add(r.hash);
    else pending.delete(r.hash);
  };
  const carried = (w: { audit?: (after: KeyRecord) => unknown; standing?: unknown } | undefined, after: KeyRecord) => {
    if (w?.audit) {
      w.audit(after);
      written.entries++;
    }
    if (w?.standing) written.standing++;
  };
  return {
    written,
    size: () => byHash.size,
    async put(record, audit) {
      if (byHash.has(record.hash)) throw new StaleKeyRecordError(record.keyId);
      put(record);
      carried({ ...(audit ? { audit } : {}) }, record);
    },
    async getById(keyId) {
      const hash = hashOf.get(keyId);
      return hash === undefined ? undefined : byHash.get(hash);
    },
    async list() {
      return [...byHash.values()];
    },
    async listPage(filter) {
      // Only what the commands page through: an owner's pending (undelivered) keys, and the check key's owner's.
      const from = filter.pending
        ? [...pending].map((h) => byHash.get(h)!)
        : filter.owner
          ? [...(byOwner.get(filter.owner.toLowerCase()) ?? [])].map((id) => byHash.get(hashOf.get(id)!)!)
          : [...byHash.values()];
      const records = from.filter(
        (r) =>
          (!filter.pending || r.undelivered) &&
          (!filter.owner || r.owner.toLowerCase() === filter.owner.toLowerCase()) &&
          (!filter.plan || r.plan === filter.plan) &&
          (!filter.status || r.status === filter.status),
      );
      return { records, read: records.length };
    },
    reindex: async () => 0,
    readStanding: async () => ({}),
    async update(record, changes, remove = [], with_) {
      current(record);
      const next = { ...record, ...changes, version: (record.version ?? 0) + 1 } as Record<string, unknown>;
      for (const k of remove) delete next[k];
      put(next as unknown as KeyRecord);
      carried(with_, next as unknown as KeyRecord);
      return next as unknown as KeyRecord;
    },
    async replaceHash(record, next, options) {
      current(record);
      if (byHash.has(next.hash)) throw new StaleKeyRecordError(record.keyId);
      byHash.delete(record.hash);
      pending.delete(record.hash);
      put(next);
      carried(options, next);
    },
    history: async () => [],
    reindexHistory: async () => 0,
  };
}

/** The admin's dependencies on a memory store: every key unused today. */
export function memoryDeps(store: MemoryStore, rest: Partial<AdminDeps> = {}): AdminDeps {
  return {
    store,
    limits: { usage: async () => ({ minuteCount: 0, dayCount: 0 }) },
    stage: 'staging',
    whoami: async () => 'arn:aws:sts::123456789012:assumed-role/AnimalStoreAdmin/scale-test',
    ...rest,
  };
}
