/**
 * Typed errors the function code throws; the middy envelope maps each to the spec's Error object.
 */
import { ERROR_CODES, errorObject, type ErrorBody, type ErrorCode } from '../../contract/errors.ts';

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message?: string, headers: Record<string, string> = {}) {
    // An AppError is an answer, not a fault: its stack is never logged (the envelope logs a 5xx's name and message
    // only), and capturing one was the largest item of a refused or 501 call's CPU (~20-40 us of ~80, profiled).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message ?? ERROR_CODES[code].message);
    Error.stackTraceLimit = limit;
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.headers = headers;
  }

  toBody(): ErrorBody {
    return errorObject(this.code, this.message);
  }
}

/** Errors from the storage layer meaning "the database cannot serve now" (timeouts, throttling, outage). */
export class UnavailableError extends AppError {
  readonly retryAfterSeconds: number;
  constructor(reason: string, retryAfterSeconds = 1) {
    super('service_unavailable', undefined, { 'Retry-After': String(retryAfterSeconds) });
    this.retryAfterSeconds = retryAfterSeconds;
    this.cause = reason;
  }
}
