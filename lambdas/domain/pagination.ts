/**
 * Pagination beyond `limit` (a gap in the spec) for any list operation: the body stays a bare array, and a further
 * page is announced in `Link: <…>; rel="next"` (RFC 8288) with an opaque cursor. The cursor is HMAC-signed with the
 * stage's secret, bound to the operation and its filters, and expires; a bad one gets 400 `invalid_cursor`.
 * The binding and the link come from the route entry (`listingOf`), so a new list operation gets them by declaring
 * it. Keys and clock come from the composition root. During a secret rotation the current value signs and every live
 * value (AWSCURRENT, AWSPENDING, AWSPREVIOUS) verifies, so containers on either value read each other's cursors.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { fieldsOf } from '../../contract/request-fields.ts';
import { pathOf, type Route } from '../../contract/route-types.ts';
import { AppError } from './errors.ts';

export const CURSOR_TTL_SECONDS = 24 * 3600;

/**
 * The query parameters every paged operation shares and no cursor is bound to: the page size, which may change
 * between pages, and the cursor itself.
 */
export const PAGE_SIZE_PARAM = 'limit';
export const CURSOR_PARAM = 'cursor';

/** Where a page ends; opaque to clients (it travels inside a signed cursor). */
export interface PageKey {
  readonly id: number;
}

interface CursorPayload {
  /** Last id of the previous page. */
  readonly a: number;
  /** The operation it was made for. */
  readonly r: string;
  /** The digest of the filter values it was made for (`Listing.filters`). */
  readonly f: string;
  /** Expiry, unix seconds. */
  readonly e: number;
}

/**
 * One listing as a request names it: what a cursor of it is bound to, and where its next page's link points.
 * Made by `listingOf` from the route entry and the request's validated parameters.
 */
export interface Listing {
  readonly operationId: string;
  /** The names of the parameters that choose what is listed, in the entry's order (for the refusal's message). */
  readonly filterNames: readonly string[];
  /** A digest of the ones given, by name and value: equal exactly when the same filters hold the same values. */
  readonly filters: string;
  /** The request's path on the wire (base path included). */
  readonly path: string;
  /** The query parameters the request gave, cursor aside, in the entry's order: the next link keeps them. */
  readonly query: readonly (readonly [string, string])[];
}

/**
 * 96 bits: the digest is inside the signed payload, so it needs no secret, only to keep two filter sets apart.
 */
const FILTERS_DIGEST_CHARS = 16;

/** A parameter's value as the link and the binding write it: validated values are strings, numbers or bigints. */
const text = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(v));

/**
 * The listings of a route: a function of a request's validated path parameters and query. The filters are every
 * path parameter and every query parameter the entry declares but the page size and the cursor: a parameter added
 * to the entry is bound at once, never forgotten (one left unbound would let a cursor walk another listing).
 */
export function listingsOf(
  route: Pick<Route, 'operationId' | 'path' | 'request'>,
): (request: { readonly params?: unknown; readonly query?: unknown }) => Listing {
  const paramNames = Object.keys(fieldsOf(route.request.params));
  const queryNames = Object.keys(fieldsOf(route.request.query)).filter((n) => n !== CURSOR_PARAM);
  const filterNames = [...paramNames, ...queryNames.filter((n) => n !== PAGE_SIZE_PARAM)];
  return (request) => {
    const params = (request.params ?? {}) as Readonly<Record<string, unknown>>;
    const query = (request.query ?? {}) as Readonly<Record<string, unknown>>;
    // Only the filters given: an optional filter added to the entry later leaves the cursors made without it valid.
    const given = filterNames.flatMap((n) => {
      const v = text(paramNames.includes(n) ? params[n] : query[n]);
      return v === undefined ? [] : [[n, v]];
    });
    return {
      operationId: route.operationId,
      filterNames,
      filters: createHash('sha256').update(JSON.stringify(given)).digest('base64url').slice(0, FILTERS_DIGEST_CHARS),
      path: pathOf(route, params),
      query: queryNames.flatMap((n) => {
        const v = text(query[n]);
        return v === undefined ? [] : [[n, v] as const];
      }),
    };
  };
}

/** The listing of one request of a route (`listingsOf`, for a single use). */
export const listingOf = (
  route: Pick<Route, 'operationId' | 'path' | 'request'>,
  request: { readonly params?: unknown; readonly query?: unknown },
): Listing => listingsOf(route)(request);

