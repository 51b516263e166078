/**
 * A small emulator of API Gateway (REST API, stage, Lambda proxy and MOCK integrations, TOKEN authorizer, usage
 * plans, gateway responses) driven by the synthesized template (template.ts), for `npm start`, tests and
 * benchmarks. Each request gets an id, sent back as `x-amzn-RequestId` and passed as requestContext.requestId.
 * The stage's throttle (a token bucket per method) and the account's (one bucket) refuse a request before its
 * authorizer runs, as in AWS (stage-throttle.ts). Not emulated: custom domains, binary media types, WAF.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { LocalAuthorizer, methodArn } from './authorizer.ts';
import { invoke, isProxyResult, proxyEvent, type LocalFunction } from './lambda.ts';
import { checkMock, runMock } from './mock.ts';
import { GatewayResponses, type RequestFacts } from './responses.ts';
import { Router } from './router.ts';
import { StageThrottle } from './stage-throttle.ts';
import type { ApiModel, LambdaMethod } from './template.ts';
import { UsagePlanEnforcer } from './usage-plans.ts';
import { serveDocs } from './docs-page.ts';
import { ERROR_CODES, errorObject, JSON_HEADERS, UNCOUNTED_RATE_LIMIT_HEADERS } from '../../contract/errors.ts';

/** API Gateway's limit on a request's headers (REST API quota: request line and header values, 10,240 bytes). */
const MAX_HEADER_BYTES = 10_240;

/** API Gateway's payload limit. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

export interface GatewayOptions {
  readonly port?: number;
  readonly host?: string;
  readonly model: ApiModel;
  /** The template's functions, loaded (lambda.ts), by logical id. */
  readonly functions: ReadonlyMap<string, LocalFunction>;
  /** Overrides the authorizer's result TTL from the template (seconds). */
  readonly authCacheTtlSeconds?: number;
  /** Enforce the template's usage plans. @default true */
  readonly usagePlans?: boolean;
  /** Enforce the stage's method throttle and the account's throttle. @default true */
  readonly stageThrottle?: boolean;
  /** The clock of the usage plans and the throttles (the functions' clock in tests). @default Date.now */
  readonly now?: () => number;
}

export interface RunningGateway {
  readonly url: string;
  readonly port: number;
  /** Usage-plan counters (what API Gateway's get-usage reports), for tests. */
  readonly usage: UsagePlanEnforcer;
  /** How many requests each bucket of the stage's and the account's throttles refused, for tests. */
  readonly throttles: StageThrottle;
  close(): Promise<void>;
}

type Headers = Record<string, string | string[]>;
interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

interface Request extends RequestFacts {
  readonly req: IncomingMessage;
  readonly url: URL;
}

/** Statuses that never have a body; RFC 9110 (8.6) forbids Content-Length on 1xx and 204. */
const bodiless = (status: number) => status < 200 || status === 204 || status === 304;

