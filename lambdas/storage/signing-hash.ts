/**
 * The SHA-256 the shared SigV4 signer uses (client.ts): the SDK's own (`Hash` of @smithy/core), except for how an
 * HMAC's key reaches node:crypto. The SDK makes every key a Buffer, and `createHmac` is several times slower with a
 * Buffer key than with a string or KeyObject (docs/performance.md). SigV4 builds two HMACs per request.
 * A string key is passed as is (the same UTF-8 bytes). A byte key becomes a KeyObject once per key object, in a
 * WeakMap: the signer's cache returns the same Uint8Array, and SigV4 never writes to a key it derived. The digests
 * are the same byte for byte (test/unit/signing-hash.test.ts).
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
