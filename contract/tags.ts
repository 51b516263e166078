/**
 * The document's tags: each operation is tagged with the first segment of its path, described here.
 * test/contract/openapi.test.ts fails on a tag missing here, so a new resource's test names this file.
 */
export const TAGS: Readonly<Record<string, string>> = {
  pets: 'Animals in the store.',
  store: 'Store operations.',
};
