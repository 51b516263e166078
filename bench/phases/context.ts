/** What every bench phase shares: the run's parameters, DynamoDB Local, the result being built and its targets. */
import type { ChildProcess } from 'node:child_process';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export type Params = {
  coldRounds: number;
  warmRounds: number;
  warmSeconds: number;
  warmSeed: number;
  sizes: number[];
  callsPerOp: number;
  creates: number;
};

export const BENCH_KEY = 'bench_0123456789abcdefghijklmnopqrstuv';

export type BenchContext = {
  argv: string[];
  P: Params;
  endpoint: string;
  seedClient: DynamoDBClient;
  /** Servers a phase started; run.ts stops whatever is left here if a phase throws. */
  children: ChildProcess[];
  result: Record<string, unknown>;
  target: (t: string, subject: string, value: number, limit: string, met: boolean) => void;
  log: (s: string) => void;
};
