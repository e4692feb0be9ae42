import { withPage } from '../list-params.js';
import type { ApiRequest } from '../contracts.js';
import type { Urls } from './context.js';

/** `meta` pagination keys and the page links; links keep every other query parameter. */
export function pagination(
  request: ApiRequest,
  urls: Urls,
  total: number,
  page: number,
  perPage: number,
): { meta: string; links: string } {
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const base = `${urls.base}${request.path}?`;
  const query = request.query;
  const first = JSON.stringify(base + withPage(query, 1));
  const next = page < lastPage ? JSON.stringify(base + withPage(query, page + 1)) : 'null';
  const previous = page > 1 ? JSON.stringify(base + withPage(query, Math.min(page - 1, lastPage))) : 'null';
  return {
    meta: `"total":${total},"per_page":${perPage},"last_page":${lastPage},"current_page":${page}`,
    links: `"first_page":${first},"next_page":${next},"previous_page":${previous}`,
  };
}
