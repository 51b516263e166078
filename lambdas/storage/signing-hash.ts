/**
 * The SHA-256 the shared SigV4 signer hashes and signs with (client.ts): the SDK's own (`Hash` of @smithy/core) with
 * one difference, how an HMAC's key reaches node:crypto. The SDK turns every key into a Buffer; on Node 24,
 * `createHmac` with a Buffer key costs about 15 µs, with the same key as a string or a KeyObject about 2 µs
 * (measured in a loop that also allocates, as a handler does; docs/performance.md). SigV4 builds two HMACs per
 * request (the credentials' cache tag, keyed by the secret access key, and the signature, keyed by the cached signing
 * key), so every DynamoDB request paid about 26 µs for the key's form alone.
 *
 * A string key is handed over as the string (the same UTF-8 bytes the Buffer held); a byte key becomes a KeyObject
 * once per key object (the signer's signing-key cache hands back the same Uint8Array every request, so a WeakMap
 * keyed by it holds nothing the cache does not; SigV4 never writes to a key it has derived, so the KeyObject cannot go
 * stale). Same digests, byte for byte (test/unit/signing-hash.test.ts).
 */
import { createHash, createHmac, createSecretKey, type Hash, type Hmac, type KeyObject } from 'node:crypto';

type SourceData = string | ArrayBuffer | ArrayBufferView;
type Encoding = 'utf8' | 'ascii' | 'latin1';

const keyObjects = new WeakMap<object, KeyObject>();

const bytesOf = (data: ArrayBuffer | ArrayBufferView): Uint8Array =>
  ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);

function hmacKey(secret: SourceData): string | KeyObject {
  if (typeof secret === 'string') return secret;
  let key = keyObjects.get(secret);
  if (!key) keyObjects.set(secret, (key = createSecretKey(bytesOf(secret))));
  return key;
}

/** A SHA-256 checksum, or an HMAC-SHA-256 when given a secret: the Checksum constructor SigV4 takes. */
export class SigningSha256 {
  private hash: Hash | Hmac;
  private readonly key: string | KeyObject | undefined;

  constructor(secret?: SourceData) {
    // As the SDK's: an empty secret means a plain hash.
    this.key = secret === undefined || secret === '' ? undefined : hmacKey(secret);
    this.hash = this.fresh();
  }

  private fresh(): Hash | Hmac {
    return this.key === undefined ? createHash('sha256') : createHmac('sha256', this.key);
  }

  update(data: SourceData, encoding?: Encoding): void {
    if (typeof data === 'string') this.hash.update(data, encoding ?? 'utf8');
    else this.hash.update(bytesOf(data));
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }

  reset(): void {
    this.hash = this.fresh();
  }
}
