/** Fills a table fast for the bench and its tests: BatchWrite, 25 items a request (its limit), several in flight. */
import {
  BatchWriteItemCommand,
  type AttributeValue,
  type DynamoDBClient,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';

/** Writes items [from, to) to `table`, 25 per BatchWrite, `parallel` in flight; resolves to the milliseconds it took. */
export type RangeWriter = (
  client: DynamoDBClient,
  table: string,
  from: number,
  to: number,
  parallel?: number,
) => Promise<number>;

/** The writer of `item(i)`, retrying what DynamoDB leaves unprocessed with a growing pause. */
export function rangeWriter(item: (i: number) => Record<string, AttributeValue>): RangeWriter {
  return async (client, table, from, to, parallel = 16) => {
    const t0 = performance.now();
    let next = from;
    async function worker(): Promise<void> {
      while (next < to) {
        const start = next;
        const end = Math.min(to, start + 25);
        next = end;
        let requests: WriteRequest[] = [];
        for (let i = start; i < end; i++) requests.push({ PutRequest: { Item: item(i) } });
        for (let attempt = 0; requests.length; attempt++) {
          if (attempt > 20) throw new Error('BatchWrite kept returning unprocessed items');
          if (attempt) await new Promise((r) => setTimeout(r, 20 * attempt));
          const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: requests } }));
          requests = out.UnprocessedItems?.[table] ?? [];
        }
      }
    }
    await Promise.all(Array.from({ length: parallel }, worker));
    return performance.now() - t0;
  };
}
