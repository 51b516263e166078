/**
 * `npm run soak`: mixed traffic at rates inside the plans against the local server, for SOAK_SECONDS (default
 * 600). Pass: no errors but the 429s the plans predict (none at these rates), memory flat, every created pet
 * readable at the end. Not part of `npm test`. Traffic goes to 127.0.0.1 only.
 */
import { randomBytes } from 'node:crypto';
import { startLocalApi } from '../lib/local/app.ts';

const seconds = Number(process.env.SOAK_SECONDS ?? 600);
const keys = {
  business: `soak_business_${randomBytes(12).toString('hex')}`,
  /** Reads back every pet at the end; a key of its own so the traffic's minute budget is not in the way. */
  check: `soak_check_${randomBytes(12).toString('hex')}`,
  pro: `soak_pro_${randomBytes(12).toString('hex')}`,
  free: `soak_free_${randomBytes(12).toString('hex')}`,
};
// Requests per second per key: under each plan's per-minute limit (1000, 300, 60) and day quota for 10 minutes.
const rates = { business: 12, pro: 4, free: 0.8 };

const api = await startLocalApi({
  devKeys: [
    { key: keys.business, plan: 'business' },
    { key: keys.pro, plan: 'pro' },
    { key: keys.free, plan: 'free' },
    { key: keys.check, plan: 'business' },
  ],
});
const statuses = new Map<number, number>();
const created: Array<{ id: number; name: string }> = [];
let requests = 0;
let unexpected = 0;
const samples: Array<{ t: number; rssMiB: number; heapMiB: number }> = [];
const mib = (n: number) => Math.round((n / 1048576) * 10) / 10;
const gc = (globalThis as { gc?: () => void }).gc;
const sample = (t: number) => {
  gc?.(); // with --expose-gc (npm run soak), heap figures are live data, not garbage not yet collected
  const m = process.memoryUsage();
  samples.push({ t, rssMiB: mib(m.rss), heapMiB: mib(m.heapUsed) });
};

async function one(key: string): Promise<void> {
  const r = Math.random();
  const auth = { Authorization: `Bearer ${key}` };
  let res: Response;
  if (r < 0.3) {
    const name = `soak-${randomBytes(4).toString('hex')}`;
    res = await fetch(`${api.url}/pets`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name,
        categoryId: 1 + Math.floor(Math.random() * 9),
        status: ['available', 'pending', 'sold'][Math.floor(Math.random() * 3)],
      }),
    });
    if (res.status === 201) created.push({ id: ((await res.clone().json()) as { id: number }).id, name });
  } else if (r < 0.6) {
    res = await fetch(`${api.url}/pets?limit=${1 + Math.floor(Math.random() * 100)}`, { headers: auth });
  } else if (r < 0.8) {
    res = await fetch(`${api.url}/pets?status=${['available', 'pending', 'sold'][Math.floor(Math.random() * 3)]}`, {
      headers: auth,
    });
  } else {
    const id = created.length ? created[Math.floor(Math.random() * created.length)]!.id : 1;
    res = await fetch(`${api.url}/pets/${id}`, { headers: auth });
  }
  await res.arrayBuffer();
  requests++;
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  if (res.status >= 400 && !(res.status === 404 && created.length === 0)) unexpected++;
}

const started = Date.now();
sample(0);
const timers = Object.entries(rates).map(([plan, perSecond]) =>
  setInterval(() => void one(keys[plan as keyof typeof keys]).catch(() => unexpected++), 1000 / perSecond),
);
const sampler = setInterval(() => sample(Math.round((Date.now() - started) / 1000)), 30_000);
await new Promise((r) => setTimeout(r, seconds * 1000));
for (const t of timers) clearInterval(t);
clearInterval(sampler);
await new Promise((r) => setTimeout(r, 2000)); // let requests in flight finish
sample(Math.round((Date.now() - started) / 1000));

// Every created pet is readable with what was sent: walk the list (next links), then read a sample one by one.
const listed = new Map<number, string>();
let next: string | undefined = `${api.url}/pets?limit=100`;
let pages = 0;
while (next && pages++ < 1000) {
  const res: Response = await fetch(next, { headers: { Authorization: `Bearer ${keys.check}` } });
  for (const p of (await res.json()) as Array<{ id: number; name: string }>) listed.set(p.id, p.name);
  const link = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '');
  next = link ? new URL(link[1]!, api.url).toString() : undefined;
}
let unreadable = created.filter((p) => listed.get(p.id) !== p.name).length;
for (const p of created.filter((_, i) => i % Math.max(1, Math.floor(created.length / 200)) === 0)) {
  const res = await fetch(`${api.url}/pets/${p.id}`, { headers: { Authorization: `Bearer ${keys.check}` } });
  if (res.status !== 200 || ((await res.json()) as { name?: string }).name !== p.name) unreadable++;
}
await api.close();

const first = samples[0]!;
const last = samples.at(-1)!;
const mid = samples[Math.floor(samples.length / 2)]!;
const report = {
  seconds,
  requests,
  statuses: Object.fromEntries(statuses),
  unexpectedErrors: unexpected,
  created: created.length,
  unreadable,
  rssMiB: { start: first.rssMiB, middle: mid.rssMiB, end: last.rssMiB },
  heapMiB: { start: first.heapMiB, middle: mid.heapMiB, end: last.heapMiB },
  samples,
};
console.log(JSON.stringify(report, null, 2));
const ok = unexpected === 0 && unreadable === 0;
console.log(ok ? 'SOAK PASSED' : 'SOAK FAILED');
process.exit(ok ? 0 : 1);
