/**
 * The deprecation lifecycle of an operation (spec section 9): headers until the sunset, 410 Gone from then on.
 */
import type { Deprecation } from '../../contract/routes.ts';
import { BASE_PATH } from '../../contract/route-types.ts';
import { AppError } from './errors.ts';

/** `Deprecation: @<unix seconds>` (RFC 9745), `Sunset: <HTTP date>` (RFC 8594), `Link` to the successor. */
export function deprecationHeaders(d: Deprecation): Record<string, string> {
  const deprecatedAt = Math.floor(Date.parse(d.deprecatedAt) / 1000);
  return {
    Deprecation: `@${deprecatedAt}`,
    Sunset: new Date(d.sunsetAt).toUTCString(),
    Link: `<${BASE_PATH}${d.successor}>; rel="successor-version"`,
  };
}

/** Throws 410 `endpoint_removed` once the sunset has passed. */
export function assertNotRemoved(d: Deprecation, nowMs: number, what: string): void {
  if (nowMs >= Date.parse(d.sunsetAt)) {
    throw new AppError(
      'endpoint_removed',
      `${what} was removed on ${new Date(d.sunsetAt).toUTCString()}: use GET ${BASE_PATH}${d.successor} instead.`,
    );
  }
}
