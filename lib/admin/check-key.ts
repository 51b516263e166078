/**
 * `keys issue-check-key`: the pre-traffic check's keys on a stage, one per plan, stored in the secret the hook reads.
 * The hook checks that the authorizer puts each on its plan's usage key, and sends Business's to the operations.
 * For each plan: a key with owner `pre-traffic-check`, made by `keys create`'s code (lifecycle.ts), then the secret
 * rewritten with every key so far (formatCheckKeys), so a later stop loses none. Keys print only if asked.
 * A rerun converges: an active key whose secret was never stored is rotated (nobody holds the old secret); an
 * unfinished create is finished; an old-form secret (one bare key) is upgraded. It never makes a second active check
 * key on a plan, nor touches another owner's key. Each change is a create or rotate, so `keys history` shows it.
 */
import { PLAN_NAMES, PLANS, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import { hashKey, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { checkKeysOf, formatCheckKeys } from '../../lambdas/hooks/check-keys.ts';
import type { AdminContext } from './context.ts';
import { create, revoke, rotate } from './lifecycle.ts';
import { AdminError, describeError } from './ports.ts';
import { printed, type Printed } from './printed.ts';
import { CHECK_KEY_OWNER, view, type KeyView } from './rules.ts';

export { CHECK_KEY_OWNER } from './rules.ts';

/**
 * The Enterprise check key's limits. The check sends it to the authorizer only, invoked directly, which counts
 * nothing against a key: no request of the check spends them. They bound what its secret gets if it leaks (a sixth
 * of a Free key's) and still let an operator try it by hand through the gateway when the check says it is refused.
 */
export const CHECK_KEY_ENTERPRISE_LIMITS: PlanLimits = { perMinute: 10, perDay: 100 };

/** The command that issues them, and finishes them from any step a run stopped at. */
export const ISSUE_CHECK_KEY = 'keys issue-check-key';

/** What a run did for one plan's key. */
export interface IssuedPlanKey {
  readonly plan: PlanName;
  /**
   * `created`: made (or a create left unfinished, finished); `rotated`: active but the secret held none of its
   * secrets, so given a new one; `nothing`: the secret holds its secret already.
   */
  readonly did: 'created' | 'rotated' | 'nothing';
  /** Its secret, as now stored (the CLI prints it only with --show). */
  readonly key: string;
  readonly record: KeyView;
}

export interface IssuedCheckKeys {
  readonly secretName: string;
  /** One per plan, in PLAN_NAMES order; a run that stopped has the plans it finished. */
  readonly keys: readonly IssuedPlanKey[];
  /** Whether this run wrote the secret. */
  readonly stored: boolean;
  /** The secret held the old form (one bare key) before this run. */
  readonly upgraded: boolean;
  /**
   * What another admin (another run of this command, or a rotate by hand) changed while this run ran: what, who and
   * when, one line each. Not empty: the run exits non-zero, and run again it converges.
   */
  readonly changedMeanwhile?: readonly string[];
}

/** A run that stopped: what it did before, and the one command that finishes it (in the message). */
export class CheckKeysUnfinished extends AdminError {
  readonly done: IssuedCheckKeys;
  constructor(message: string, done: IssuedCheckKeys) {
    super(message);
    this.done = done;
  }
}

const quoted = (err: unknown) => describeError(err).replaceAll('`', "'");

export async function issueCheckKey(ctx: AdminContext, stage: string): Promise<IssuedCheckKeys> {
  const secrets = ctx.deps.secrets;
  if (!secrets) throw new AdminError(`this target has no Secrets Manager to store the check keys in`);
  // Imported here: the construct's module loads the CDK, which no other admin command needs.
  const { checkKeySecretName } = await import('../constructs/pre-traffic-hook.ts');
  const secretName = checkKeySecretName(stage);
  const again = (what: string, err: unknown) =>
    `${what}: run \`${ISSUE_CHECK_KEY}\` again to finish it (${quoted(err)})`;
  const [keys, value] = await Promise.all([
    activeCheckKeys(ctx).catch((err: unknown) => {
      throw new AdminError(again('nothing was changed: the check keys could not be listed', err));
    }),
    secrets.read(secretName).catch((err: unknown) => {
      if (err instanceof AdminError) throw err;
      throw new AdminError(again(`nothing was changed: the secret ${secretName} could not be read`, err));
    }),
  ]);
  // Every key the secret holds, by its hash: a key keeps its secret wherever the secret put it (the old form's one
  // key, or a plan written by hand). A value that is neither form holds no key anyone can use: it is replaced.
  const held = new Map<string, string>();
  let upgraded = false;
  if (value !== undefined) {
    try {
      const parsed = checkKeysOf(value);
      upgraded = parsed.single !== undefined;
      for (const k of [...Object.values(parsed.byPlan), ...(parsed.single ? [parsed.single] : [])])
        held.set(hashKey(k), k);
    } catch {
      // Garbage: nothing in it is kept, and it is rewritten below.
    }
  }
  const byPlan = new Map<PlanName, KeyRecord[]>(PLAN_NAMES.map((p) => [p, []]));
  // An unfinished create is the create's to finish (below), and is not a working key.
  for (const r of keys) if (!r.undelivered) byPlan.get(r.plan)?.push(r);
  for (const plan of PLAN_NAMES) refuseTwo(plan, byPlan.get(plan)!, held);

  // Each plan's key, once known: those whose secret the secret holds first, so no write below drops one.
  const known = new Map<PlanName, IssuedPlanKey>();
  for (const plan of PLAN_NAMES) {
    const current = byPlan.get(plan)![0];
    const kept = current && held.get(current.hash);
    if (current && kept) known.set(plan, { plan, did: 'nothing', key: kept, record: view(current) });
  }
  let stored = false;
  let written = value;
  const meanwhile: string[] = [];
  const result = (): IssuedCheckKeys => ({
    secretName,
    keys: PLAN_NAMES.flatMap((p) => known.get(p) ?? []),
    stored,
    upgraded,
    ...(meanwhile.length ? { changedMeanwhile: [...meanwhile] } : {}),
  });
  const store = async (what: string) => {
    const next = formatCheckKeys(Object.fromEntries([...known].map(([p, k]) => [p, k.key])));
    if (next === written) return;
    await secrets.write(secretName, next).catch((err: unknown) => {
      throw new CheckKeysUnfinished(
        `${what}, but the secret ${secretName} was not written (${quoted(err)}): run \`${ISSUE_CHECK_KEY}\` again: ` +
          'it gives any check key whose secret was not stored a new secret under the same id, and stores them',
        result(),
      );
    });
    written = next;
    stored = true;
  };
  for (const plan of PLAN_NAMES) {
    if (known.has(plan)) continue;
    const current = byPlan.get(plan)![0];
    const made = current
      ? await rotate(ctx, current.keyId).then(
          (r) => ({ plan, did: 'rotated' as const, key: r.key, record: r.record }),
          (err: unknown) => {
            throw new CheckKeysUnfinished(
              again(`the ${plan} check key ${current.keyId} was not given a secret to store`, err),
              result(),
            );
          },
        )
      : await create(ctx, {
          owner: CHECK_KEY_OWNER,
          plan,
          ...(PLANS[plan].limits ? {} : CHECK_KEY_ENTERPRISE_LIMITS),
        }).then(
          (c) => ({ plan, did: 'created' as const, key: c.key, record: c.record }),
          (err: unknown) => {
            throw new CheckKeysUnfinished(
              again(`the ${plan} check key was not made, or made without a working secret`, err),
              result(),
            );
          },
        );
    // Another admin at work on the same key or plan meanwhile: said, and settled so that one key per plan is left.
    if (current) {
      const between = (made.record.version ?? 0) - (current.version ?? 0) - 1;
      if (between > 0) meanwhile.push(await changedBetween(ctx, current, made.record));
    } else {
      const other = await madeMeanwhile(ctx, plan, made.record);
      if (other) {
        // The earlier key stays (its run stores it); this run's own key, whose secret nobody else has, goes.
        await revoke(ctx, made.record.keyId).catch((err: unknown) => {
          throw new CheckKeysUnfinished(
            `${other}; this run's ${plan} check key ${made.record.keyId} could not be revoked (${quoted(err)}): ` +
              `run \`keys show ${made.record.keyId}\``,
            result(),
          );
        });
        meanwhile.push(`${other}: this run revoked its own ${plan} key ${made.record.keyId} (never stored)`);
        continue;
      }
    }
    known.set(plan, made);
    // Stored at once: a run that stops at a later plan keeps this one.
    await store(
      `the ${plan} check key ${made.record.keyId} is ${made.did === 'created' ? 'made' : 'given a new secret'}`,
    );
  }
  // Rewritten when it held more, less or another form than the keys (the old form's one key, a key of nobody's):
  // the hook reads exactly these.
  if (!meanwhile.length) await store('every plan has its check key');
  // Read back: what this run says is stored is what the hook reads, and each key still takes its secret (another
  // run's write or rotation after this one's would make it untrue).
  if (!meanwhile.length) meanwhile.push(...(await readBack(ctx, secretName, written, known)));
  if (meanwhile.length)
    throw new CheckKeysUnfinished(
      `another admin changed the check keys while this run ran: ${meanwhile.join('; ')}: run \`${ISSUE_CHECK_KEY}\` ` +
        'again: it keeps what works, and gives any key whose secret is not stored a new one',
      result(),
    );
  return result();
}

/** Who made a key's latest change, and when, from its history (`keys history <id>`); unknown: said so. */
async function lastChange(ctx: AdminContext, keyId: string, after = -1): Promise<string> {
  const entries = await ctx.deps.store.history(keyId).catch(() => []);
  const e = entries.filter((x) => (x.after.version ?? 0) > after).at(-1) ?? entries.at(-1);
  return e ? `${e.command.split(' ')[0]} by ${e.actor} at ${e.at}` : 'a change not yet in its history';
}

/** The change another admin made to a key between this run's read of it and this run's rotation. */
async function changedBetween(ctx: AdminContext, read: KeyRecord, made: KeyView): Promise<string> {
  const entries = await ctx.deps.store.history(read.keyId).catch(() => []);
  const v0 = read.version ?? 0;
  const theirs = entries.filter((e) => (e.after.version ?? 0) > v0 && (e.after.version ?? 0) < (made.version ?? 0));
  const said = theirs.map((e) => `${e.command.split(' ')[0]} by ${e.actor} at ${e.at}`).join(', ');
  return (
    `the ${read.plan} check key ${read.keyId} was changed (${said || 'by another run'}) after this run read it: ` +
    "this run's rotation replaced that secret, and stored its own"
  );
}

/**
 * Another active check key of this plan (or one whose create is under way), made while this run made `mine` (none was
 * there when it listed them): the other run's key stays, and this run's goes. Whichever run looks last sees both, so
 * two are never left; when both look after both writes, both go, each run says so, and the rerun makes one. (Which
 * was made first does not settle it: a run's createdAt is read before its write lands, after the other's look.)
 */
async function madeMeanwhile(ctx: AdminContext, plan: PlanName, mine: KeyView): Promise<string | undefined> {
  const found: KeyRecord[] = [];
  let after: string | undefined;
  do {
    const page = await ctx.deps.store.listPage({ owner: CHECK_KEY_OWNER, plan, status: 'active' }, 100, after);
    found.push(...page.records);
    after = page.next;
  } while (after);
  const now = await Promise.all(
    found.filter((r) => r.keyId !== mine.keyId).map((r) => ctx.deps.store.getById(r.keyId)),
  );
  const earlier = now
    .filter((r): r is KeyRecord => r?.status === 'active' && r.plan === plan)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0];
  if (!earlier) return undefined;
  const made = earlier.undelivered
    ? `its create, started at ${earlier.createdAt}, is under way`
    : await lastChange(ctx, earlier.keyId);
  return `another run made the ${plan} check key ${earlier.keyId} (${made}) while this one made its own`;
}

/**
 * The secret and the keys as they are now, against what this run stored: each difference, with who changed the key
 * and when (its history), one line each; none: the state this run prints.
 */
async function readBack(
  ctx: AdminContext,
  secretName: string,
  written: string | undefined,
  known: ReadonlyMap<PlanName, IssuedPlanKey>,
): Promise<string[]> {
  const [value, records] = await Promise.all([
    ctx.deps.secrets!.read(secretName),
    Promise.all([...known.values()].map((k) => ctx.deps.store.getById(k.record.keyId))),
  ]);
  const found: string[] = [];
  if (value !== written) found.push(`the secret ${secretName} was written again after this run wrote it`);
  for (const [i, k] of [...known.values()].entries()) {
    const now = records[i];
    if (now?.status === 'active' && now.hash === hashKey(k.key)) continue;
    const what = !now ? 'is gone' : now.status !== 'active' ? `is ${now.status}` : 'has another secret now';
    found.push(
      `the ${k.plan} check key ${k.record.keyId} ${what} (${await lastChange(ctx, k.record.keyId, k.record.version ?? 0)})`,
    );
  }
  return found;
}

/**
 * More than one active check key on a plan (made by hand, or before this command): the hook uses one, and any other is
 * a working secret with no use. The admin chooses which goes: the command does not revoke a working key.
 */
function refuseTwo(plan: PlanName, usable: readonly KeyRecord[], held: ReadonlyMap<string, string>): void {
  if (usable.length <= 1) return;
  const keep = usable.find((r) => held.has(r.hash)) ?? usable[0]!;
  const others = usable.filter((r) => r !== keep).map((r) => r.keyId);
  throw new AdminError(
    `${usable.length} active ${plan} keys have owner ${CHECK_KEY_OWNER} (${usable.map((r) => r.keyId).join(', ')}); ` +
      `the check uses one per plan: keep ${keep.keyId}${held.has(keep.hash) ? ' (its secret is stored)' : ''} and ` +
      `revoke the other${others.length > 1 ? 's' : ''} (run \`keys revoke ${others[0]}\`` +
      `${others.length > 1 ? ` and ${others.slice(1).join(', ')}` : ''}), then run ${ISSUE_CHECK_KEY} again`,
  );
}

/** Every active key of the check's owner, whatever its plan, oldest first. */
async function activeCheckKeys(ctx: AdminContext): Promise<KeyRecord[]> {
  const found: KeyRecord[] = [];
  let after: string | undefined;
  do {
    const page = await ctx.deps.store.listPage({ owner: CHECK_KEY_OWNER, status: 'active' }, 100, after);
    found.push(...page.records);
    after = page.next;
  } while (after);
  // Read again from the table (the listing index may lag a write).
  const now = await Promise.all(found.map((r) => ctx.deps.store.getById(r.keyId)));
  return now
    .filter((r): r is KeyRecord => r?.status === 'active' && r.owner.toLowerCase() === CHECK_KEY_OWNER)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

const DID: Record<IssuedPlanKey['did'], string> = {
  created: 'created',
  rotated: 'given a new secret (the secret held none of its secrets)',
  nothing: 'in place (the secret holds its secret)',
};

/**
 * What the command prints: every plan's key id and what was done to it, then what was done to the secret. The keys
 * only with `show` (the hook reads them from the secret; a terminal's scrollback or a CI log is one more place they
 * would leak from). `stopped`: a run that failed part-way (the failure is the `error:` line after it).
 */
export function printedCheckKeys(r: IssuedCheckKeys, show: boolean, stopped = false): Printed {
  const lines = r.keys.map((k) => {
    const limits = k.plan === 'enterprise' && k.record.limits;
    const extra = limits ? ` (${limits.perMinute}/min, ${limits.perDay}/day)` : '';
    return `  ${k.plan.padEnd(10)}  ${k.record.keyId}  ${DID[k.did]}${extra}`;
  });
  const secret = `the secret ${r.secretName}`;
  const summary = r.changedMeanwhile?.length
    ? `Another admin changed the check keys while this run ran (the error says what, who and when): ${secret} may ` +
      'not hold the keys above'
    : stopped
      ? `Stopped before every plan's key was stored in ${secret}${r.stored ? ' (the keys above that were made are stored)' : ''}`
      : r.stored
        ? `Stored every plan's key in ${secret}${r.upgraded ? ' (it held the old form, one key: now one per plan)' : ''}`
        : `${secret[0]!.toUpperCase()}${secret.slice(1)} holds every plan's key: nothing to do`;
  const human = [
    `Pre-traffic check keys (owner ${CHECK_KEY_OWNER}), by plan:`,
    ...lines,
    summary,
    ...(show
      ? r.keys.map((k) => `API key (${k.plan}): ${k.key}`)
      : ['Their secrets are not printed (the hook reads them from the secret; --show prints them)']),
  ].join('\n');
  const did = r.keys.some((k) => k.did === 'created')
    ? 'created'
    : r.keys.some((k) => k.did === 'rotated')
      ? 'rotated'
      : r.stored
        ? 'stored'
        : 'nothing';
  return printed(human, {
    did,
    secretName: r.secretName,
    stored: r.stored,
    upgraded: r.upgraded,
    keys: r.keys.map((k) => ({ did: k.did, ...k.record, ...(show ? { key: k.key } : {}) })),
  });
}
