/** An API Gateway static mapping value: a literal in single quotes (`'value'`). */
export function staticValue(value: string): string {
  if (value.includes("'")) throw new Error(`API Gateway static values cannot contain a single quote: ${value}`);
  return `'${value}'`;
}

/** `{ Name: value }` → `{ 'method.response.header.Name': "'value'" }` (integration and gateway responses). */
export function staticHeaders(headers: Readonly<Record<string, string>>, prefix = ''): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [`${prefix}${k}`, staticValue(v)]));
}
