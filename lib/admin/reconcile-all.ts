/**
 * `keys reconcile --all`: the sweep after an incident. Pages through every key (the listing index, `keys list`'s
 * order) and reconciles each one whose record says something is pending (reconcile.ts `converged`), or names an API
 * key or usage plan of its own (a record written before versioned writes says nothing is pending, yet is not in its
 * pool), or every one with `force` (after an incident outside the tool: a usage plan edited by hand, a restored
 * table). A key that fails is reported and the sweep goes on; every page ends with a progress line naming the
 * command that resumes after it, so a sweep stopped any way (a failed listing read, Ctrl-C, a lost terminal) goes on
 * from there, and running it again from the start only does what is still pending. Every bracket in use is checked
 * complete too (one read each), so a release that adds a pool member is finished by one sweep before it deploys.
 */
import { limitsOf, type KeyRecord } from '../../lambdas/domain/keys.ts';
import type { AdminContext } from './context.ts';
import { AdminError } from './ports.ts';
import { converged, describeError, reconcile } from './reconcile.ts';
import { ensureBracketPool } from './reconcile-pool.ts';

export interface Sweep {
  /** Keys looked at, and those a reconcile changed something for. */
  readonly seen: number;
  readonly reconciled: Array<{ readonly keyId: string; readonly did: readonly string[] }>;
  readonly waiting: Array<{ readonly keyId: string; readonly waiting: readonly string[] }>;
  readonly failed: Array<{ readonly keyId: string; readonly error: string }>;
  /** Where a sweep stopped early resumes (`--after`); absent: it went through. */
  readonly next?: string;
  /** Why it stopped early (a listing read that failed); absent: it went through, or stopped after `pages`. */
  readonly stopped?: string;
}

/** What a sweep says after each page (on stderr): how far it got, and where it resumes if it stops now. */
export interface SweepProgress {
  readonly seen: number;
  readonly changed: number;
  readonly failed: number;
  /** The `--after` that resumes after this page; absent: nothing is left. */
  readonly next?: string;
}

/** Keys per page of the sweep. */
const PAGE = 100;

/**
 * A sweep's resume point is the listing's position wrapped in its own prefix: a `keys list` cursor (whose filter the
 * sweep does not have: it would silently skip keys) is refused by the sweep, and a sweep's by `keys list`.
 */
export const SWEEP_CURSOR = 'sweep.';

/** A `--after` the sweep cannot resume from: bad input (exit 1), with what to do instead. */
export class SweepCursorRefused extends AdminError {}

/** The listing position a sweep's `--after` names; SweepCursorRefused when it is not a sweep's. */
export function sweepPosition(after: string): string {
  if (!after.startsWith(SWEEP_CURSOR) || !/^[A-Za-z0-9_-]{1,4096}$/.test(after.slice(SWEEP_CURSOR.length)))
    throw new SweepCursorRefused(
      '--after takes the cursor a `keys reconcile --all` printed (it starts with `sweep.`); a `keys list` cursor ' +
        'belongs to a listing with its own filters and would skip keys: leave --after out to sweep from the start',
    );
  return after.slice(SWEEP_CURSOR.length);
}

/** Whether a record needs a reconcile: a change not applied, or an API key of its own from before pools. */
const needsReconcile = (r: KeyRecord) =>
  !converged(r) || !!(r.retiredApiKeyId || r.retiredUsagePlanId || r.apiGatewayKeyId || r.usagePlanId);

/** The command that goes on from `next` (from the start when there is none). */
export const resumeCommand = (next: string | undefined) => `keys reconcile --all${next ? ` --after ${next}` : ''}`;

export async function reconcileAll(
  ctx: AdminContext,
  opts: { after?: string; force?: boolean; pages?: number; progress?: (p: SweepProgress) => void } = {},
): Promise<Sweep> {
  let after = opts.after === undefined ? undefined : sweepPosition(opts.after);
  const reconciled: Sweep['reconciled'][number][] = [];
  const waiting: Sweep['waiting'][number][] = [];
  const failed: Sweep['failed'][number][] = [];
  const done = new Set<string>();
  let seen = 0;
  const visit = async (r: KeyRecord) => {
    if (done.has(r.keyId)) return;
    done.add(r.keyId);
    if (!opts.force && !needsReconcile(r)) {
      // A converged key's bracket pool may still lack a member a newer release names (its probation member): the
      // authorizer would name a key on no usage plan, which API Gateway answers 403. One read per bracket per sweep.
      const limits = r.status === 'active' && r.plan === 'enterprise' ? limitsOf(r) : undefined;
      if (!limits) return;
      try {
        const made = await ensureBracketPool(ctx, limits);
        if (made.length) reconciled.push({ keyId: r.keyId, did: made.map((m) => `made ${m}`) });
      } catch (err) {
        failed.push({ keyId: r.keyId, error: `its Enterprise bracket pool at the gateway (${describeError(err)})` });
      }
      return;
    }
    try {
      const out = await reconcile(ctx, r.keyId);
      if (out.did.length) reconciled.push({ keyId: r.keyId, did: out.did });
      if (out.waiting.length) waiting.push({ keyId: r.keyId, waiting: out.waiting });
    } catch (err) {
      failed.push({ keyId: r.keyId, error: describeError(err) });
    }
  };
  const result = (extra: Partial<Sweep>): Sweep => ({ seen, reconciled, waiting, failed, ...extra });
  const resumeAt = (position: string | undefined) => (position ? `${SWEEP_CURSOR}${position}` : undefined);
  // Keys with something of their own left at the gateway first: a listing need not hold them (they wait for purge).
  if (!opts.after) {
    let due: KeyRecord[];
    try {
      due = await ctx.deps.store.listDue(ctx.now());
    } catch (err) {
      return result({ stopped: `reading the keys waiting for purge failed (${describeError(err)})` });
    }
    for (const r of due) await visit(r);
  }
  for (let page = 0; page < (opts.pages ?? Infinity); page++) {
    let out: Awaited<ReturnType<AdminContext['deps']['store']['listPage']>>;
    try {
      out = await ctx.deps.store.listPage({}, PAGE, after);
    } catch (err) {
      if (err instanceof RangeError)
        throw new SweepCursorRefused(`--after: ${err.message.replaceAll('keys list', 'keys reconcile --all')}`);
      // Nothing of this page was done: the sweep resumes where it began.
      return result({
        stopped: `reading the listing failed (${describeError(err)})`,
        ...(after ? { next: resumeAt(after) } : {}),
      });
    }
    seen += out.records.length;
    for (const r of out.records) await visit(r);
    after = out.next;
    opts.progress?.({
      seen,
      changed: reconciled.length,
      failed: failed.length,
      ...(after ? { next: resumeAt(after) } : {}),
    });
    if (!after) break;
  }
  return result(after ? { next: resumeAt(after) } : {});
}
