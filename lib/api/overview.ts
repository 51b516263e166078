/**
 * The document's overview (info.description), the first thing a reader sees on the reference page (`/docs`): how
 * to authenticate, the plans with their limits, and the deprecations. Markdown, so every OpenAPI renderer shows it
 * without extensions. Built from the plans and route tables, like the rest of the document.
 */
import { BAN_POLICY, KEY_BURST, PLANS } from '../../contract/plans.ts';
import { EXPIRED_NOTICE_SECONDS } from '../../contract/auth.ts';
import { BASE_PATH, ROUTES, writes } from '../../contract/routes.ts';
import { LARGEST_STANDARD_LIMITS, fiveMinuteDemand } from '../config/capacity.ts';

const count = (n: number) => n.toLocaleString('en-US');

export function infoDescription(): string {
  const plans = Object.values(PLANS).map((p) =>
    p.limits
      ? `| ${p.displayName} | ${count(p.limits.perMinute)} | ${count(p.limits.perDay)} |`
      : `| ${p.displayName} | agreed per key | agreed per key |`,
  );
  const deprecated = ROUTES.filter((r) => r.deprecation).map((r) => {
    const d = r.deprecation!;
    return `- \`${r.method} ${BASE_PATH}${r.path}\` (\`${r.operationId}\`): deprecated since ${d.deprecatedAt.slice(0, 10)}, sunset ${d.sunsetAt.slice(0, 10)} (410 \`endpoint_removed\` from then on); use ${d.instead}. Its responses carry \`Deprecation\`, \`Sunset\` and \`Link: rel="successor-version"\`.`;
  });
  const changing = ROUTES.filter(writes)
    .map((r) => `\`${r.method} ${BASE_PATH}${r.path}\``)
    .join(', ');
  return [
    "A store-inventory service for animals. Generated from the service's schemas and route table: do not edit by hand.",
    '## Authentication',
    'Every operation requires an API key sent as `Authorization: Bearer <API_KEY>` (security scheme `bearerAuth`). A missing, malformed, unknown or revoked key gets 401 `unauthorized`.',
    `A key may expire: from its expiry it gets 401 \`key_expired\`, whose message says when, for ${EXPIRED_NOTICE_SECONDS / 3600} hours, then 401 \`unauthorized\`. A key may be read-only: an operation that changes data (${changing}) answers it 403 \`key_read_only\`, counted against its limits like any request; every other operation serves it as any key.`,
    '## Plans and rate limits',
    'Each key belongs to a plan; limits count per key in fixed UTC windows (minute and day).',
    ['| Plan | Requests per minute | Requests per day |', '|---|---|---|', ...plans].join('\n'),
    'Every response carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` for the window that binds soonest. ' +
      `A 429 (\`rate_limited\`, \`quota_exceeded\`, or \`key_banned\` for ${BAN_POLICY.banSeconds / 60} minutes, twice as long for each repeat in a UTC day up to ${BAN_POLICY.maxBanSeconds / 3600} hours, once one minute window sees more 429s than ${BAN_POLICY.fleetWorkers} clients, or as many as the per-minute limit if more, could get by each waiting after its own) carries \`Retry-After\`: wait that long, then back off exponentially. A \`key_banned\` names when the ban ends in \`X-RateLimit-Reset\` (unix seconds) and in its message, and \`Retry-After\` is its rest: for a ban that ends within a minute it can be up to a minute more, and a repeated answer can be up to a minute long, never short, so waiting it is never refused again. A \`key_banned\` without a number in \`Retry-After\` (possible only briefly after a deployment): wait ${BAN_POLICY.banSeconds / 60} minutes. A key told its day is spent that sends again a minute later is banned the same way, until the day's end at the latest.`,
    `Send a minute's requests spread over it: at most ${KEY_BURST} at the same instant. A larger burst may get the gateway's 429 \`rate_limited\` with \`Retry-After: 1\` before your key's limit is reached; its requests are not counted against your key. ` +
      `One network address may send at most ${count(fiveMinuteDemand(LARGEST_STANDARD_LIMITS))} requests in any 5 minutes (a ${PLANS.business.displayName} key's limit and its retries), and one key the same from any number of addresses; past it, requests get 429 \`rate_limited\` with \`Retry-After: 300\` (the window WAF counts over) until the rate falls back under. Enterprise customers who send more from their own addresses have them registered, and those get their contract.`,
    '## Deprecations',
    ...deprecated,
    '## Errors',
    'Every error is the Error object (`code`, `message`, `status`) with `Content-Type: application/json`; `status` equals the HTTP status.',
    // OpenAPI has no responses for a path or for the API as a whole: these are said here.
    'A path no operation has gets 404 `not_found`, and a method its path does not have 405 `method_not_allowed` with `Allow` listing the methods it has: both answered by the gateway, like every gateway answer with `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` at `0` (nothing counted) and with `x-amzn-RequestId`, the id to quote when reporting a problem.',
  ].join('\n\n');
}
