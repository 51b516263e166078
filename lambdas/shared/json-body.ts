/**
 * A request body's steps, for an operation whose route entry declares one (its handler passes them to apiHandler,
 * so no other function's bundle carries the parser): the checks the parser does not make (request.ts), then
 * @middy/http-json-body-parser, which reads the text they checked and parses it once. Its content-type check is off:
 * the checks made it already, reading the header whatever the case of its name (the parser reads `content-type` and
 * `Content-Type` only).
 */
import type middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import { guardBody } from './request.ts';
import type { ApiEvent } from './validation.ts';

export type BodySteps = readonly middy.MiddlewareObj[];

export const jsonBody: BodySteps = [
  { name: 'body-checks', before: (request) => guardBody(request.event as ApiEvent) },
  httpJsonBodyParser({ disableContentTypeCheck: true }) as middy.MiddlewareObj,
];
