/**
 * The pagination cursor codec, composed once per container from the configuration and the clock. Only listPets
 * imports it (the only function given CURSOR_SECRET), so a missing secret fails that function's cold start and no
 * other's.
 */
import { cursorCodec } from '../domain/pagination.ts';
import { now } from './clock.ts';
import { config, cursorSecret } from './config.ts';

export const cursors = cursorCodec({ secret: cursorSecret(config), now: () => now() });
