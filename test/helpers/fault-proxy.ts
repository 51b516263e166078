/**
 * A fault-injecting HTTP proxy for tests, put between the functions and DynamoDB Local (start the API with
 * `dynamoEndpoint: proxy.url`). Requests pass through unchanged unless a rule matches; a rule picks requests by
 * operation (the `X-Amz-Target` header, e.g. `PutItem`) and/or a text or pattern in the JSON body, and then:
 * - `lose-answer`: forwards the request (DynamoDB applies it), holds the answer past the client's timeout, then
 *   drops the connection: the SDK sees a timeout and resends a request that was already applied;
 * - `reset`: destroys the connection without forwarding (ECONNRESET);
 * - `delay`: forwards after `ms`;
 * - `hang`: never answers (until the proxy closes);
 * - `error`: answers an AWS JSON error (`ThrottlingException` 400, `InternalServerError` 500, ...) without forwarding.
 * Every request is logged (operation and body), so tests can count what reached DynamoDB.
 */
import { Agent, createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export type Fault =
  | { readonly kind: 'lose-answer'; readonly holdMs: number }
  | { readonly kind: 'reset' }
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'hang' }
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly type: string;
      readonly message?: string;
      /** More fields of the error body, e.g. `Item` (attribute-value form) for a ConditionalCheckFailedException. */
      readonly fields?: Record<string, unknown>;
    };

export interface FaultRule {
  /** The DynamoDB operation, e.g. 'PutItem' (the part of X-Amz-Target after the dot). */
  readonly target?: string;
  /** A text the request body must contain, or a pattern it must match. */
  readonly body?: string | RegExp;
  /** Matching requests to let through before the fault applies (default 0). */
  readonly skip?: number;
  /** How many matching requests get the fault (default: all). */
  readonly times?: number;
  readonly fault: Fault;
}

export interface LoggedRequest {
  readonly target: string;
  readonly body: string;
  /** The fault applied, if any. */
  readonly fault?: Fault['kind'];
}

export interface FaultProxy {
  readonly url: string;
  /** Adds a rule; returns a function that removes it. */
  add(rule: FaultRule): () => void;
  /** Removes every rule. */
  clear(): void;
  /** Every request seen, oldest first. */
  readonly log: LoggedRequest[];
  close(): Promise<void>;
}

export async function startFaultProxy(upstream: string): Promise<FaultProxy> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true });
  const rules: Array<FaultRule & { seen: number; applied: number }> = [];
  const log: LoggedRequest[] = [];
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();

  function match(op: string, body: string): Fault | undefined {
    for (const r of rules) {
      if (r.target && r.target !== op) continue;
      if (r.body && !(typeof r.body === 'string' ? body.includes(r.body) : r.body.test(body))) continue;
      if (r.seen++ < (r.skip ?? 0)) continue;
      if (r.times !== undefined && r.applied >= r.times) continue;
      r.applied++;
      return r.fault;
    }
    return undefined;
  }

  function forward(
    req: IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const up = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on('error', reject);
        },
      );
      up.on('error', reject);
      up.end(body);
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const text = body.toString('utf8');
    const op =
      String(req.headers['x-amz-target'] ?? '')
        .split('.')
        .pop() ?? '';
    const fault = match(op, text);
    log.push({ target: op, body: text, ...(fault ? { fault: fault.kind } : {}) });
    if (fault?.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'hang') {
      hanging.add(res);
      return;
    }
    if (fault?.kind === 'error') {
      const payload = JSON.stringify({
        __type: `com.amazonaws.dynamodb.v20120810#${fault.type}`,
        message: fault.message ?? `injected ${fault.type}`,
        ...fault.fields,
      });
      res.writeHead(fault.status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'fault-proxy' });
      res.end(payload);
      return;
    }
    if (fault?.kind === 'delay') await sleep(fault.ms);
    const answer = await forward(req, body);
    if (fault?.kind === 'lose-answer') {
      // Applied upstream; the client never hears of it.
      await sleep(fault.holdMs);
      req.socket.destroy();
      return;
    }
    const headers = { ...answer.headers };
    delete headers['transfer-encoding'];
    delete headers.connection;
    res.writeHead(answer.status, { ...headers, 'content-length': String(answer.body.length) });
    res.end(answer.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };

  return {
    url: `http://127.0.0.1:${port}`,
    add(rule) {
      const r = { ...rule, seen: 0, applied: 0 };
      rules.push(r);
      return () => {
        const i = rules.indexOf(r);
        if (i >= 0) rules.splice(i, 1);
      };
    },
    clear() {
      rules.length = 0;
    },
    log,
    async close() {
      for (const res of hanging) res.destroy();
      for (const s of sockets) s.destroy();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
