/**
 * Seeded sampling for the models: a run gives the same draws. The binomial and Poisson draws are exact (inversion
 * from the mode): a normal approximation would misstate the tails where a gate's false rollbacks live.
 */

/** mulberry32: a small seeded generator, uniform on [0, 1). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7: about 15 significant digits). */
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];
function lnGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const y = x - 1;
  let s = LANCZOS[0]!;
  for (let i = 1; i < 9; i++) s += LANCZOS[i]! / (y + i);
  const t = y + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(s);
}

/**
 * Inversion over the outcomes enumerated outwards from the mode (any fixed order of the outcomes is a valid
 * inversion): `up(k, pk)` and `down(k, pk)` give the probability of k + 1 and k - 1 from that of k.
 */
function fromMode(
  u: number,
  mode: number,
  pMode: number,
  min: number,
  max: number,
  up: (k: number, pk: number) => number,
  down: (k: number, pk: number) => number,
): number {
  u -= pMode;
  if (u <= 0) return mode;
  let lo = mode;
  let hi = mode;
  let pLo = pMode;
  let pHi = pMode;
  for (;;) {
    const canUp = hi < max;
    const canDown = lo > min;
    if (!canUp && !canDown) return mode;
    if (canUp) {
      pHi = up(hi, pHi);
      hi++;
      u -= pHi;
      if (u <= 0) return hi;
    }
    if (canDown) {
      pLo = down(lo, pLo);
      lo--;
      u -= pLo;
      if (u <= 0) return lo;
    }
    // What is left is below the floating-point resolution of the probabilities summed so far.
    if (pHi < 1e-300 && pLo < 1e-300) return mode;
  }
}

export function binomial(rng: () => number, n: number, p: number): number {
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1) return n;
  const mode = Math.min(n, Math.floor((n + 1) * p));
  const lnP =
    lnGamma(n + 1) - lnGamma(mode + 1) - lnGamma(n - mode + 1) + mode * Math.log(p) + (n - mode) * Math.log1p(-p);
  const odds = p / (1 - p);
  return fromMode(
    rng(),
    mode,
    Math.exp(lnP),
    0,
    n,
    (k, pk) => (pk * (n - k) * odds) / (k + 1),
    (k, pk) => (pk * k) / ((n - k + 1) * odds),
  );
}

export function poisson(rng: () => number, mean: number): number {
  if (mean <= 0) return 0;
  const mode = Math.floor(mean);
  const lnP = mode * Math.log(mean) - mean - lnGamma(mode + 1);
  return fromMode(
    rng(),
    mode,
    Math.exp(lnP),
    0,
    Number.POSITIVE_INFINITY,
    (k, pk) => (pk * mean) / (k + 1),
    (k, pk) => (pk * k) / mean,
  );
}
