/**
 * `keys reconcile --all`: the sweep after an incident. Reads the keys that wait for something: those waiting for
 * purge, then those waiting for a reconcile (the listing index's pending partitions: a change not fully applied, or
 * a record written before versioned writes still on an API key of its own), and reconciles each; then the active
 * Enterprise keys, whose brackets' pools are checked complete (one read each), so a release that adds a pool member
 * is finished by one sweep before it deploys. With `force` (after an incident outside the tool: a usage plan edited
 * by hand, a restored table) it reads and reconciles every key. A key that fails is reported and the sweep goes on;
 * every page ends with a progress line naming the command that resumes after it, so a sweep stopped any way (a failed
 * listing read, Ctrl-C, a lost terminal) goes on from there, and running it again from the start only does what is
 * still pending. Records written before the pending partitions existed are found there after `keys reindex`.
 */
import { limitsOf, type KeyRecord } from '../../lambdas/domain/keys.ts';
import type { ListFilter } from '../../lambdas/storage/key-listing.ts';
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
 * What the sweep reads, in order, each a listing of its own (key-listing.ts): the keys waiting for a reconcile (`p`),
 * then the active Enterprise keys, for their brackets' pools (`e`); with `force`, every key (`a`). Never the whole
 * table unless forced: a sweep when nothing is pending reads the Enterprise keys and nothing else.
 */
type Phase = 'p' | 'e' | 'a';
const PHASES: Readonly<Record<Phase, ListFilter>> = {
  p: { pending: true },
  e: { plan: 'enterprise', status: 'active' },
  a: {},
};

/**
 * A sweep's resume point: `sweep.<phase>[.<the listing's position>]`. A `keys list` cursor (whose filter the sweep
 * does not have: it would silently skip keys) is refused by the sweep, and a sweep's by `keys list`.
 */
export const SWEEP_CURSOR = 'sweep.';

/** A `--after` the sweep cannot resume from: bad input (exit 1), with what to do instead. */
export class SweepCursorRefused extends AdminError {}

/** The phase and listing position a sweep's `--after` names; SweepCursorRefused when it is not a sweep's. */
export function sweepPosition(after: string): { phase: Phase; after?: string } {
  const m = /^sweep\.([pea])(?:\.([A-Za-z0-9_-]{1,4096}))?$/.exec(after);
  if (!m)
    throw new SweepCursorRefused(
      '--after takes the cursor a `keys reconcile --all` printed (it starts with `sweep.`); a `keys list` cursor ' +
        'belongs to a listing with its own filters and would skip keys: leave --after out to sweep from the start',
    );
  return { phase: m[1] as Phase, ...(m[2] ? { after: m[2] } : {}) };
}

const cursorOf = (phase: Phase, after: string | undefined) => `${SWEEP_CURSOR}${phase}${after ? `.${after}` : ''}`;

/** Whether a record needs a reconcile: a change not applied, or an API key of its own from before pools. */
const needsReconcile = (r: KeyRecord) =>
  !converged(r) || !!(r.retiredApiKeyId || r.retiredUsagePlanId || r.apiGatewayKeyId || r.usagePlanId);

/** The command that goes on from `next` (from the start when there is none). */
export const resumeCommand = (next: string | undefined) => `keys reconcile --all${next ? ` --after ${next}` : ''}`;

export async function reconcileAll(
  ctx: AdminContext,
  opts: { after?: string; force?: boolean; pages?: number; progress?: (p: SweepProgress) => void } = {},
): Promise<Sweep> {
  const from: { phase: Phase; after?: string } =
    opts.after === undefined ? { phase: opts.force ? 'a' : 'p' } : sweepPosition(opts.after);
  // A forced sweep's cursor resumes a forced sweep: it goes on reading every key.
  const force = opts.force || from.phase === 'a';
  const reconciled: Sweep['reconciled'][number][] = [];
  const waiting: Sweep['waiting'][number][] = [];
  const failed: Sweep['failed'][number][] = [];
  const done = new Set<string>();
  let seen = 0;
  const visit = async (r: KeyRecord) => {
    if (done.has(r.keyId)) return;
    done.add(r.keyId);
    if (!force && !needsReconcile(r)) {
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
  const phases: Phase[] = force ? ['a'] : ['p', 'e'];
  let pages = 0;
  for (let i = phases.indexOf(from.phase); i < phases.length; i++) {
    const phase = phases[i]!;
    const following = phases[i + 1];
    let after = phase === from.phase ? from.after : undefined;
    for (;;) {
      if (pages++ >= (opts.pages ?? Infinity)) return result({ next: cursorOf(phase, after) });
      let out: Awaited<ReturnType<AdminContext['deps']['store']['listPage']>>;
      try {
        out = await ctx.deps.store.listPage(PHASES[phase], PAGE, after);
      } catch (err) {
        if (err instanceof RangeError)
          throw new SweepCursorRefused(`--after: ${err.message.replaceAll('keys list', 'keys reconcile --all')}`);
        // Nothing of this page was done: the sweep resumes where it began (from the start when nothing was read).
        const atStart = i === 0 && !after && !opts.after;
        return result({
          stopped: `reading the listing failed (${describeError(err)})`,
          ...(atStart ? {} : { next: cursorOf(phase, after) }),
        });
      }
      seen += out.records.length;
      for (const r of out.records) await visit(r);
      after = out.next;
      const next = after ? cursorOf(phase, after) : following ? cursorOf(following, undefined) : undefined;
      opts.progress?.({ seen, changed: reconciled.length, failed: failed.length, ...(next ? { next } : {}) });
      if (!after) break;
    }
  }
  return result({});
}
