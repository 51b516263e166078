/**
 * The admin tool's pure rules: what an admin sees of a record and which owners, key ids and custom limits are
 * acceptable.
 */
import {
  ACCOUNT_THROTTLE,
  MAX_CUSTOM_LIMITS,
  OPERATION_COUNT,
  type PlanLimits,
  type PlanName,
} from '../../contract/plans.ts';
import { limitsOf, type KeyRecord } from '../../lambdas/domain/keys.ts';
import { AdminError } from './ports.ts';

/** A key record as shown to admins: never the hash. */
export type KeyView = Omit<KeyRecord, 'hash' | 'bannedUntil' | 'overlaps'> & {
  limits: PlanLimits | undefined;
  /** Earlier secrets' overlaps (`keys rotate --overlap`), their ends in ISO: never their hashes. */
  overlaps?: readonly { readonly until: string }[];
  /** An admin's ban (`keys ban`), ISO; `show` adds the limiter's and the gateway's. */
  adminBannedUntil?: string;
};
export const view = ({ hash: _hash, writeId: _writeId, bannedUntil, overlaps, ...rest }: KeyRecord): KeyView => ({
  ...(Object.fromEntries(Object.entries(rest).filter(([k]) => !OBSOLETE.has(k))) as typeof rest),
  limits: limitsOf(rest),
  ...(overlaps?.length ? { overlaps: overlaps.map((o) => ({ until: new Date(o.until * 1000).toISOString() })) } : {}),
  ...(bannedUntil ? { adminBannedUntil: new Date(bannedUntil * 1000).toISOString() } : {}),
});

/**
 * What records written by earlier releases may still carry and nothing reads: an API key or usage plan of the key's
 * own at the gateway (`keys remove-release-api-keys` deletes those), and bookkeeping no command keeps.
 */
const OBSOLETE = new Set([
  'apiGatewayKeyId',
  'usagePlanId',
  'retiredApiKeyId',
  'retiredUsagePlanId',
  'retiredAt',
  'reconciledVersion',
  'countsShards',
  'dayLifted',
  'dayBansReset',
]);

/** The owner every stage's check key has: the docs, preflight and the hook's messages say it. */
export const CHECK_KEY_OWNER = 'pre-traffic-check';

/**
 * Refuses a paying key on a stage whose authorizer is release 3357b0c's (ownKeyAuthorizer): it names a paying key's
 * own API key, which this tool never makes, so the key would get 403 until this release is deployed. Free keys are
 * named on 3357b0c's Free pool, and the check key is only invoked directly by the pre-traffic hook: both go ahead.
 */
export function refuseOwnKeyAuthorizer(
  deps: { readonly ownKeyAuthorizer?: boolean; readonly stage: string },
  plan: PlanName,
  owner: string,
  what: string,
): void {
  if (!deps.ownKeyAuthorizer || plan === 'free' || owner.toLowerCase() === CHECK_KEY_OWNER) return;
  throw new AdminError(
    `${what} waits for a deploy: the ${deps.stage} stack runs release 3357b0c's authorizer (it has no UsageKeys ` +
      `output), which would answer a ${plan} key 403; deploy this release first (docs/deployment.md, "Upgrading ` +
      'from 3357b0c"). Free keys can be made now',
  );
}

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

/**
 * A secret of the tool's (generateKey, both forms: ask_ or ask2_ and a long base64url body) anywhere in a string: a
 * header pasted whole (`Bearer ask2_…`), with a leading space, or quoted. Such a string is never echoed back.
 */
const SECRET_IN = /(?:^|[^A-Za-z0-9])ask2?_[A-Za-z0-9_-]{16,}/;
export const holdsSecret = (value: string) => SECRET_IN.test(value);

/** A message with every secret in it replaced. */
export const redacted = (message: string) => message.replace(/ask2?_[A-Za-z0-9_-]{16,}/g, '<an API key secret>');

/** A string as the tool may echo it: one line, cut short, and without any secret it holds. */
export const echoed = (value: string, max = 64) =>
  holdsSecret(value) ? '<an API key secret>' : value.slice(0, max).replace(/[^\x20-\x7e]/g, '?');

/** Key ids are what generateKeyId (and the local dev keys) make: nothing else can name a key. */
export function checkKeyId(value: string): string {
  // The tool's secrets start with ask_ or ask2_ (generateKey, both forms): an admin who pastes one learns so, and
  // where ids are. Pasted with what surrounded it (a header, a space), it is still one, and still not echoed.
  if (/^ask2?_/.test(value) || holdsSecret(value))
    throw new AdminError(
      // The one command named is the read that finds the id: never a create (a second key for the same customer).
      'that is an API key secret, not a key id: use its id (key_…), which `keys list` prints (as its create did), and ' +
        'treat the secret as exposed',
    );
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(value))
    throw new AdminError(`"${echoed(value)}" is not a key id (letters, digits, _ and -)`);
  return value;
}

/**
 * The limits an admin gave, checked. `current`: an Enterprise key's limits now, so that a change of one of them keeps
 * the other; without it (a new key, or one moving to Enterprise) both are needed.
 */
export function checkLimits(
  plan: PlanName,
  perMinuteGiven?: number,
  perDayGiven?: number,
  current?: PlanLimits,
): PlanLimits | undefined {
  if (plan !== 'enterprise') {
    if (perMinuteGiven !== undefined || perDayGiven !== undefined)
      throw new AdminError(`--per-minute/--per-day apply to the enterprise plan only (${plan} has fixed limits)`);
    return undefined;
  }
  const given = perMinuteGiven !== undefined || perDayGiven !== undefined;
  const perMinute = perMinuteGiven ?? (given ? current?.perMinute : undefined);
  const perDay = perDayGiven ?? (given ? current?.perDay : undefined);
  if (perMinute === undefined || perDay === undefined)
    throw new AdminError(
      current
        ? 'the enterprise plan needs --per-minute N, --per-day N or both (the one not given is kept)'
        : 'the enterprise plan needs --per-minute N and --per-day N',
    );
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
          `(API Gateway admits ${ACCOUNT_THROTTLE.rateLimit.toLocaleString('en-US')} requests/s per account and Region, split over the stage's ${OPERATION_COUNT} methods; docs/keys-and-limits.md)`,
      );
  }
  if (perDay < perMinute) throw new AdminError('--per-day must be at least --per-minute');
  return { perMinute, perDay };
}

/** Whether two sets of limits are the same (both absent: the plan's fixed ones). */
export const sameLimits = (a: PlanLimits | undefined, b: PlanLimits | undefined): boolean =>
  a?.perMinute === b?.perMinute && a?.perDay === b?.perDay;
