/**
 * The API reference page: openapi.json rendered by Swagger UI (the `swagger-ui-dist` package, served from
 * node_modules, never a CDN). The same files are served by `npm start` at `/docs/` (lib/local/docs-page.ts) and
 * written by `npm run docs` (scripts/docs.ts) to publish as static files.
 *
 * Why Swagger UI: `swagger-ui-dist` is the renderer's own prebuilt distribution (SmartBear, Apache-2.0, OpenAPI
 * 3.1), so it needs no bundler and pulls no framework into the tree; it shows deprecated operations struck through,
 * the bearer scheme behind "Authorize", and the document's Markdown overview (plans, deprecations). Its "Try it
 * out" works against `npm start` because the page is served from the same origin as `/v1`.
 *
 * Every asset is referenced by a relative URL, so the folder works under any path a host publishes it at.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

export interface Asset {
  readonly contentType: string;
  readonly body: string | Buffer;
}

/**
 * What the browser may load: this origin only, so a CDN or a tracking pixel would be refused. Also in the page as
 * a meta tag, so a published copy keeps it on any host (frame-ancestors only works as a header).
 */
const csp = (connect: readonly string[] = []) =>
  `default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src ${["'self'", ...connect].join(' ')}; base-uri 'none'; form-action 'none'`;
export const CONTENT_SECURITY_POLICY = `${csp()}; frame-ancestors 'none'`;

const indexHtml = (connect: readonly string[]) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta http-equiv="Content-Security-Policy" content="${csp(connect)}">
  <title>Animal Store API reference</title>
  <link rel="stylesheet" href="swagger-ui.css">
  <link rel="icon" type="image/png" href="favicon-32x32.png">
</head>
<body>
  <div id="reference"></div>
  <script src="swagger-ui-bundle.js"></script>
  <script src="init.js"></script>
</body>
</html>
`;

/** Kept in a file of its own (not inline) so the page runs under a CSP without 'unsafe-inline' scripts. */
const INIT_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: 'openapi.json',
    dom_id: '#reference',
    deepLinking: true,
    displayOperationId: true,
    displayRequestDuration: true,
    defaultModelsExpandDepth: 1,
    docExpansion: 'list',
    tryItOutEnabled: false,
    validatorUrl: null, // the default would send the document to an outside validator
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

/** The committed document, as `npm run openapi` wrote it. */
export function readOpenApi(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(ROOT, 'openapi.json'), 'utf8')) as Record<string, unknown>;
}

export interface SiteOptions {
  /**
   * A server to list first, e.g. `{ url: '/v1', description: 'this server' }` when the page is served by the API
   * itself, so "Try it out" calls it. The published document keeps its own servers.
   */
  readonly server?: { readonly url: string; readonly description: string };
  /**
   * The API's base URL (ending in `/v1`) for a published copy: it becomes the document's only server, in place of
   * the placeholders, and the page may connect to its origin, so "Try it out" calls that API. (The API answers a
   * browser only if the page's origin is among the stage's CORS origins.)
   */
  readonly base?: string;
}

/** The page's files by name (relative to the folder the page lives in). */
export function docsSite(opts: SiteOptions = {}): Map<string, Asset> {
  const doc = readOpenApi();
  if (opts.server) doc.servers = [opts.server, ...((doc.servers as unknown[] | undefined) ?? [])];
  const connect: string[] = [];
  if (opts.base !== undefined) {
    const url = new URL(opts.base);
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new Error(`--base must be an http(s) URL: ${opts.base}`);
    doc.servers = [{ url: opts.base.replace(/\/+$/, ''), description: 'The API' }];
    connect.push(url.origin);
  }
  const ui = (name: string, contentType: string): [string, Asset] => [
    name,
    { contentType, body: readFileSync(join(UI_DIR, name)) },
  ];
  return new Map<string, Asset>([
    ['index.html', { contentType: 'text/html; charset=utf-8', body: indexHtml(connect) }],
    ['init.js', { contentType: 'text/javascript; charset=utf-8', body: INIT_JS }],
    ['openapi.json', { contentType: 'application/json', body: `${JSON.stringify(doc, null, 2)}\n` }],
    ui('swagger-ui.css', 'text/css; charset=utf-8'),
    ui('swagger-ui-bundle.js', 'text/javascript; charset=utf-8'),
    ui('favicon-32x32.png', 'image/png'),
  ]);
}
