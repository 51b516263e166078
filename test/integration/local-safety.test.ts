/**
 * What the local server exposes and keeps: DynamoDB Local (no authentication) listens on loopback only, and a
 * development key revoked in a kept data directory stays revoked when the server starts again.
 */
import { existsSync, readFileSync } from 'node:fs';
import { expect, inject, it } from 'vitest';
import { hashKey } from '../../lambdas/domain/keys.ts';
import { createKeyAdminStore, createKeyStore } from '../../lambdas/storage/key-store.ts';
import { startTestApi, uniquePrefix } from '../helpers/api.ts';

/** The local addresses of the listening TCP sockets on `port`, from the kernel's socket tables (no traffic sent). */
function listeners(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6']
    .filter((f) => existsSync(f))
    .flatMap((f) => readFileSync(f, 'utf8').split('\n').slice(1))
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[1]?.endsWith(`:${hexPort}`) && cols[3] === '0A') // 0A: LISTEN
    .map((cols) => cols[1]!.split(':')[0]!);
}

const LOOPBACK = new Set([
  '0100007F', // 127.0.0.1
  '0000000000000000FFFF00000100007F', // ::ffff:127.0.0.1
  '00000000000000000000000001000000', // ::1
]);

it.skipIf(!existsSync('/proc/net/tcp'))('DynamoDB Local listens on loopback only, not on every interface', () => {
  const port = Number(new URL(inject('dynamoEndpoint')).port);
  const addresses = listeners(port);
  expect(addresses.length).toBeGreaterThan(0);
  for (const a of addresses) expect(LOOPBACK.has(a), `listening on ${a}`).toBe(true);
});

it('keeps a revoked development key revoked when the server starts again on the same data', async () => {
  const tablePrefix = uniquePrefix();
  const key = `ask_${'r'.repeat(43)}`;
  const first = await startTestApi({ tablePrefix, devKeys: [{ key, plan: 'free' }] });
  try {
    expect((await first.call('/pets', { key })).status).toBe(200);
    const record = (await createKeyStore(first.storage).getByHash(hashKey(key)))!;
    await createKeyAdminStore(first.storage).update(record, { status: 'revoked', revokedAt: new Date().toISOString() });
  } finally {
    await first.close();
  }
  // The same tables, as a restart with ANIMAL_STORE_DATA_DIR finds them, and the same ANIMAL_STORE_DEV_KEYS.
  const again = await startTestApi({ tablePrefix, devKeys: [{ key, plan: 'pro' }] });
  try {
    expect(again.inactiveDevKeys.map((k) => k.key)).toEqual([key]);
    expect((await again.call('/pets', { key })).status).toBe(401);
    expect((await createKeyStore(again.storage).getByHash(hashKey(key)))?.plan).toBe('free');
  } finally {
    await again.close();
  }
});
