import { apiHandler } from '../shared/http.ts';
import { limitStore, petService } from '../shared/services.ts';
import { cursors } from '../shared/cursors.ts';

export const handler = apiHandler('listPets', { limitStore }, async (event) => {
  const { limit, status, cursor } = event.validated.query;
  const after = cursor ? cursors.read(cursor, { status }) : undefined;
  const page = await petService.list({ limit, status, after });
  const headers: Record<string, string> = page.next ? { Link: cursors.nextPageLink({ limit, status }, page.next) } : {};
  return { statusCode: 200, body: page.pets, headers };
});
