/**
 * `npm start` serves the API reference (lib/docs/site.ts) at `/docs/`, outside the API's base path: no key needed,
 * no rate limit, never seen by the authorizer. The gateway calls `serveDocs` first and handles the request itself
 * when it returns false.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BASE_PATH } from '../../contract/routes.ts';
import { CONTENT_SECURITY_POLICY, docsSite, type Asset } from '../docs/site.ts';

export const DOCS_PATH = '/docs';

let site: Map<string, Asset> | undefined;

/** Answers GET/HEAD below `/docs`; returns false for every other request (left to the gateway). */
export function serveDocs(req: IncomingMessage, res: ServerResponse): boolean {
  // Every API request passes here first: most are told apart without parsing their URL.
  if (!req.url?.startsWith(DOCS_PATH)) return false;
  const method = req.method ?? 'GET';
  const path = new URL(req.url, 'http://localhost').pathname;
  if ((method !== 'GET' && method !== 'HEAD') || (path !== DOCS_PATH && !path.startsWith(`${DOCS_PATH}/`)))
    return false;
  if (path === DOCS_PATH) {
    // The page links its assets relatively (so a published copy works under any path): it must end in a slash.
    res.writeHead(308, { Location: `${DOCS_PATH}/`, 'Content-Length': 0 }).end();
    return true;
  }
  // Read once on first use: the committed openapi.json and the renderer's files do not change while serving.
  site ??= docsSite({ server: { url: BASE_PATH, description: 'This server (npm start)' } });
  const asset = site.get(path.slice(DOCS_PATH.length + 1) || 'index.html');
  if (!asset) return false; // the gateway answers its usual 404 Error object
  res.writeHead(200, {
    'Content-Type': asset.contentType,
    'Content-Length': Buffer.byteLength(asset.body),
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-cache',
  });
  res.end(method === 'HEAD' ? undefined : asset.body);
  return true;
}
