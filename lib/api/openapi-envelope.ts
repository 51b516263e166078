/**
 * What the shared envelope and the gateway answer for any operation, whatever its entry lists, so the document
 * says all they enforce: an undeclared query parameter (400), a declared request header missing, invalid or given
 * twice (400), a key not on a usage plan, or a read-only key on an operation that changes data (403), a request too
 * large for the gateway (413) or with headers too large (431), and how a body must be sent (the media types, charset
 * and content coding lambdas/shared/request.ts accepts).
 */
import { MAX_BODY_BYTES } from '../../contract/schemas.ts';
import { fieldsOf } from '../../contract/request-fields.ts';
import { writes, type ErrorResponseSpec, type Route } from '../../contract/routes.ts';

/** API Gateway's payload quota for REST APIs (10 MB): beyond it the gateway answers 413 itself. */
const GATEWAY_MAX_PAYLOAD = '10 MB';

export const envelopeNotes = {
  query: 'A query parameter the operation does not declare is refused (`validation_failed`, naming it).',
  headers: 'A declared request header that is missing (when required), invalid or given twice is refused.',
  body:
    `Sent as \`application/json\` (any \`application/…+json\` type is read the same), in UTF-8 and uncompressed, ` +
    `at most ${MAX_BODY_BYTES} bytes: another type, charset or \`Content-Encoding\` gets 415; a key given twice, 400.`,
} as const;

/** The route entry's errors with what the envelope and the gateway add, one response per status. */
export function envelopeErrors(route: Route): ErrorResponseSpec[] {
  const notes: string[] = [envelopeNotes.query];
  if (Object.keys(fieldsOf(route.request.headers)).length) notes.push(envelopeNotes.headers);
  const errors = route.errors.map((e) =>
    e.status === 400 ? { ...e, description: `${e.description} ${notes.join(' ')}` } : e,
  );
  const has = (status: number) => errors.some((e) => e.status === status);
  if (!has(400))
    errors.push({ status: 400, description: notes.join(' '), codes: ['validation_failed', 'bad_request'] });
  if (!has(413))
    errors.push({
      status: 413,
      description: `The request is larger than the gateway accepts (${GATEWAY_MAX_PAYLOAD}).`,
      codes: ['payload_too_large'],
    });
  // A read-only key (scope `read`) may call only the operations that read: what the route declares it does.
  const readOnlyRefused = writes(route);
  const common403: ErrorResponseSpec = {
    status: 403,
    description: readOnlyRefused
      ? 'The API key may not call this operation: it is not on a usage plan for this stage (`forbidden`), or it may only read and this operation changes data (`key_read_only`).'
      : 'The API key may not call this operation (not on a usage plan for this stage).',
    codes: readOnlyRefused ? ['forbidden', 'key_read_only'] : ['forbidden'],
  };
  // The gateway and the envelope refuse with these whatever the operation adds: an operation's own 403 (a key that
  // does not own the item) is merged with them, its description first and every code kept.
  const own = errors.findIndex((e) => e.status === 403);
  if (own < 0) errors.push(common403);
  else errors[own] = merged(errors[own]!, common403);
  errors.push({ status: 431, description: 'The request headers are too large.', codes: ['request_headers_too_large'] });
  return errors;
}

/** An operation's own response of a status merged with the envelope's: both descriptions, every code once. */
function merged(own: ErrorResponseSpec, envelope: ErrorResponseSpec): ErrorResponseSpec {
  return {
    ...own,
    description: `${own.description} ${envelope.description}`,
    codes: [...new Set([...own.codes, ...envelope.codes])],
    ...(own.headers || envelope.headers ? { headers: [...(own.headers ?? []), ...(envelope.headers ?? [])] } : {}),
  };
}
