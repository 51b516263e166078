/**
 * `keys revoke --owner <owner>`: every active key of a customer revoked, one by one through `keys revoke`'s own
 * write (lifecycle.ts revoke: conditional on the version read, with its history entry in the same transaction), each
 * reported. Run again it converges: the keys it revoked are no longer active, a revoke whose answer was lost is found
 * done (and never written twice: one history entry per key), and what failed is tried again.
 */
import type { KeyRecord } from '../../lambdas/domain/keys.ts';
import type { CommandArgs } from './commands.ts';
import type { AdminContext } from './context.ts';
import { RESTORE_WINDOW_DAYS, revoke } from './lifecycle.ts';
import { AdminError, describeError, type KeyAdminStorePort } from './ports.ts';
import { PartialFailure, printed, shellWord, type Printed } from './printed.ts';
import { CHECK_KEY_OWNER, checkOwner } from './rules.ts';

/** The listing's page size for the owner's keys (key-listing.ts takes up to 1,000). */
const PAGE = 1000;

/** The command that finishes an owner's revoke, whatever stopped it. */
export const ownerRevokeLine = (owner: string) => `keys revoke --owner ${shellWord(owner)}`;

/**
 * The owner's active keys, as the listing index has them (owner matched exactly, case-insensitively), every page:
 * what `keys revoke --owner` revokes, and what its production confirmation counts (cli.ts).
 */
export async function ownerActiveKeys(store: Pick<KeyAdminStorePort, 'listPage'>, owner: string): Promise<KeyRecord[]> {
  const found: KeyRecord[] = [];
  let after: string | undefined;
  do {
    const page = await store.listPage({ owner, status: 'active' }, PAGE, after);
    found.push(...page.records);
    after = page.next;
  } while (after);
  return found;
}

/** What became of one key. */
export interface OwnerKeyOutcome {
  readonly keyId: string;
  readonly plan: string;
  /** `already`: revoked before this run got to it (an earlier run whose answer was lost, another admin). */
  readonly outcome: 'revoked' | 'already' | 'failed';
  readonly revokedAt?: string;
  /** Why it failed (`failed` only). */
  readonly error?: string;
}

/** What `keys revoke --owner` did: each active key it found, in the listing's order. */
export interface OwnerRevoked {
  readonly owner: string;
  readonly keys: readonly OwnerKeyOutcome[];
}

/**
 * Revokes every active key of `owner`, reporting each as it goes (`report`). The keys are listed first, every page,
 * and revoked after: a listing that fails revokes nothing. A key that fails does not stop the others; the command then
 * fails naming itself (ownerRevokeLine), which revokes what is left. A key made after the listing is not revoked
 * (the run says how many it found; run again, it finds that one).
 */
export async function revokeOwner(
  ctx: AdminContext,
  owner: string,
  report: (k: OwnerKeyOutcome) => void = () => {},
): Promise<OwnerRevoked> {
  const name = checkOwner(owner);
  const again = ownerRevokeLine(name);
  // Who: asked before the first write, as every change is: a principal that cannot be named revokes nothing.
  await ctx.actor();
  const active = await ownerActiveKeys(ctx.deps.store, name).catch((err: unknown) => {
    if (err instanceof AdminError) throw err;
    throw new AdminError(
      `${name}'s keys could not be listed (${describeError(err)}); nothing was revoked: run \`${again}\``,
    );
  });
  const keys: OwnerKeyOutcome[] = [];
  for (const r of active) {
    let k: OwnerKeyOutcome;
    try {
      const done = await revoke(ctx, r.keyId);
      k = {
        keyId: r.keyId,
        plan: done.plan,
        outcome: done.already ? 'already' : 'revoked',
        ...(done.revokedAt ? { revokedAt: done.revokedAt } : {}),
      };
    } catch (err) {
      k = await afterFailure(ctx, r, err);
    }
    keys.push(k);
    report(k);
  }
  return { owner: name, keys };
}

/**
 * A key whose revoke failed, read back: a revoke whose answer was lost may have landed (with its history entry, in
 * the same transaction), and then the key is said revoked, not failed; still active, or not readable, it failed.
 */
