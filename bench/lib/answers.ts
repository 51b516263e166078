/**
 * The bench's check of every cell's answers (BenchContext.answers): a cell's answers, counted by status, against the
 * one status its route entry expects (bench/lib/bench-ops.ts: its success, or its 501). A cell with any other answer
 * measured other work than its floor (a 404 of an item never seeded, a 400 of a sample the floor refuses), so its
 * ratios compare nothing: bench/run.ts prints such cells and exits non-zero naming them.
 */
export interface UnexpectedCell {
  readonly cell: string;
  readonly expected: string;
  /** The answers other than the expected one, by status. */
  readonly answers: Readonly<Record<string, number>>;
}

export function answerBook() {
  const unexpected: UnexpectedCell[] = [];
  let checked = 0;
  return {
    /** Records one cell's answers; a cell that got none at all is unexpected too (it measured nothing). */
    answers(cell: string, expected: number | 'allow', got: Readonly<Record<string, number>>): void {
      checked++;
      const off = Object.entries(got).filter(([status, n]) => n > 0 && status !== String(expected));
      const none = !Object.values(got).some((n) => n > 0);
      if (off.length || none)
        unexpected.push({ cell, expected: String(expected), answers: none ? { none: 1 } : Object.fromEntries(off) });
    },
    get checked() {
      return checked;
    },
    unexpected: unexpected as readonly UnexpectedCell[],
    /** The line that fails the run, naming each cell; undefined when every cell answered as expected. */
    failure(): string | undefined {
      if (!unexpected.length) return undefined;
      return `bench: ${unexpected.length} of ${checked} cells answered other than their route expects: ${unexpected
        .map(
          (u) =>
            `${u.cell} (expected ${u.expected}, got ${Object.entries(u.answers)
              .map(([s, n]) => `${s}x${n}`)
              .join(' ')})`,
        )
        .join('; ')}`;
    },
  };
}
