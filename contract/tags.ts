/**
 * The document's tags: each operation is tagged with the first segment of its path, and each tag is described here.
 * test/contract/openapi.test.ts fails on a tag of the route table not described here, so a new resource names this file.
 */
export const TAGS: Readonly<Record<string, string>> = {
  pets: 'Animals in the store.',
  store: 'Store operations.',
};
