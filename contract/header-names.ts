/**
 * The named response headers' wire names, by component name in the document (`LinkNext` is `Link`). Functions need
 * only these, so the headers' documentation (contract/headers.ts) stays out of their bundles.
 */
import type { ResponseHeader } from './route-types.ts';

export const HEADER_NAMES = {
  'X-RateLimit-Limit': 'X-RateLimit-Limit',
  'X-RateLimit-Remaining': 'X-RateLimit-Remaining',
  'X-RateLimit-Reset': 'X-RateLimit-Reset',
  'Retry-After': 'Retry-After',
  Location: 'Location',
  LinkNext: 'Link',
  RequestId: 'x-amzn-RequestId',
} as const;

/** A named header: its component name in the document (not always its name on the wire: `LinkNext` is `Link`). */
export type ResponseHeaderName = keyof typeof HEADER_NAMES;

/** A success response header's name on the wire: a named one's, or the one documented in place. */
export const headerName = (h: ResponseHeader): string => (typeof h === 'string' ? HEADER_NAMES[h] : h.name);
