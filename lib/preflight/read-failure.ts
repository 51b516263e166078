/** How a preflight check that reads AWS words a read that failed, the same in every check. */

/** A refusal of the credentials' permissions (not of the credentials themselves). */
export const isAccessDenied = (err: unknown): boolean => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return /AccessDenied|Unauthorized|Forbidden/i.test(e?.name ?? '') || e?.$metadata?.httpStatusCode === 403;
};

/** AWS's answer in one line. */
const oneLine = (err: unknown): string => {
  const e = err as Error;
  return `${e?.name ?? 'Error'}: ${String(e?.message ?? err).split('\n')[0]}`;
};

/** Credentials AWS did not accept at all (expired, unknown, badly signed): no permission would help. */
const isRejectedCredentials = (err: unknown): boolean =>
  /ExpiredToken|UnrecognizedClient|InvalidClientTokenId|SignatureDoesNotMatch/.test((err as Error)?.name ?? '');

/**
 * The finding for a check's read that failed (`actions`: the IAM actions it needs): a missing permission names the
 * actions, credentials AWS refused say so, and anything else (a fault, a throttle past the retries) says to run it
 * again.
 */
export function awsReadFailure(check: string, what: string, actions: string, err: unknown): string {
  const head = `${check}: could not read ${what} (${oneLine(err)})`;
  if (isRejectedCredentials(err))
    return `${head}: AWS refused preflight's credentials; renew them and run preflight again`;
  return isAccessDenied(err)
    ? `${head}: preflight's credentials need ${actions}; grant them and run preflight again`
    : `${head}: run preflight again (the check only reads)`;
}
