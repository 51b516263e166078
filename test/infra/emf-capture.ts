/**
 * Captures the CloudWatch embedded metric format (EMF) lines the functions print when run locally with metrics on
 * (emf-scenarios.ts in a child process with a stage's function environment), as (namespace, metric, dimension set,
 * dimension values): what CloudWatch would turn into metrics.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export interface EmittedMetric {
  readonly namespace: string;
  readonly name: string;
  /** One dimension set of the EMF directive, with the line's values. */
  readonly dimensions: Readonly<Record<string, string>>;
}

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./emf-scenarios.ts', import.meta.url));

export async function captureEmf(env: Record<string, string>, dynamoEndpoint: string): Promise<EmittedMetric[]> {
  const { stdout } = await run(process.execPath, [SCRIPT, dynamoEndpoint, JSON.stringify(env)], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: 120_000,
  });
  const out: EmittedMetric[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const emf = JSON.parse(line) as Record<string, unknown> & {
      _aws?: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
    };
    for (const directive of emf._aws?.CloudWatchMetrics ?? []) {
      for (const metric of directive.Metrics) {
        for (const set of directive.Dimensions) {
          out.push({
            namespace: directive.Namespace,
            name: metric.Name,
            dimensions: Object.fromEntries(set.map((d) => [d, String(emf[d])])),
          });
        }
      }
    }
  }
  return out;
}
