/**
 * A MOCK integration as API Gateway runs it: the request template for the request's content type (or, per the
 * passthrough behaviour, the body itself, or 415) must yield a `statusCode`; the integration response whose
 * selection pattern matches it (else the default one) gives the status, static headers and body. A mock that gets
 * no statusCode (a passed-through non-JSON body) fails with 500, which the gateway answers as DEFAULT_5XX.
 */
import { checkTemplate, render, type MappingContext } from './mapping.ts';
import type { MockMethod } from './template.ts';

export type MockResult =
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly headers: Record<string, string>;
      readonly body: string;
    }
  | { readonly kind: 'gateway'; readonly type: 'UNSUPPORTED_MEDIA_TYPE' | 'DEFAULT_5XX' };

/** Fails at start-up on request or response templates the emulator cannot render. */
export function checkMock(m: MockMethod): void {
  const none = () => false;
  for (const t of Object.values(m.requestTemplates))
    checkTemplate(`${m.httpMethod} ${m.resourcePath} request template`, t, none);
  for (const r of m.responses)
    for (const t of Object.values(r.templates))
      checkTemplate(`${m.httpMethod} ${m.resourcePath} response template`, t, none);
}

/** The integration request: a template's output, the body passed through, or a 415. */
function integrationRequest(m: MockMethod, contentType: string, body: string): string | undefined {
  const template = m.requestTemplates[contentType];
  if (template !== undefined) return render(template, {});
  const hasTemplates = Object.keys(m.requestTemplates).length > 0;
  if (m.passthrough === 'WHEN_NO_MATCH' || (m.passthrough === 'WHEN_NO_TEMPLATES' && !hasTemplates)) return body;
  return undefined;
}

/** The mock's statusCode; its parser also reads CDK's unquoted `{ statusCode: 200 }`. */
function mockStatus(request: string): number | undefined {
  const m = /^\s*\{\s*"?statusCode"?\s*:\s*(\d{3})\s*[,}]/.exec(request);
  return m ? Number(m[1]) : undefined;
}

export function runMock(
  m: MockMethod,
  contentTypeHeader: string | undefined,
  body: string,
  ctx: MappingContext = {},
): MockResult {
  // API Gateway takes application/json when the request names no content type.
  const contentType = (contentTypeHeader ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  const request = integrationRequest(m, contentType, body);
  if (request === undefined) return { kind: 'gateway', type: 'UNSUPPORTED_MEDIA_TYPE' };
  const status = mockStatus(request);
  if (status === undefined) return { kind: 'gateway', type: 'DEFAULT_5XX' };
  const selected =
    m.responses.find((r) => r.selectionPattern && new RegExp(`^${r.selectionPattern}$`).test(String(status))) ??
    m.responses.find((r) => !r.selectionPattern);
  if (!selected) return { kind: 'gateway', type: 'DEFAULT_5XX' };
  const template = selected.templates['application/json'];
  return {
    kind: 'response',
    status: selected.statusCode,
    headers: { ...selected.headers },
    body: template === undefined ? '' : render(template, ctx),
  };
}
