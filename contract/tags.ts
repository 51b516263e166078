/**
 * The document's tags: each operation is tagged with the first segment of its path, and each tag is described here.
 * The generator refuses a route whose tag is not declared (lib/api/openapi.ts), so a new resource names this file.
 */
export const TAGS: Readonly<Record<string, string>> = {
  pets: 'Animals in the store.',
  store: 'Store operations.',
};
