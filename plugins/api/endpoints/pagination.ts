import { withPage } from '../list-params.js';
import type { ApiRequest } from '../contracts.js';
import type { Urls } from './context.js';

/** How a client pages the query endpoint, whose criteria travel in a POST body (a link cannot carry them). */
const QUERY_PAGING = JSON.stringify('POST the same body again with ?page=N (and per_page) in the query string; meta.next_page and meta.previous_page name the neighbours');

/**
 * `meta` pagination keys and the page links; links keep every other query parameter.
 * `followable: false` (the query endpoint): no page links, which would lose the body's
 * criteria, but `meta.next_page`/`previous_page` numbers and `meta.paging` saying how.
 */
export function pagination(
  request: ApiRequest,
  urls: Urls,
  total: number,
  page: number,
  perPage: number,
  followable = true,
): { meta: string; links: string } {
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const counts = `"total":${total},"per_page":${perPage},"last_page":${lastPage},"current_page":${page}`;
  if (!followable) {
    const nextPage = page < lastPage ? String(page + 1) : 'null';
    const previousPage = page > 1 ? String(Math.min(page - 1, lastPage)) : 'null';
    return { meta: `${counts},"next_page":${nextPage},"previous_page":${previousPage},"paging":${QUERY_PAGING}`, links: '' };
  }
  const base = `${urls.base}${request.path}?`;
  const query = request.query;
  const first = JSON.stringify(base + withPage(query, 1));
  const next = page < lastPage ? JSON.stringify(base + withPage(query, page + 1)) : 'null';
  const previous = page > 1 ? JSON.stringify(base + withPage(query, Math.min(page - 1, lastPage))) : 'null';
  return {
    meta: counts,
    links: `"first_page":${first},"next_page":${next},"previous_page":${previous}`,
  };
}
