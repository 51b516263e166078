/**
 * A small emulator of API Gateway (REST API, Lambda proxy integration, TOKEN authorizer) for `npm start`, tests and
 * benchmarks. It runs the same handler and authorizer modules the Lambdas run, passing them REST (v1 proxy)
 * events, and answers gateway-generated errors from the same table the CDK stack deploys (gateway-responses.ts).
 * Not emulated: usage plans (the in-app limiter is the enforcement), custom domains, binary media types.
 *
 * Import this only after the functions' environment (table names, endpoint) is set: handlers read it at import.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { AUTHORIZER_ENTRY, BASE_PATH, ROUTES, matchPath, resourcePaths, type Route } from '../../contract/routes.ts';
import { gatewayResponse, methodNotAllowed, type GatewayResponseType } from '../../contract/gateway-responses.ts';
import { BEARER_VALIDATION_EXPRESSION } from '../../contract/auth.ts';
import { now } from '../../lambdas/shared/clock.ts';
import { serveDocs } from './docs-page.ts';

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
type AuthorizerHandler = (event: APIGatewayTokenAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** API Gateway's payload limit. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
/** Unauthenticated callers get an anonymous per-client bucket locally (the cloud gateway sends static headers). */
export const ANONYMOUS_PER_MINUTE = 60;
const FAKE_ACCOUNT = '123456789012';
const FAKE_API = 'local';
const STAGE = BASE_PATH.slice(1);
const bearer = new RegExp(BEARER_VALIDATION_EXPRESSION);

export interface GatewayOptions {
  readonly port?: number;
  readonly host?: string;
  /** Authorizer result cache per token, seconds (0 = off, the local default, so revocations show at once). */
  readonly authCacheTtlSeconds?: number;
}

