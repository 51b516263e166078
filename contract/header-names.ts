/**
 * The named response headers' names on the wire, by their component name in the document (`LinkNext` is `Link`):
 * all a function needs of them. Their documentation (contract/headers.ts, which takes its names from here) stays out
 * of the function bundles.
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
