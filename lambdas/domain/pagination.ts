/**
 * Pagination beyond `limit` (a gap in the spec): the body stays a bare array; a further page is announced in
 * `Link: <…>; rel="next"` (RFC 8288) with an opaque cursor. The cursor is HMAC-signed with the stage's secret,
 * carries the filter it was made for and expires; forged, expired or mismatched cursors get 400 `invalid_cursor`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { BASE_PATH } from '../../contract/routes.ts';
import { config } from '../shared/config.ts';
import { now } from '../shared/clock.ts';
import { AppError } from './errors.ts';
import type { PageKey } from './pets.ts';
import type { PetStatus } from '../../contract/schemas.ts';

export const CURSOR_TTL_SECONDS = 24 * 3600;

interface CursorPayload {
  /** Last id of the previous page. */
  readonly a: number;
  /** The status filter, or null for all. */
  readonly s: PetStatus | null;
  /** Expiry, unix seconds. */
  readonly e: number;
}

const sign = (data: string) => createHmac('sha256', config.CURSOR_SECRET).update(data).digest('base64url');

export function makeCursor(after: PageKey, filter: { status?: PetStatus }): string {
  const payload: CursorPayload = { a: after.id, s: filter.status ?? null, e: Math.floor(now() / 1000) + CURSOR_TTL_SECONDS };
  const data = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${data}.${sign(data)}`;
}

export function readCursor(cursor: string, filter: { status?: PetStatus }): PageKey {
  const [data, mac, extra] = cursor.split('.');
  const expected = data ? sign(data) : '';
  if (!data || !mac || extra !== undefined || mac.length !== expected.length || !timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) {
    throw new AppError('invalid_cursor', 'The cursor is not valid: use the Link rel="next" of the previous page as is.');
  }
  const p = JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) as CursorPayload;
  if (p.e < now() / 1000) throw new AppError('invalid_cursor', 'The cursor has expired: start again from the first page.');
  if (p.s !== (filter.status ?? null)) {
    throw new AppError('invalid_cursor', 'The cursor was made for another status filter: keep the filter of the first page.');
  }
  return { id: p.a };
}

export function nextPageLink(query: { limit?: number; status?: PetStatus }, next: PageKey): string {
  const params = new URLSearchParams();
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.status) params.set('status', query.status);
  params.set('cursor', makeCursor(next, query));
  return `<${BASE_PATH}/pets?${params}>; rel="next"`;
}