async function afterFailure(ctx: AdminContext, r: KeyRecord, err: unknown): Promise<OwnerKeyOutcome> {
  const now = await ctx.deps.store.getById(r.keyId).catch(() => undefined);
  if (now?.status === 'revoked')
    return { keyId: r.keyId, plan: r.plan, outcome: 'revoked', ...(now.revokedAt ? { revokedAt: now.revokedAt } : {}) };
  // Its message's own "run the same command again" is this command (the report names it): the reason alone is kept.
  const why = describeError(err).replace(/: run .*$/, '');
  return {
    keyId: r.keyId,
    plan: r.plan,
    outcome: 'failed',
    error: now ? `${why}; it is still active` : `${why}; whether it landed could not be read`,
  };
}

/** One key's outcome as a line. */
export const outcomeLine = (k: OwnerKeyOutcome) =>
  k.outcome === 'revoked'
    ? `Revoked ${k.keyId} (${k.plan})`
    : k.outcome === 'already'
      ? `${k.keyId} (${k.plan}) was already revoked${k.revokedAt ? ` at ${k.revokedAt}` : ''} (nothing changed)`
      : `NOT revoked: ${k.keyId} (${k.plan}): ${k.error}`;

/** What the command prints of a run: each key, then what it comes to. */
export function ownerRevokedText(r: OwnerRevoked): string {
  if (!r.keys.length) return `${r.owner} has no active keys (nothing changed)`;
  const count = (o: OwnerKeyOutcome['outcome']) => r.keys.filter((k) => k.outcome === o).length;
  const [revoked, already, failed] = [count('revoked'), count('already'), count('failed')];
  const summary = [
    `${r.owner}: revoked ${revoked} of ${r.keys.length} active key(s)`,
    already ? `${already} already revoked` : '',
    failed ? `${failed} NOT revoked` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return [
    ...r.keys.map(outcomeLine),
    `${summary}. Requests with them get 401 once cached authorizer results expire (up to 60 s in the cloud); ` +
      `\`keys restore <id>\` within ${RESTORE_WINDOW_DAYS} days undoes one.`,
  ].join('\n');
}

/**
 * `keys revoke --owner <owner>` (revoke's form without a key id): bound as commands.ts binds its commands, the owner
 * checked before anything is connected. Each key's outcome goes to stderr as it lands (`progress`), the whole report
 * to stdout at the end; any key not revoked makes it exit 1 naming itself, after printing what it did.
 */
export const revokeOwnerCommand = ({ o, rest, progress }: CommandArgs) => {
  if (rest[0] !== undefined)
    throw new AdminError('keys revoke takes a key id or --owner, not both: one key, or every key of an owner');
  const owner = checkOwner(o.owner);
  // The stage's pre-traffic check keys: revoked, the next deploy's check fails; `keys issue-check-key` replaces one.
  if (owner.toLowerCase() === CHECK_KEY_OWNER)
    throw new AdminError(
      `the ${CHECK_KEY_OWNER} keys are the stage's pre-traffic check keys, which every deploy's check uses: revoke ` +
        `one by its id if it must go (\`keys list --owner ${CHECK_KEY_OWNER}\` lists them), then run ` +
        'keys issue-check-key',
    );
  return async (admin: { revokeOwner: RevokeOwnerMethod }): Promise<Printed> => {
    const r = await admin.revokeOwner(owner, (k) => progress(outcomeLine(k), k));
    const out = printed(ownerRevokedText(r), r);
    const failed = r.keys.filter((k) => k.outcome === 'failed').length;
    if (failed)
      throw new PartialFailure(
        `${failed} of ${r.owner}'s ${r.keys.length} active key(s) NOT revoked (listed above): run ` +
          `\`${ownerRevokeLine(r.owner)}\`, which revokes what is left`,
        out,
      );
    return out;
  };
};

/** The method keyAdmin (service.ts) gains: `revokeOwner: (owner, report) => revokeOwner(ctx, owner, report)`. */
export type RevokeOwnerMethod = (owner: string, report?: (k: OwnerKeyOutcome) => void) => Promise<OwnerRevoked>;
