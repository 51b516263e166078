/** What an admin command prints, and the failure of one that did part of its work. */

/** What a command prints: lines for people, or the data with --json. */
export interface Printed {
  readonly human: string;
  readonly data: unknown;
}

export const printed = (human: string, data: unknown): Printed => ({ human, data });

/** A command that did part of its work: what it did is printed, the failure is the `error:` line, exit code 1. */
export class PartialFailure extends Error {
  readonly output: Printed;
  constructor(message: string, output: Printed) {
    super(message);
    this.output = output;
  }
}

/** An argument as a shell reads it back: a command a message names is pasted as it is printed. */
export const shellWord = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`);