function send(res: ServerResponse, r: Request, a: Answer): void {
  const body = r.httpMethod === 'HEAD' || bodiless(a.status) ? '' : a.body;
  const length = bodiless(a.status) ? {} : { 'Content-Length': Buffer.byteLength(body) };
  res.writeHead(a.status, { ...a.headers, 'x-amzn-RequestId': r.requestId, ...length });
  res.end(body);
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_PAYLOAD_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function proxyAnswer(result: APIGatewayProxyResult): Answer {
  const headers: Headers = { ...(result.headers as Record<string, string>) };
  for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
  return { status: result.statusCode, headers, body: result.body ?? '' };
}

/** What handling a request needs, built once from the template. */
interface Gateway {
  readonly model: ApiModel;
  readonly router: Router;
  readonly responses: GatewayResponses;
  readonly usage: UsagePlanEnforcer;
  readonly enforceUsagePlans: boolean;
  readonly throttles: StageThrottle;
  readonly enforceThrottles: boolean;
  readonly authorizers: ReadonlyMap<string, LocalAuthorizer>;
  readonly functions: ReadonlyMap<string, LocalFunction>;
  readonly now: () => number;
}

function buildGateway(opts: GatewayOptions): Gateway {
  const { model, functions } = opts;
  for (const m of model.methods) if (m.kind === 'mock') checkMock(m);
  const authorizers = new Map(
    [...model.authorizers].map(([id, def]) => [
      id,
      new LocalAuthorizer(def, functions.get(def.functionId)!, opts.authCacheTtlSeconds, opts.now ?? Date.now, {
        invocable: model.invocations?.authorizerInvocable(id) ?? true,
      }),
    ]),
  );
  return {
    model,
    router: new Router(model.methods),
    responses: new GatewayResponses(model.gatewayResponses),
    usage: new UsagePlanEnforcer(model),
    now: opts.now ?? Date.now,
    enforceUsagePlans: opts.usagePlans !== false,
    throttles: new StageThrottle(model.stageThrottle),
    enforceThrottles: opts.stageThrottle !== false,
    authorizers,
    functions,
  };
}

/** The authorizer, then the usage plan: the authorizer context, or the gateway response that refuses the request. */
async function admit(
  g: Gateway,
  r: Request,
  method: LambdaMethod,
): Promise<{ context: Record<string, unknown> } | { refused: Answer }> {
  const auth = method.authorizerId ? g.authorizers.get(method.authorizerId) : undefined;
  if (!auth) return { context: {} };
  // Node keeps the first of repeated Authorization headers and the event's `headers` the last: with two, the
  // authorizer and the function would read different keys. Two are no valid token: 401, nothing counted.
  const name = auth.def.identityHeader.toLowerCase();
  const given = r.req.rawHeaders.filter((h, i) => i % 2 === 0 && h.toLowerCase() === name).length;
  const header = given === 1 ? r.req.headers[name] : undefined;
  const outcome = await auth.authorize(
    typeof header === 'string' ? header : undefined,
    methodArn(g.model.stageName, r.httpMethod, r.path),
  );
  if (outcome.kind === 'reject') return { refused: g.responses.answer(outcome.type, r, outcome.context) };
  if (method.apiKeyRequired && g.enforceUsagePlans) {
    const verdict = g.usage.admit(outcome.usageIdentifierKey, g.now());
    if (verdict !== 'ok') return { refused: g.responses.answer(verdict, r, outcome.context) };
  }
  return { context: outcome.context };
}

/** What API Gateway does for a Lambda proxy method: admit, build the event, invoke, map the result. */
async function runLambda(
  g: Gateway,
  r: Request,
  method: LambdaMethod,
  params: Record<string, string>,
  body: Buffer,
): Promise<Answer> {
  const admitted = await admit(g, r, method);
  if ('refused' in admitted) return admitted.refused;
  const event = proxyEvent({
    requestId: r.requestId,
    method: r.httpMethod,
    resourcePath: r.resourcePath,
    path: r.path,
    stage: g.model.stageName,
    rawHeaders: r.req.rawHeaders,
    search: r.url.searchParams,
    pathParameters: params,
    body,
    sourceIp: r.sourceIp,
    userAgent: r.req.headers['user-agent'],
    protocol: `HTTP/${r.req.httpVersion}`,
    authorizer: admitted.context,
  });
  // API Gateway invokes only where the function's resource policy lets it (permissions.ts).
  if (g.model.invocations && !g.model.invocations.methodInvocable(method.functionId, r.httpMethod, r.path))
    return g.responses.answer('API_CONFIGURATION_ERROR', r);
  const out = await invoke(g.functions.get(method.functionId)!, event);
  // A failed invocation or a result API Gateway cannot read: 502, answered as DEFAULT_5XX.
  return out.ok && isProxyResult(out.result) ? proxyAnswer(out.result) : g.responses.answer('DEFAULT_5XX', r);
}

/** Stage, resource and method, the throttles, the payload limit, then the method's integration. */
async function route(g: Gateway, r: Request): Promise<Answer> {
  if (!r.url.pathname.startsWith(`/${g.model.stageName}/`))
    return g.responses.answer('MISSING_AUTHENTICATION_TOKEN', r);
  let match;
  try {
    match = g.router.match(r.path, r.httpMethod);
  } catch {
    match = undefined; // an undecodable %-escape in a path parameter
  }
  if (!match?.method) return g.responses.answer('MISSING_AUTHENTICATION_TOKEN', r);
  const facts: Request = { ...r, resourcePath: match.resourcePath };
  // Before anything the method does (its authorizer, usage plan and integration), a MOCK method's included: a
  // throttled request reaches none of them, as in AWS.
  if (g.enforceThrottles && g.throttles.admit(match.method, g.now()) !== 'ok')
    return g.responses.answer('THROTTLED', facts);
  const body = await readBody(r.req);
  if (!body) return g.responses.answer('REQUEST_TOO_LARGE', facts);
  if (match.method.kind === 'lambda') return runLambda(g, facts, match.method, match.params, body);
  const mock = runMock(match.method, r.req.headers['content-type'], body.toString('utf8'), { requestId: r.requestId });
  return mock.kind === 'gateway' ? g.responses.answer(mock.type, facts) : mock;
}

function requestOf(req: IncomingMessage, stageName: string): Request {
  const url = new URL(req.url ?? '/', 'http://localhost');
  return {
    req,
    url,
    requestId: randomUUID(),
    sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
    httpMethod: (req.method ?? 'GET').toUpperCase(),
    path: url.pathname.slice(stageName.length + 1) || '/',
    resourcePath: '',
    stage: stageName,
  };
}

export async function startGateway(opts: GatewayOptions): Promise<RunningGateway> {
  const g = buildGateway(opts);
  // API Gateway's quota on a request's headers is 10,240 bytes (REST API, "Total combined size of request line and
  // header values"); Node's default is 16 KiB.
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    if (serveDocs(req, res)) return; // the API reference page, outside the stage (not part of the template)
    const r = requestOf(req, g.model.stageName);
    route(g, r)
      .then((a) => send(res, r, a))
      .catch(() => (res.headersSent ? res.destroy() : send(res, r, g.responses.answer('DEFAULT_5XX', r))));
  });
  server.keepAliveTimeout = 65_000;
  // A request Node cannot parse (headers over the limit, a malformed request line) is answered here, not by Node's
  // bare status line: the Error object every answer carries, with the status Node chose (431 or 400).
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return void socket.destroy();
    const code = err.code === 'HPE_HEADER_OVERFLOW' ? 'request_headers_too_large' : 'bad_request';
    const body = JSON.stringify(errorObject(code));
    const headers = {
      ...JSON_HEADERS,
      ...UNCOUNTED_RATE_LIMIT_HEADERS,
      // Every answer carries a request id, as API Gateway's do (this one never reached a route to log it).
      'x-amzn-RequestId': randomUUID(),
      'Content-Length': String(Buffer.byteLength(body)),
      Connection: 'close',
    };
    const status = ERROR_CODES[code].status;
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}\r\n${body}`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve);
  });
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://${opts.host && opts.host !== '0.0.0.0' ? opts.host : '127.0.0.1'}:${port}/${g.model.stageName}`,
    port,
    usage: g.usage,
    throttles: g.throttles,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
