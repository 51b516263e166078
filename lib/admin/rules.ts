/**
 * The admin tool's pure rules: what an admin sees of a record, which custom limits are acceptable, and how a
 * multi-step change undoes itself on failure.
 */
import { ACCOUNT_THROTTLE, MAX_CUSTOM_LIMITS, type PlanLimits, type PlanName } from '../../contract/plans.ts';
import { limitsOf, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { AdminError } from './ports.ts';

/** A key record as shown to admins: never the hash. */
export type KeyView = Omit<KeyRecord, 'hash'> & { limits: PlanLimits | undefined };
export const view = ({ hash: _hash, writeId: _writeId, ...rest }: KeyRecord): KeyView => ({
  ...rest,
  limits: limitsOf(rest),
});

/** Owners are one line of visible text: a newline or other control character would forge rows in `keys list`. */
export const OWNER_MAX_LENGTH = 128;
export function checkOwner(value: string | undefined): string {
  const owner = value?.trim() ?? '';
  if (!owner) throw new AdminError('--owner is required');
  if (/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(owner))
    throw new AdminError('--owner must be one line of visible text (no control or invisible format characters)');
  if ([...owner].length > OWNER_MAX_LENGTH)
    throw new AdminError(`--owner must be at most ${OWNER_MAX_LENGTH} characters`);
  return owner;
}

/** Key ids are what generateKeyId (and the local dev keys) make: nothing else can name a key. */
export function checkKeyId(value: string): string {
  // The tool's secrets start with ask_ or ask2_ (generateKey, both forms): an admin who pastes one learns so, and
  // where ids are.
  if (/^ask2?_/.test(value))
    throw new AdminError(
      'that is an API key secret, not a key id: use the id (key_…) that `keys create` and `keys list` print, and treat the secret as exposed',
    );
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(value))
    throw new AdminError(
      `"${value.slice(0, 64).replace(/[^\x20-\x7e]/g, '?')}" is not a key id (letters, digits, _ and -)`,
    );
  return value;
}

export function checkLimits(plan: PlanName, perMinute?: number, perDay?: number): PlanLimits | undefined {
  if (plan !== 'enterprise') {
    if (perMinute !== undefined || perDay !== undefined)
      throw new AdminError(`--per-minute/--per-day apply to the enterprise plan only (${plan} has fixed limits)`);
    return undefined;
  }
  if (perMinute === undefined || perDay === undefined)
    throw new AdminError('the enterprise plan needs --per-minute N and --per-day N');
  for (const [name, v, max] of [
    ['--per-minute', perMinute, MAX_CUSTOM_LIMITS.perMinute],
    ['--per-day', perDay, MAX_CUSTOM_LIMITS.perDay],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 1)
      throw new AdminError(`${name} must be a whole number from 1 to ${max.toLocaleString('en-US')}`);
    // Beyond what one key can be served, a limit would promise what the service cannot deliver.
    if (v > max)
      throw new AdminError(
        `${name} ${v.toLocaleString('en-US')} is more than one key can be served: at most ${max.toLocaleString('en-US')} ` +
          `(API Gateway admits ${ACCOUNT_THROTTLE.rateLimit.toLocaleString('en-US')} requests/s per account and Region; docs/rate-limiting.md)`,
      );
  }
  if (perDay < perMinute) throw new AdminError('--per-day must be at least --per-minute');
  return { perMinute, perDay };
}

/** One step of a multi-step change: what it does, and how to undo it (with what it would leave behind if not). */
export interface SagaStep {
  run(): Promise<unknown>;
  undo?(): Promise<unknown>;
  /** What the step made, named for an admin when its undo fails (e.g. "API key abc123"). */
  readonly made?: () => string;
}

const message = (err: unknown) => `${(err as Error)?.name ?? 'Error'}: ${(err as Error)?.message ?? String(err)}`;

/**
 * Runs steps in order; when one fails, undoes it and the completed ones (last first) and rethrows. The failed step is
 * undone too: a call whose answer was lost may have been applied, and every undo is idempotent (it finds its work
 * done when there was nothing to undo). An undo that fails is never swallowed: every undo is still tried, and the
 * error names what was left behind, so nothing is lost track of.
 */
export async function saga(steps: readonly SagaStep[]): Promise<void> {
  const done: SagaStep[] = [];
  for (const step of steps) {
    try {
      await step.run();
    } catch (err) {
      if (step.undo) done.push(step);
      const left: string[] = [];
      for (const d of done.reverse())
        await d.undo!().catch((undoErr: unknown) => left.push(`${d.made?.() ?? 'a step'} (${message(undoErr)})`));
      if (left.length)
        throw new AdminError(
          `${err instanceof AdminError ? err.message : message(err)}; undoing the change failed too, left behind: ` +
            `${left.join('; ')}. Nothing names these in the key records: delete them in API Gateway by hand.`,
        );
      throw err;
    }
    if (step.undo) done.push(step);
  }
}

/** Whether two sets of limits are the same (both absent: the plan's fixed ones). */
export const sameLimits = (a: PlanLimits | undefined, b: PlanLimits | undefined): boolean =>
  a?.perMinute === b?.perMinute && a?.perDay === b?.perDay;
