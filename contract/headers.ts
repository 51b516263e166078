/**
 * The named response headers: the document's header components (in this order), the names the envelope exposes to
 * browsers, and how the docs tables write them. A success response names those it sends (`success.headers`).
 * A header only one operation sends may be documented in place on its entry instead.
 */
import { PLANS, STANDARD_PLANS } from './plans.ts';
import { HEADER_NAMES, type ResponseHeaderName } from './header-names.ts';
import { BASE_PATH, type HeaderDoc, type ResponseHeader } from './route-types.ts';

export type { ResponseHeaderName } from './header-names.ts';

const int = (name: ResponseHeaderName, description: string, example?: number): HeaderDoc => ({
  name: HEADER_NAMES[name],
  description,
  required: true,
  schema: { type: 'integer', minimum: 0, ...(example !== undefined ? { example } : {}) },
});

export const RESPONSE_HEADERS = {
  'X-RateLimit-Limit': int(
    'X-RateLimit-Limit',
    `The limit currently applying (requests per minute or per day, whichever binds sooner). Plans: ${STANDARD_PLANS.map((p) => `${PLANS[p].displayName} ${PLANS[p].limits!.perMinute}/min, ${PLANS[p].limits!.perDay}/day`).join('; ')}. \`0\` on errors the gateway answers before a key is known.`,
    60,
  ),
  'X-RateLimit-Remaining': int(
    'X-RateLimit-Remaining',
    'Requests left in the current window. `0` on errors the gateway answers before a key is known.',
    59,
  ),
  'X-RateLimit-Reset': int(
    'X-RateLimit-Reset',
    'Unix timestamp (seconds) at which the window resets. `0` on errors the gateway answers before a key is known (nothing was counted).',
    1767225660,
  ),
  'Retry-After': int('Retry-After', 'Seconds to wait before retrying (then back off exponentially).', 30),
  Location: {
    name: HEADER_NAMES.Location,
    description: 'Path of the created item, where a GET reads it: the path of the create with the new id below it.',
    required: true,
    schema: { type: 'string', example: `${BASE_PATH}/pets/1001` },
  },
  LinkNext: {
    name: HEADER_NAMES.LinkNext,
    text: '`Link: rel="next"`',
    // Shared by every list operation: it says what the link is made of, not which resource it lists.
    description:
      'RFC 8288 link to the next page, present only when a further page may exist: `<…?…&cursor=…>; rel="next"`, the path and query of the request (its `limit` and filters, as given) with the cursor of the next page. ' +
      'The cursor is opaque, signed, bound to the operation and to its filters (the path parameters and every query parameter but `limit`) and expires after 24 hours. ' +
      'The last page has no next link; a page that fills `limit` exactly may announce a next page that turns out empty.',
    required: false,
    schema: { type: 'string' },
  },
  RequestId: {
    name: HEADER_NAMES.RequestId,
    description: "API Gateway's id for the request: quote it when reporting a problem.",
    required: true,
    schema: { type: 'string', example: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef' },
  },
} as const satisfies Record<ResponseHeaderName, HeaderDoc>;

/** The rate-limit headers every response carries. */
export const RATE_LIMIT_HEADER_NAMES = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;

/** What a success response's header is: a named one from the table above, or one documented in place. */
export const headerDoc = (h: ResponseHeader): HeaderDoc => (typeof h === 'string' ? RESPONSE_HEADERS[h] : h);
