/**
 * Two admins at once, made deterministic: `deps` whose first read of a key runs `between` right after reading, as if
 * another admin acted at exactly that moment. Every admin write is conditional on the version read, so what the
 * command does next shows whether it notices the other's change.
 */
import type { AdminDeps } from '../../lib/admin/service.ts';

export function interleaved(deps: AdminDeps, between: (keyId: string) => Promise<unknown>): AdminDeps {
  let armed = true;
  return {
    ...deps,
    store: {
      ...deps.store,
      async getById(keyId) {
        const record = await deps.store.getById(keyId);
        if (armed) {
          armed = false;
          await between(keyId);
        }
        return record;
      },
    },
  };
}
