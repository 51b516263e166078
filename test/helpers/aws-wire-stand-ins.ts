/**
 * Stand-ins for AWS endpoints on the wire, for code that builds its own SDK clients (the real SDK serializes, signs
 * and parses; `AWS_ENDPOINT_URL_<SERVICE>` points it here): CloudFormation's DescribeStacks, GetTemplate and
 * ListStackResources in its query protocol (XML), and API Gateway's usage plan reads in its REST protocol, answered by
 * the control-plane fake. Either can answer with AWS's error for a call the caller's credentials may not make.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetUsagePlanKeysCommand, GetUsagePlansCommand } from '@aws-sdk/client-api-gateway';
import { OTHER_OPERATION_INTERVAL_MS } from '../../lib/admin/pacing.ts';
import type { FakeControlPlane } from './control-plane-fake.ts';

export interface WireStandIn {
  readonly url: string;
  close(): Promise<void>;
}

async function serve(handle: (req: IncomingMessage, body: string, res: ServerResponse) => Promise<unknown>) {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      handle(req, body, res).catch((err: Error) => {
        res.writeHead(500).end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What the principal may not do: AWS's answer names the action. */
export const notAuthorized = (action: string) =>
  `User: arn:aws:sts::123456789012:assumed-role/pipeline/preflight is not authorized to perform: ${action}`;

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A stack as the stand-in describes it: outputs, and optionally its status, template and resources. */
export interface StandInStack {
  readonly outputs: Record<string, string>;
  readonly status?: string;
  readonly template?: object;
  readonly resources?: ReadonlyArray<{ logicalId: string; type: string; physicalId: string }>;
}

/** A CloudFormation whose one stack is this (absent: no stack), or which refuses DescribeStacks. */
export function cloudFormationStandIn(stack: StandInStack | 'absent' | 'denied') {
  return serve(async (_req, body, res) => {
    const params = new URLSearchParams(body);
    const name = params.get('StackName') ?? '';
    const error = (status: number, code: string, message: string) =>
      res
        .writeHead(status, { 'content-type': 'text/xml' })
        .end(
          `<ErrorResponse><Error><Type>Sender</Type><Code>${code}</Code><Message>${xml(message)}</Message></Error><RequestId>r</RequestId></ErrorResponse>`,
        );
    if (stack === 'denied') return error(403, 'AccessDenied', notAuthorized('cloudformation:DescribeStacks'));
    if (stack === 'absent') return error(400, 'ValidationError', `Stack with id ${name} does not exist`);
    const ok = (action: string, result: string) =>
      res
        .writeHead(200, { 'content-type': 'text/xml' })
        .end(
          `<${action}Response><${action}Result>${result}</${action}Result><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></${action}Response>`,
        );
    if (params.get('Action') === 'GetTemplate')
      return ok('GetTemplate', `<TemplateBody>${xml(JSON.stringify(stack.template ?? {}))}</TemplateBody>`);
    if (params.get('Action') === 'ListStackResources')
      return ok(
        'ListStackResources',
        `<StackResourceSummaries>${(stack.resources ?? [])
          .map(
            (r) =>
              `<member><LogicalResourceId>${r.logicalId}</LogicalResourceId><PhysicalResourceId>${xml(r.physicalId)}</PhysicalResourceId><ResourceType>${r.type}</ResourceType><ResourceStatus>CREATE_COMPLETE</ResourceStatus><LastUpdatedTimestamp>2020-01-01T00:00:00Z</LastUpdatedTimestamp></member>`,
          )
          .join('')}</StackResourceSummaries>`,
      );
    const outputs = Object.entries(stack.outputs)
      .map(([k, v]) => `<member><OutputKey>${k}</OutputKey><OutputValue>${xml(v)}</OutputValue></member>`)
      .join('');
    res
      .writeHead(200, { 'content-type': 'text/xml' })
      .end(
        `<DescribeStacksResponse><DescribeStacksResult><Stacks><member><StackName>${name}</StackName><StackStatus>${stack.status ?? 'UPDATE_COMPLETE'}</StackStatus><CreationTime>2030-01-01T00:00:00Z</CreationTime><Outputs>${outputs}</Outputs></member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DescribeStacksResponse>`,
      );
  });
}

/** API Gateway's GetUsagePlans and GetUsagePlanKeys, answered by the fake (paged as it pages); `denied`: 403. */
export function apiGatewayStandIn(fake: FakeControlPlane, opts: { denied?: boolean } = {}) {
  return serve(async (req, _body, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const json = (status: number, body: object, headers: Record<string, string> = {}) =>
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (opts.denied)
      return json(
        403,
        { message: notAuthorized(`apigateway:GET on resource: arn:aws:apigateway:us-east-1::${url.pathname}`) },
        { 'x-amzn-errortype': 'AccessDeniedException' },
      );
    const page = {
      limit: Number(url.searchParams.get('limit') ?? 25),
      ...(url.searchParams.get('position') ? { position: url.searchParams.get('position')! } : {}),
    };
    const keys = /^\/usageplans\/([^/]+)\/keys$/.exec(url.pathname);
    const command =
      req.method === 'GET' && url.pathname === '/usageplans'
        ? new GetUsagePlansCommand(page)
        : req.method === 'GET' && keys
          ? new GetUsagePlanKeysCommand({ usagePlanId: decodeURIComponent(keys[1]!), ...page })
          : undefined;
    if (!command) return json(400, { message: `the stand-in answers no ${req.method} ${url.pathname}` });
    try {
      // The fake's rates run on its simulated clock, which the client's real pacing (a call every 100 ms at least)
      // does not move: the time passes here instead, or 40 calls in a row would empty the fake's bucket.
      await fake.sleep(OTHER_OPERATION_INTERVAL_MS);
      const out = (await fake.send(command)) as { items?: unknown[]; position?: string };
      json(200, { item: out.items ?? [], ...(out.position ? { position: out.position } : {}) });
    } catch (err) {
      const e = err as Error & { $metadata?: { httpStatusCode?: number } };
      json(e.$metadata?.httpStatusCode ?? 500, { message: e.message }, { 'x-amzn-errortype': e.name });
    }
  });
}
