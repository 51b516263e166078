/**
 * A flood of forged tokens costs no DynamoDB request: a token that claims the checked key form and fails its check
 * is refused by the authorizer (401, as for an unknown key) before any read, while keys of the checked form and keys
 * issued before it (no check) keep working. Over HTTP through the local gateway, the authorizer cache off (each
 * token a cache miss, as every random token of a flood is), counting the requests on the functions' real clients.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CHECKED_KEY, generateKey } from '../../lambdas/domain/keys.ts';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { onEveryClient, readsKeys } from '../helpers/clients.ts';

const issued = generateKey();
/** A key of the form issued before keys carried a check: `ask_` + 43 characters. */
const legacy = `ask_${'L'.repeat(43)}`;
let api: TestApi;
let keyReads = 0;

beforeAll(async () => {
  api = await startTestApi({
    devKeys: [
      { key: issued, plan: 'free' },
      { key: legacy, plan: 'free' },
    ],
  });
  onEveryClient(api, 'count-key-reads', (next) => async (args) => {
    if (readsKeys(args.input)) keyReads++;
    return next(args);
  });
});
afterAll(() => api?.close());

/** A token of the checked form whose check fails: one character of the random part changed. */
function forged(): string {
  const k = generateKey();
  const i = CHECKED_KEY.prefix.length + 5;
  return `${k.slice(0, i)}${k[i] === 'A' ? 'B' : 'A'}${k.slice(i + 1)}`;
}

it('refuses forged tokens of the checked form with 401 and no DynamoDB request', async () => {
  const tokens = [
    ...Array.from({ length: 20 }, forged),
    `${generateKey()}x`, // too long
    generateKey().slice(0, -1), // too short
  ];
  keyReads = 0;
  for (const token of tokens) {
    const res = await api.call('/pets?limit=1', { key: token });
    expect(res.status, token).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('unauthorized');
  }
  expect(keyReads).toBe(0);
});

it('serves keys of the checked form and keys issued before it; an unknown key of the old form still costs its read', async () => {
  expect(issued.startsWith(CHECKED_KEY.prefix)).toBe(true);
  keyReads = 0;
  expect((await api.call('/pets?limit=1', { key: issued })).status).toBe(200);
  expect((await api.call('/pets?limit=1', { key: legacy })).status).toBe(200);
  expect((await api.call('/pets?limit=1', { key: `ask_${'U'.repeat(43)}` })).status).toBe(401);
  expect(keyReads).toBe(3);
});

it('refuses a token of any other shape than the two issued forms with 401 and no DynamoDB request', async () => {
  const others = [
    'free_0123456789abcdef0123456789abcdef', // 37 characters, no known prefix
    `ask_${'U'.repeat(42)}`, // the old prefix, one short
    `ask_${'U'.repeat(44)}`, // one long
    `ASK_${'U'.repeat(43)}`,
    'x'.repeat(128),
  ];
  keyReads = 0;
  for (const token of others) {
    const res = await api.call('/pets?limit=1', { key: token });
    expect(res.status, token).toBe(401);
  }
  expect(keyReads).toBe(0);
});

it('once the stage refuses the old form, its keys are refused too, with no DynamoDB request', async () => {
  const checked = generateKey();
  const refusing = await startTestApi({
    devKeys: [
      { key: legacy, plan: 'free' },
      { key: checked, plan: 'pro' },
    ],
    env: { OLD_KEY_FORM: 'refused' },
  });
  let reads = 0;
  onEveryClient(refusing, 'count-key-reads', (next) => async (args) => {
    if (readsKeys(args.input)) reads++;
    return next(args);
  });
  try {
    expect((await refusing.call('/pets?limit=1', { key: legacy })).status).toBe(401);
    expect((await refusing.call('/pets?limit=1', { key: `ask_${'U'.repeat(43)}` })).status).toBe(401);
    expect(reads).toBe(0);
    // The checked form still works.
    expect((await refusing.call('/pets?limit=1', { key: checked })).status).toBe(200);
  } finally {
    await refusing.close();
  }
});