/** The values that sign and verify cursors. */
export interface CursorKeys {
  /** Signs every new cursor (and verifies). */
  readonly current: string;
  /** Also verify: the other values live during a rotation (the next and the previous). */
  readonly accepted?: readonly string[];
}

export interface CursorCodec {
  /** A signed cursor for the page after `after`, bound to the listing's operation and filters. */
  make(after: PageKey, listing: Listing): string;
  /**
   * The page key a cursor carries; AppError `invalid_cursor` for anything the service did not sign as is, or signed
   * for another operation or other filter values.
   */
  read(cursor: string, listing: Listing): PageKey;
  /** The `Link` header value announcing the next page: the listing's path and query, with the next page's cursor. */
  nextPageLink(listing: Listing, next: PageKey): string;
}

const invalid = (message = 'The cursor is not valid: use the Link rel="next" of the previous page as is.') =>
  new AppError('invalid_cursor', message);

/**
 * A payload as this module writes it; anything else (even correctly signed, e.g. with a leaked secret) is refused.
 * So is the format before cursors named their operation (`{a, s, e}`, s the only list's one filter): nothing in it says
 * which listing it walks, and accepting it on the one route that made it would take that route's name here. Its
 * holder gets 400 `invalid_cursor`, as for an expired cursor, and starts again from the first page.
 */
function isPayload(p: unknown): p is CursorPayload {
  if (typeof p !== 'object' || p === null) return false;
  const { a, r, f, e } = p as Record<string, unknown>;
  return (
    Number.isSafeInteger(a) &&
    (a as number) >= 1 &&
    typeof r === 'string' &&
    typeof f === 'string' &&
    Number.isSafeInteger(e)
  );
}

export function cursorCodec(deps: { readonly keys: CursorKeys; readonly now: () => number }): CursorCodec {
  const { current, accepted = [] } = deps.keys;
  if (!current || accepted.some((k) => !k)) throw new Error('cursorCodec needs non-empty signing secrets');
  const verifying = [current, ...accepted];
  const mac = (key: string, data: string) => createHmac('sha256', key).update(data).digest('base64url');

  /**
   * The signed data of a cursor whose MAC is exactly the one the service computes with one of its keys, else undefined.
   */
  function verifiedData(cursor: string): string | undefined {
    const parts = cursor.split('.');
    if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
    const [data, given] = parts as [string, string];
    // Compare bytes, after checking the byte lengths: a MAC of non-ASCII characters has more bytes than characters,
    // and timingSafeEqual throws (RangeError) on buffers of different lengths.
    const givenBytes = Buffer.from(given, 'utf8');
    const matches = (key: string) => {
      const expected = Buffer.from(mac(key, data), 'utf8');
      return givenBytes.length === expected.length && timingSafeEqual(givenBytes, expected);
    };
    return verifying.some(matches) ? data : undefined;
  }

  const codec: CursorCodec = {
    make(after, listing) {
      const payload: CursorPayload = {
        a: after.id,
        r: listing.operationId,
        f: listing.filters,
        e: Math.floor(deps.now() / 1000) + CURSOR_TTL_SECONDS,
      };
      const data = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${data}.${mac(current, data)}`;
    },

    read(cursor, listing) {
      const data = verifiedData(cursor);
      if (data === undefined) throw invalid();
      let p: unknown;
      try {
        p = JSON.parse(Buffer.from(data, 'base64url').toString('utf8'));
      } catch {
        throw invalid();
      }
      if (!isPayload(p)) throw invalid();
      if (p.e < deps.now() / 1000) throw invalid('The cursor has expired: start again from the first page.');
      if (p.r !== listing.operationId)
        throw invalid('The cursor was made for another operation: follow the Link rel="next" of this listing only.');
      if (p.f !== listing.filters) {
        const names = listing.filterNames;
        throw invalid(
          `The cursor was made for another ${names.join(' or ')} filter: keep the filter${names.length > 1 ? 's' : ''} of the first page.`,
        );
      }
      return { id: p.a };
    },

    nextPageLink(listing, next) {
      const params = new URLSearchParams(listing.query as [string, string][]);
      params.set(CURSOR_PARAM, codec.make(next, listing));
      return `<${listing.path}?${params}>; rel="next"`;
    },
  };
  return codec;
}
