/**
 * What a list operation's handler takes from its route entry: the page key its request's cursor names and the
 * `Link: rel="next"` of the page it answers, both bound to the operation and to the filters the entry declares
 * (lambdas/domain/pagination.ts). A new list operation calls `pagerOf` with its entry and its store's page; nothing
 * here knows which resource it lists.
 */
import type { Route } from '../../contract/route-types.ts';
import { CURSOR_PARAM, cursorCodec, listingsOf, type PageKey } from '../domain/pagination.ts';
import type { Runtime } from './runtime.ts';

export interface Pager {
  /** Where the page starts: after the key the request's cursor carries; undefined on the first page. */
  readonly after?: PageKey;
  /** The response headers announcing the next page: its `Link`, or none when no further page may exist. */
  headers(next: PageKey | undefined): Record<string, string>;
}

/**
 * The pager of a list operation, for each request's validated parameters. Made when the function starts: a function
 * without the cursor secret (its entry's `access.cursorSecret`) fails its cold start, and no other function's.
 */
export function pagerOf(
  rt: Runtime,
  route: Pick<Route, 'operationId' | 'path' | 'request' | 'access'>,
): (request: { readonly params?: unknown; readonly query?: unknown }) => Promise<Pager> {
  const keys = rt.cursorKeys;
  if (!keys)
    throw new Error(
      `Invalid configuration: ${route.operationId} needs the cursor secret, CURSOR_SECRET_ARN outside STAGE=local (STAGE is ${rt.config.STAGE})` +
        (route.access.cursorSecret ? '' : `; its route entry does not declare access.cursorSecret`),
    );
  const listingOf = listingsOf(route);
  return async (request) => {
    // Cached by the runtime: a Secrets Manager read only every few minutes (shared/cursor-keys.ts).
    const cursors = cursorCodec({ keys: await keys(), now: rt.now });
    const listing = listingOf(request);
    const cursor = (request.query as Readonly<Record<string, unknown>> | undefined)?.[CURSOR_PARAM];
    return {
      ...(typeof cursor === 'string' ? { after: cursors.read(cursor, listing) } : {}),
      headers: (next): Record<string, string> => (next ? { Link: cursors.nextPageLink(listing, next) } : {}),
    };
  };
}