export interface RunningGateway {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

async function load<T>(entry: string): Promise<T> {
  const mod = (await import(`${ROOT}${entry}`)) as { handler: T };
  return mod.handler;
}

function lambdaContext(name: string): Context {
  const deadline = Date.now() + 29_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:${FAKE_ACCOUNT}:function:${name}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function resourceMatches(pattern: string, arn: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(arn);
}

function allows(policy: APIGatewayAuthorizerResult['policyDocument'], arn: string): boolean {
  const stmts = policy.Statement as Array<{ Effect: string; Resource?: string | string[] }>;
  const matches = (s: { Resource?: string | string[] }) => [s.Resource ?? []].flat().some((r) => resourceMatches(r, arn));
  if (stmts.some((s) => s.Effect === 'Deny' && matches(s))) return false;
  return stmts.some((s) => s.Effect === 'Allow' && matches(s));
}

export async function startGateway(opts: GatewayOptions = {}): Promise<RunningGateway> {
  const handlers = new Map<Route, ProxyHandler>();
  for (const r of ROUTES) handlers.set(r, await load<ProxyHandler>(r.entry));
  const authorizer = await load<AuthorizerHandler>(AUTHORIZER_ENTRY);
  const cacheTtlMs = (opts.authCacheTtlSeconds ?? 0) * 1000;
  const authCache = new Map<string, { result: APIGatewayAuthorizerResult; expires: number }>();
  const anonymous = new Map<string, { windowStart: number; count: number }>();
  const paths = resourcePaths();
  const corsOrigins = (process.env.CORS_ALLOWED_ORIGINS ?? '').split(',').map((o) => o.trim()).filter(Boolean);

  function anonymousHeaders(ip: string): Record<string, string> {
    const nowSec = Math.floor(now() / 1000);
    const windowStart = nowSec - (nowSec % 60);
    const b = anonymous.get(ip);
    const bucket = b && b.windowStart === windowStart ? b : { windowStart, count: 0 };
    bucket.count++;
    anonymous.set(ip, bucket);
    if (anonymous.size > 10_000) anonymous.clear(); // bounded memory under address churn
    return {
      'X-RateLimit-Limit': String(ANONYMOUS_PER_MINUTE),
      'X-RateLimit-Remaining': String(Math.max(0, ANONYMOUS_PER_MINUTE - bucket.count)),
      'X-RateLimit-Reset': String(windowStart + 60),
    };
  }

  function send(res: ServerResponse, status: number, headers: Record<string, string | string[]>, body: string): void {
    res.writeHead(status, { ...headers, 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  }

  function sendGateway(res: ServerResponse, ip: string, type: GatewayResponseType): void {
    const g = gatewayResponse(type);
    send(res, g.status, { ...g.headers, ...anonymousHeaders(ip) }, JSON.stringify({ code: g.code, message: g.message, status: g.status }));
  }

  async function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_PAYLOAD_BYTES) return 'too-large';
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  }

  async function authorize(token: string, methodArn: string): Promise<APIGatewayAuthorizerResult | 'unauthorized' | 'failure'> {
    const cached = authCache.get(token);
    if (cached && cached.expires > Date.now()) return cached.result;
    try {
      const result = await authorizer({ type: 'TOKEN', authorizationToken: token, methodArn });
      if (cacheTtlMs > 0) authCache.set(token, { result, expires: Date.now() + cacheTtlMs });
      return result;
    } catch (err) {
      return (err as Error)?.message === 'Unauthorized' ? 'unauthorized' : 'failure';
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (serveDocs(req, res)) return; // the API reference page, outside the base path
    const ip = req.socket.remoteAddress ?? '127.0.0.1';
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = (req.method ?? 'GET').toUpperCase();
    if (!url.pathname.startsWith(`${BASE_PATH}/`)) return sendGateway(res, ip, 'MISSING_AUTHENTICATION_TOKEN');
    const path = url.pathname.slice(BASE_PATH.length);
    let match: ReturnType<typeof matchPath>;
    try {
      match = matchPath(path);
    } catch {
      return sendGateway(res, ip, 'MISSING_AUTHENTICATION_TOKEN'); // undecodable %-escape in a path parameter
    }
    if (!match) return sendGateway(res, ip, 'MISSING_AUTHENTICATION_TOKEN');
    const route = ROUTES.find((r) => r.path === match.template && r.method === method);
    const origin = req.headers.origin;
    if (method === 'OPTIONS' && origin && corsOrigins.includes(origin)) {
      // The CORS preflight the stack adds (defaultCorsPreflightOptions) when the stage allows origins.
      return send(res, 204, {
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Methods': (paths.get(match.template) ?? []).join(','),
        'Access-Control-Allow-Headers': 'Authorization,Content-Type,Idempotency-Key',
        'Access-Control-Max-Age': '600',
        Vary: 'Origin',
        ...anonymousHeaders(ip),
      }, '');
    }
    if (!route) {
      const r405 = methodNotAllowed(paths.get(match.template) ?? []);
      return send(res, r405.status, { ...r405.headers, ...anonymousHeaders(ip) }, method === 'HEAD' ? '' : r405.body);
    }
    const body = await readBody(req);
    if (body === 'too-large') return sendGateway(res, ip, 'REQUEST_TOO_LARGE');

    const token = req.headers.authorization;
    if (typeof token !== 'string' || !bearer.test(token)) return sendGateway(res, ip, 'UNAUTHORIZED');
    const methodArn = `arn:aws:execute-api:us-east-1:${FAKE_ACCOUNT}:${FAKE_API}/${STAGE}/${method}${path}`;
    const auth = await authorize(token, methodArn);
    if (auth === 'unauthorized') return sendGateway(res, ip, 'UNAUTHORIZED');
    if (auth === 'failure') return sendGateway(res, ip, 'AUTHORIZER_FAILURE');
    if (!allows(auth.policyDocument, methodArn)) return sendGateway(res, ip, 'ACCESS_DENIED');

    const headers: Record<string, string> = {};
    const multiValueHeaders: Record<string, string[]> = {};
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const [k, v] = [req.rawHeaders[i]!, req.rawHeaders[i + 1]!];
      headers[k] = v;
      (multiValueHeaders[k] ??= []).push(v);
    }
    const query: Record<string, string> = {};
    const multiQuery: Record<string, string[]> = {};
    for (const [k, v] of url.searchParams) {
      query[k] = v;
      (multiQuery[k] ??= []).push(v);
    }
    const hasQuery = Object.keys(query).length > 0;
    const event: APIGatewayProxyEvent = {
      resource: route.path,
      path,
      httpMethod: method,
      headers,
      multiValueHeaders,
      queryStringParameters: hasQuery ? query : null,
      multiValueQueryStringParameters: hasQuery ? multiQuery : null,
      pathParameters: Object.keys(match.params).length ? match.params : null,
      stageVariables: null,
      body: body.length ? body.toString('utf8') : null,
      isBase64Encoded: false,
      requestContext: {
        accountId: FAKE_ACCOUNT,
        apiId: FAKE_API,
        authorizer: { ...auth.context, principalId: auth.principalId, integrationLatency: 0 },
        httpMethod: method,
        identity: { sourceIp: ip, userAgent: req.headers['user-agent'] ?? null } as APIGatewayProxyEvent['requestContext']['identity'],
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        requestId: randomUUID(),
        requestTimeEpoch: Date.now(),
        resourceId: 'local',
        resourcePath: route.path,
        stage: STAGE,
      },
    };
    let result: APIGatewayProxyResult;
    try {
      result = await handlers.get(route)!(event, lambdaContext(route.operationId));
    } catch {
      return sendGateway(res, ip, 'DEFAULT_5XX'); // a crashed function: API Gateway answers 502 → mapped
    }
    const out: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
    for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) out[k] = v.map(String);
    send(res, result.statusCode, out, method === 'HEAD' ? '' : result.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendGateway(res, req.socket.remoteAddress ?? '', 'DEFAULT_5XX');
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve);
  });
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://${opts.host && opts.host !== '0.0.0.0' ? opts.host : '127.0.0.1'}:${port}${BASE_PATH}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
