/**
 * Route parameters of pages, decoded once. Next.js hands a page its dynamic segments already
 * percent-decoded; decoding them again turns `%2525` into `%` and makes `%25zz` throw (an error page
 * answered with status 200). A name here is what a label or a key prefix can hold; anything else
 * is no page (404).
 */

/** Longest service or handler name a page opens (as the API's name parameters). */
export const MAX_NAME_LENGTH = 200;

/**
 * The service or handler name of an already-decoded route segment, or `null` (→ 404) when it is
 * empty, too long, has a control character, a `/`, or a `%` — which only a second encoding leaves
 * in a name (`%2525` arrives as `%25`).
 */
export function routeName(decoded: string): string | null {
  if (decoded.length === 0 || decoded.length > MAX_NAME_LENGTH) return null;
  return /^[^\u0000-\u001f\u007f/%]+$/.test(decoded) ? decoded : null;
}
