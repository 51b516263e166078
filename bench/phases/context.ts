/** What every bench phase shares: the run's parameters, DynamoDB Local, the result being built and its targets. */
import type { ChildProcess } from 'node:child_process';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Verdict } from '../lib/util.ts';

export type Params = {
  coldRounds: number;
  warmRounds: number;
  warmSeconds: number;
  warmSeed: number;
  /** The in-process handler comparison (phases/handlers.ts): rounds, and seconds per side and cell. */
  handlerRounds: number;
  handlerSeconds: number;
  sizes: number[];
  callsPerOp: number;
  creates: number;
};

export const BENCH_KEY = 'ask_bench0123456789abcdefghijklmnopqrstuvwxyz01';

export type BenchContext = {
  argv: string[];
  P: Params;
  endpoint: string;
  seedClient: DynamoDBClient;
  /** Servers a phase started; run.ts stops whatever is left here if a phase throws. */
  children: ChildProcess[];
  result: Record<string, unknown>;
  /** Records a target's line; `met` is a Verdict where the figure has a spread (timings), a boolean where exact. */
  target: (t: string, subject: string, value: number, limit: string, met: boolean | Verdict) => void;
  /**
   * Records a cell's answers, counted by status (or `allow`, an authorizer's policy; an exception's text), against
   * the one its operation's route entry expects: a cell with any other measured other work than its floor, so the
   * run prints it and exits non-zero, naming it (bench/run.ts).
   */
  answers: (cell: string, expected: number | 'allow', answers: Readonly<Record<string, number>>) => void;
  log: (s: string) => void;
};
