/**
 * `keys issue-check-key`: the pre-traffic check's own key on a stage (lambdas/hooks: each deployment's new version is
 * called with it before traffic shifts), issued and stored where the hook reads it, in one command:
 * 1. a Business key with owner `pre-traffic-check`, made by `keys create`'s own code (lifecycle.ts create: recorded
 *    under a placeholder, then activated; a create that stopped is finished by the next, under the same key id);
 * 2. its secret put in the stage's Secrets Manager secret (checkKeySecretName), never printed unless asked for.
 * Run again it converges from wherever the last run stopped: the key active and the secret holding a secret of it →
 * nothing to do; the key active but its secret never stored (the write failed, the process died after the create)
 * → the key is rotated (a fresh secret under the same id: nobody holds the old one) and that is stored; a create
 * left unfinished → finished. It never makes a second active check key. Each change is the create's or the rotate's,
 * so `keys history <id>` shows it, with who made it.
 */
import { hashKey, type KeyRecord } from '../../lambdas/domain/keys.ts';
import type { AdminContext } from './context.ts';
import { create, rotate, setPlan } from './lifecycle.ts';
import { AdminError, describeError } from './ports.ts';
import { CHECK_KEY_OWNER, view, type KeyView } from './rules.ts';

export { CHECK_KEY_OWNER } from './rules.ts';

/**
 * Its plan: the check sends 400 requests per read operation, paced within Business's limits (a Free key cannot
 * finish; docs/deployment.md, "The pre-traffic check").
 */
export const CHECK_KEY_PLAN = 'business';
/** The command that issues it, and finishes it from any step a run stopped at. */
export const ISSUE_CHECK_KEY = 'keys issue-check-key';

export interface IssuedCheckKey {
  /** What this run did: made the key, gave it a secret to store (rotated), or found both in place. */
  readonly did: 'created' | 'rotated' | 'nothing';
  /** The secret now in the secret (the CLI prints it only with --show). */
  readonly key: string;
  readonly record: KeyView;
  readonly secretName: string;
  /** Set when the key was on Free and was moved to Business (Free cannot pace the check: the hook refuses it). */
  readonly movedFrom?: 'free';
}

/** A failure before the secret is stored: what it stopped at, and the one command that finishes it. */
const unfinished = (what: string, err: unknown) =>
  new AdminError(`${what}: run \`${ISSUE_CHECK_KEY}\` again to finish it (${describeError(err).replaceAll('`', "'")})`);

export async function issueCheckKey(ctx: AdminContext, stage: string): Promise<IssuedCheckKey> {
  const secrets = ctx.deps.secrets;
  if (!secrets) throw new AdminError(`this target has no Secrets Manager to store the check key in`);
  // Imported here: the construct's module loads the CDK, which no other admin command needs.
  const { checkKeySecretName } = await import('../constructs/pre-traffic-hook.ts');
  const secretName = checkKeySecretName(stage);
  const [keys, stored] = await Promise.all([
    activeCheckKeys(ctx).catch((err: unknown) => {
      throw unfinished('nothing was changed: the check keys could not be listed', err);
    }),
    secrets.read(secretName).catch((err: unknown) => {
      if (err instanceof AdminError) throw err;
      throw unfinished(`nothing was changed: the secret ${secretName} could not be read`, err);
    }),
  ]);
  const storedHash = stored ? hashKey(stored) : undefined;
  // An unfinished create is the create's to finish (below), and is not a working key.
  const usable = keys.filter((r) => !r.undelivered);
  if (usable.length > 1) {
    // Made by hand, or before this command: the hook uses one, and any other is a working secret with no use.
    const keep = usable.find((r) => r.hash === storedHash) ?? usable[0]!;
    const others = usable.filter((r) => r !== keep).map((r) => r.keyId);
    throw new AdminError(
      `${usable.length} active keys have owner ${CHECK_KEY_OWNER} (${usable.map((r) => r.keyId).join(', ')}); the ` +
        `check uses one: keep ${keep.keyId}${keep.hash === storedHash ? ' (its secret is stored)' : ''} and revoke ` +
        `the other${others.length > 1 ? 's' : ''} (run \`keys revoke ${others[0]}\`${others.length > 1 ? ` and ${others.slice(1).join(', ')}` : ''}), then run ${ISSUE_CHECK_KEY} again`,
    );
  }
  let current = usable[0];
  let movedFrom: 'free' | undefined;
  // A Free key (made by hand, as the docs once allowed) cannot send the check's requests in time and the hook fails
  // every deploy for it, naming this command: the key moves to Business, keeping its secret.
  if (current?.plan === 'free') {
    const keyId = current.keyId;
    await setPlan(ctx, keyId, { plan: CHECK_KEY_PLAN }).catch((err: unknown) => {
      throw unfinished(`key ${keyId} is on Free, which cannot pace the check, and was not moved to Business`, err);
    });
    current = (await ctx.find(keyId).catch(() => undefined)) ?? current;
    movedFrom = 'free';
  }
  const moved = movedFrom ? { movedFrom } : {};
  if (current && current.hash === storedHash)
    return { did: 'nothing', key: stored!, record: view(current), secretName, ...moved };
  // The secret is missing or holds no secret of the key: nobody can be using the key's secret, so it is replaced.
  const made = current
    ? await rotate(ctx, current.keyId).then(
        (r) => ({ did: 'rotated' as const, key: r.key, record: r.record }),
        (err: unknown) => {
          throw unfinished(`key ${current.keyId} was not given a secret to store`, err);
        },
      )
    : await create(ctx, { owner: CHECK_KEY_OWNER, plan: CHECK_KEY_PLAN }).then(
        (c) => ({ did: 'created' as const, key: c.key, record: c.record }),
        (err: unknown) => {
          throw unfinished('the check key was not made, or made without a working secret', err);
        },
      );
  await secrets.write(secretName, made.key).catch((err: unknown) => {
    throw new AdminError(
      `key ${made.record.keyId} is made but its secret did not reach the secret ${secretName} ` +
        `(${describeError(err).replaceAll('`', "'")}): run \`${ISSUE_CHECK_KEY}\` again: it gives the key a new ` +
        'secret under the same id and stores that',
    );
  });
  return { ...made, secretName, ...moved };
}

/** Every active key of the check's owner, whatever its plan (one made by hand on another plan is still one). */
async function activeCheckKeys(ctx: AdminContext): Promise<KeyRecord[]> {
  const found: KeyRecord[] = [];
  let after: string | undefined;
  do {
    const page = await ctx.deps.store.listPage({ owner: CHECK_KEY_OWNER, status: 'active' }, 100, after);
    found.push(...page.records);
    after = page.next;
  } while (after);
  // Read again from the table (the listing index may lag a write), oldest first.
  const now = await Promise.all(found.map((r) => ctx.deps.store.getById(r.keyId)));
  return now
    .filter((r): r is KeyRecord => r?.status === 'active' && r.owner.toLowerCase() === CHECK_KEY_OWNER)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}
