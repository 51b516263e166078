/**
 * The Secrets Manager adapter listPets reads its cursor secret through (the SDK's Secrets Manager client, on the
 * credentials the DynamoDB client resolves): one signed GetSecretValue per version stage, and a stage no version
 * carries is absent, not an error (AWSPENDING outside a rotation, AWSPREVIOUS before the first). No local engine
 * exists for Secrets Manager, so the client is pointed at a local HTTP server that answers as the service does and
 * checks every request's SigV4 signature with a verifier written here from AWS's specification (not the SDK's).
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { secretCursorKeys } from '../../lambdas/shared/cursor-keys.ts';
import { secretsManagerReader } from '../../lambdas/storage/secrets-manager.ts';

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:CursorSecret-AbCdEf';
const CREDS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'tok/en+=',
};

interface Seen {
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  readonly signatureValid: boolean;
}

const hex = (s: string) => createHash('sha256').update(s).digest('hex');
const hmac = (key: Buffer | string, s: string) => createHmac('sha256', key).update(s).digest();

/** SigV4 (AWS General Reference, "Signature Version 4 signing process"): the signature this request must carry. */
function signatureValid(req: IncomingMessage, body: string): boolean {
  const auth =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      String(req.headers.authorization),
    );
  if (!auth) return false;
  const [, akid, day, region, service, signedHeaders, signature] = auth;
  if (akid !== CREDS.accessKeyId || service !== 'secretsmanager') return false;
  const names = signedHeaders!.split(';');
  // What must be covered: the target (which action), the host, the date, the session token.
  if (!['host', 'x-amz-date', 'x-amz-target', 'x-amz-security-token'].every((h) => names.includes(h))) return false;
  const canonicalHeaders = names.map((h) => `${h}:${String(req.headers[h]).trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonical = [req.method, req.url, '', canonicalHeaders, signedHeaders, hex(body)].join('\n');
  const date = String(req.headers['x-amz-date']);
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', date, scope, hex(canonical)].join('\n');
  let key = hmac(`AWS4${CREDS.secretAccessKey}`, day!);
  for (const part of [region!, service!, 'aws4_request']) key = hmac(key, part);
  return hmac(key, toSign).toString('hex') === signature;
}

/** The service's answers: a stage's value, 400 ResourceNotFoundException for a stage no version has, or a scripted failure. */
const stages: Record<string, string | undefined> = {};
let failures: Array<{ status: number; type: string }> = [];
let seen: Seen[] = [];
let server: Server;
let endpoint: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ headers: req.headers, body, signatureValid: signatureValid(req, body) });
      const answer = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(json));
      };
      const failure = failures.shift();
      if (failure) return answer(failure.status, { __type: failure.type, message: `scripted ${failure.type}` });
      const { SecretId, VersionStage } = JSON.parse(body) as { SecretId: string; VersionStage: string };
      const value = SecretId === ARN ? stages[VersionStage] : undefined;
      if (value === undefined)
        return answer(400, {
          __type: 'ResourceNotFoundException',
          message: "Secrets Manager can't find the specified secret value for staging label: AWSPENDING",
        });
      return answer(200, { ARN, Name: 'CursorSecret', SecretString: value, VersionStages: [VersionStage] });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  for (const k of Object.keys(stages)) delete stages[k];
  failures = [];
  seen = [];
});

/** The reader as listPets builds it: on the credentials a DynamoDB client resolved. */
function reader() {
  const { config } = new DynamoDBClient({ region: 'eu-west-1', credentials: CREDS });
  return secretsManagerReader({ region: 'eu-west-1', credentials: config.credentials, endpoint });
}

describe('secretsManagerReader', () => {
  it('reads each version stage of the secret the ARN names; a missing stage is undefined', async () => {
    Object.assign(stages, { AWSCURRENT: 'c'.repeat(64), AWSPREVIOUS: 'p'.repeat(64) });
    const keys = await secretCursorKeys(ARN, reader(), () => 0)();
    expect(keys).toEqual({ current: 'c'.repeat(64), accepted: ['p'.repeat(64)] });
    expect(seen.map((s) => (JSON.parse(s.body) as { VersionStage: string }).VersionStage).sort()).toEqual([
      'AWSCURRENT',
      'AWSPENDING',
      'AWSPREVIOUS',
    ]);
    expect(seen.every((s) => s.signatureValid)).toBe(true);
  });

  it('sends one GetSecretValue of the JSON protocol per read, signed with the credentials given', async () => {
    stages.AWSCURRENT = 'c'.repeat(64);
    expect(await reader()(ARN, 'AWSCURRENT')).toBe('c'.repeat(64));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.signatureValid).toBe(true);
    expect(seen[0]!.headers['x-amz-target']).toBe('secretsmanager.GetSecretValue');
    expect(seen[0]!.headers['x-amz-security-token']).toBe(CREDS.sessionToken);
    expect(JSON.parse(seen[0]!.body)).toEqual({ SecretId: ARN, VersionStage: 'AWSCURRENT' });
  });

  it('lets any other failure through (no grant): the cold start fails rather than signing with nothing', async () => {
    failures = [{ status: 400, type: 'AccessDeniedException' }];
    await expect(secretCursorKeys(ARN, reader(), () => 0)()).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringMatching(/AccessDeniedException/),
    });
    // The other stages' reads were in flight: let them land here, not in the next test's script.
    await vi.waitFor(() => expect(seen).toHaveLength(3));
  });

  it('tries throttling and server errors again, 3 attempts in all', async () => {
    stages.AWSCURRENT = 'c'.repeat(64);
    failures = [
      { status: 400, type: 'com.amazonaws.secretsmanager#ThrottlingException' },
      { status: 500, type: 'InternalServiceError' },
    ];
    expect(await reader()(ARN, 'AWSCURRENT')).toBe('c'.repeat(64));
    expect(seen).toHaveLength(3);
    failures = [1, 2, 3].map(() => ({ status: 500, type: 'InternalServiceError' }));
    await expect(reader()(ARN, 'AWSCURRENT')).rejects.toMatchObject({ name: 'InternalServiceError' });
    expect(seen).toHaveLength(6);
  });
});
