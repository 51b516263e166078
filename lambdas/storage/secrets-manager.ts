/**
 * The SecretReader on Secrets Manager: GetSecretValue (the only action listPets' role is granted, on its one
 * secret), sent as one signed HTTPS request of the service's JSON protocol. Signed by the SDK's own SigV4 signer,
 * with the credentials and the hash the DynamoDB client resolved, all of which the bundle carries anyway: the
 * Secrets Manager client would add ~15 KB (its commands, error classes, endpoint rules) to listPets' bundle for a
 * call made at cold start and every few minutes after (docs/performance.md). Only the Lambda entry that needs a
 * secret builds this reader.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { partition } from '@aws-sdk/core/client';
import { SignatureV4 } from '@smithy/signature-v4';
import type { DynamoDBClientResolvedConfig } from '@aws-sdk/client-dynamodb';
import type { SecretReader } from '../shared/cursor-keys.ts';

export interface SecretsManagerSettings {
  readonly region: string;
  /** A DynamoDB client's, resolved: the function's role in AWS. */
  readonly credentials: DynamoDBClientResolvedConfig['credentials'];
  readonly sha256: DynamoDBClientResolvedConfig['sha256'];
  /** Replaces `https://secretsmanager.<region>.<the partition's DNS suffix>` (tests). */
  readonly endpoint?: string;
}

/** As the SDK client was set up: bounded, since the first read holds up a cold start. */
const ATTEMPTS = 3;
const CONNECT_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
/** Error types the SDK's standard retry strategy tries again (throttling, transient); 5xx and lost sockets too. */
const RETRYABLE = new Set([
  'ThrottlingException',
  'InternalServiceError',
  'RequestTimeout',
  'TooManyRequestsException',
]);

/** An error answer of the service: `name` is its error type (ResourceNotFoundException, AccessDeniedException…). */
export class SecretsManagerError extends Error {
  readonly status: number;
  constructor(name: string, message: string, status: number) {
    super(message);
    this.name = name;
    this.status = status;
  }
}

/** The service's regional endpoint, in the region's partition (amazonaws.com, amazonaws.com.cn…), as the SDK's. */
export function secretsManagerEndpoint(region: string): string {
  return `https://secretsmanager.${region}.${partition(region).dnsSuffix}`;
}

/** The reader of a (listPets) function: the DynamoDB client's resolved config gives credentials and hash. */
export function secretsManagerReader(settings: SecretsManagerSettings): SecretReader {
  const url = new URL(settings.endpoint ?? secretsManagerEndpoint(settings.region));
  const signer = new SignatureV4({
    service: 'secretsmanager',
    region: settings.region,
    credentials: settings.credentials,
    sha256: settings.sha256,
  });
  return async (secretId, versionStage) => {
    const body = JSON.stringify({ SecretId: secretId, VersionStage: versionStage });
    for (let attempt = 1; ; attempt++) {
      try {
        const signed = await signer.sign({
          method: 'POST',
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port ? Number(url.port) : undefined,
          path: '/',
          query: {},
          headers: {
            host: url.host,
            'content-type': 'application/x-amz-json-1.1',
            'x-amz-target': 'secretsmanager.GetSecretValue',
          },
          body,
        });
        const res = await send(url, signed.headers, body);
        if (res.status === 200) return (JSON.parse(res.text) as { SecretString?: string }).SecretString;
        const err = errorOf(res.status, res.text);
        // No version carries that stage (AWSPENDING outside a rotation, AWSPREVIOUS before the first one).
        if (err.name === 'ResourceNotFoundException') return undefined;
        throw err;
      } catch (err) {
        if (attempt >= ATTEMPTS || !retryable(err)) throw err;
        // Exponential backoff with full jitter, as the SDK's standard strategy (base 100 ms).
        await new Promise((r) => setTimeout(r, Math.random() * 100 * 2 ** attempt));
      }
    }
  };
}

function retryable(err: unknown): boolean {
  if (err instanceof SecretsManagerError) return err.status >= 500 || RETRYABLE.has(err.name);
  return true; // the request never got an answer: refused, reset, timed out
}

/** The JSON protocol's error body: `__type` (maybe prefixed `namespace#`) and `message` or `Message`. */
function errorOf(status: number, text: string): SecretsManagerError {
  let parsed: { __type?: string; message?: string; Message?: string } = {};
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    // not JSON (a proxy's error page): named by its status below
  }
  const type = parsed.__type?.split('#').pop() ?? `HTTP ${status}`;
  return new SecretsManagerError(
    type,
    parsed.message ?? parsed.Message ?? `Secrets Manager answered ${status}`,
    status,
  );
}

function send(url: URL, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'http:' ? httpRequest : httpsRequest)(
      url,
      {
        method: 'POST',
        // Sent as is, not chunked; not signed (the SDK does not sign it either).
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    // No connection within CONNECT_TIMEOUT_MS: give up this attempt (the signal bounds the whole exchange).
    const connect = setTimeout(
      () => req.destroy(new Error('Secrets Manager connection timed out')),
      CONNECT_TIMEOUT_MS,
    );
    req.on('socket', (socket) => {
      // A kept-alive socket is connected already.
      if (!socket.connecting) clearTimeout(connect);
      else socket.once(url.protocol === 'http:' ? 'connect' : 'secureConnect', () => clearTimeout(connect));
    });
    req.on('close', () => clearTimeout(connect));
    req.on('error', reject);
    req.end(body);
  });
}
