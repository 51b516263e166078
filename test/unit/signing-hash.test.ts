/**
 * The signer's SHA-256 (lambdas/storage/signing-hash.ts) must give the SDK's own digests and signatures, byte for
 * byte: a request it signs differently is refused by DynamoDB with 400 InvalidSignatureException.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HttpRequest } from '@smithy/core/transport';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { SigningSha256 } from '../../lambdas/storage/signing-hash.ts';

// The SDK's own SHA-256, as a DynamoDB client resolves it.
const sdkSha256 = new DynamoDBClient({ region: 'eu-west-1' }).config.sha256;

async function digestOf(
  Ctor: new (secret?: never) => { update(d: never, e?: never): void; digest(): Promise<Uint8Array> },
  secret: unknown,
  ...chunks: unknown[]
) {
  const h = new Ctor(secret as never);
  for (const c of chunks) h.update(c as never);
  return Buffer.from(await h.digest()).toString('hex');
}

const keyBytes = new TextEncoder().encode('AWS4wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY');
const KEYS = {
  none: undefined,
  'a string': 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  'non-ASCII string': 'clé-ß-✓',
  'a Uint8Array': keyBytes,
  'a view inside a larger buffer': new Uint8Array(
    Buffer.concat([Buffer.from('xx'), Buffer.from(keyBytes)]).buffer,
    2,
    keyBytes.length,
  ),
  'an ArrayBuffer': keyBytes.slice().buffer,
  'a DataView': new DataView(keyBytes.slice().buffer),
  'an empty string (a plain hash, as the SDK)': '',
};
const DATA = ['', 'AWS4-HMAC-SHA256\n20261126T180000Z\n…', new TextEncoder().encode('{"TableName":"pets"}')];

describe('the signer’s SHA-256', () => {
  for (const [name, key] of Object.entries(KEYS))
    it(`gives the SDK's digest with ${name} as the key`, async () => {
      for (const data of DATA)
        expect(await digestOf(SigningSha256 as never, key, data, 'more')).toBe(
          await digestOf(sdkSha256 as never, key, data, 'more'),
        );
    });

  it('signs a DynamoDB request exactly as the SDK does, request after request (its cached signing key reused)', async () => {
    const signer = (sha256: unknown) =>
      new SignatureV4({
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
        region: 'eu-west-1',
        service: 'dynamodb',
        sha256: sha256 as never,
      });
    const ours = signer(SigningSha256);
    const sdk = signer(sdkSha256);
    const request = (i: number) =>
      new HttpRequest({
        method: 'POST',
        protocol: 'https:',
        hostname: 'dynamodb.eu-west-1.amazonaws.com',
        path: '/',
        headers: { host: 'dynamodb.eu-west-1.amazonaws.com', 'x-amz-target': 'DynamoDB_20120810.GetItem' },
        body: JSON.stringify({ TableName: 'pets', Key: { id: { N: String(i) } } }),
      });
    const signingDate = new Date('2026-11-26T18:00:00Z');
    for (let i = 0; i < 3; i++) {
      const [a, b] = await Promise.all([ours.sign(request(i), { signingDate }), sdk.sign(request(i), { signingDate })]);
      expect(a.headers.authorization).toBe(b.headers.authorization);
      expect(a.headers.authorization).toMatch(/Signature=[0-9a-f]{64}$/);
    }
  });
});
