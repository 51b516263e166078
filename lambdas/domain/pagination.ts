/**
 * Pagination beyond `limit` (a gap in the spec): the body stays a bare array; a further page is announced in
 * `Link: <…>; rel="next"` (RFC 8288) with an opaque cursor. The cursor is HMAC-signed with the stage's secret,
 * carries the filter it was made for and expires; forged, expired or mismatched cursors get 400 `invalid_cursor`.
 *
 * The keys and the clock are passed in by the composition root: this module reads neither configuration, secrets nor
 * time. During a rotation of the stage's secret two or three values are live at once (Secrets Manager's AWSCURRENT,
 * AWSPENDING and AWSPREVIOUS): the current one signs and every one of them verifies, so a cursor made by a container
 * or a version that still holds the old value keeps working on one that holds the new value, and the other way round.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { BASE_PATH } from '../../contract/route-types.ts';
import { PET_STATUSES, type PetStatus } from '../../contract/schemas.ts';
import { AppError } from './errors.ts';
import type { PageKey } from './pets.ts';

export const CURSOR_TTL_SECONDS = 24 * 3600;

interface CursorPayload {
  /** Last id of the previous page. */
  readonly a: number;
  /** The status filter, or null for all. */
  readonly s: PetStatus | null;
  /** Expiry, unix seconds. */
  readonly e: number;
}

/** The values that sign and verify cursors. */
export interface CursorKeys {
  /** Signs every new cursor (and verifies). */
  readonly current: string;
  /** Also verify: the other values live during a rotation (the next and the previous). */
  readonly accepted?: readonly string[];
}

export interface CursorCodec {
  /** A signed cursor for the page after `after`, bound to the filter. */
  make(after: PageKey, filter: { status?: PetStatus }): string;
  /** The page key a cursor carries; AppError `invalid_cursor` for anything the service did not sign as is. */
  read(cursor: string, filter: { status?: PetStatus }): PageKey;
  /** The `Link` header value announcing the next page. */
  nextPageLink(query: { limit?: number; status?: PetStatus }, next: PageKey): string;
}

const invalid = (message = 'The cursor is not valid: use the Link rel="next" of the previous page as is.') =>
  new AppError('invalid_cursor', message);

/** A payload as this module writes it; anything else (even correctly signed, e.g. with a leaked secret) is refused. */
function isPayload(p: unknown): p is CursorPayload {
  if (typeof p !== 'object' || p === null) return false;
  const { a, s, e } = p as Record<string, unknown>;
  return (
    Number.isSafeInteger(a) &&
    (a as number) >= 1 &&
    (s === null || (PET_STATUSES as readonly unknown[]).includes(s)) &&
    Number.isSafeInteger(e)
  );
}

export function cursorCodec(deps: { readonly keys: CursorKeys; readonly now: () => number }): CursorCodec {
  const { current, accepted = [] } = deps.keys;
  if (!current || accepted.some((k) => !k)) throw new Error('cursorCodec needs non-empty signing secrets');
  const verifying = [current, ...accepted];
  const mac = (key: string, data: string) => createHmac('sha256', key).update(data).digest('base64url');

  /** The signed data of a cursor whose MAC is exactly the one the service computes with one of its keys, else undefined. */
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
    make(after, filter) {
      const payload: CursorPayload = {
        a: after.id,
        s: filter.status ?? null,
        e: Math.floor(deps.now() / 1000) + CURSOR_TTL_SECONDS,
      };
      const data = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${data}.${mac(current, data)}`;
    },

    read(cursor, filter) {
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
      if (p.s !== (filter.status ?? null)) {
        throw invalid('The cursor was made for another status filter: keep the filter of the first page.');
      }
      return { id: p.a };
    },

    nextPageLink(query, next) {
      const params = new URLSearchParams();
      if (query.limit !== undefined) params.set('limit', String(query.limit));
      if (query.status) params.set('status', query.status);
      params.set('cursor', codec.make(next, query));
      return `<${BASE_PATH}/pets?${params}>; rel="next"`;
    },
  };
  return codec;
}
