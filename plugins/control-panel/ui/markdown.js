// @ts-check
/**
 * A small Markdown preview: headings, paragraphs, lists, **bold**, *italic*, `code` and
 * [links](https://…). It builds elements, never HTML text, so what an entry holds cannot
 * inject markup or script; only http(s) and mailto links are made links.
 */
import { html } from './html.js';

/** @param {string} text @returns {any[]} */
function inline(text) {
  /** @type {any[]} */
  const out = [];
  const pattern = /(\*\*([^*]+)\*\*|\*([^*]+)\*|`([^`]+)`|\[([^\]]+)\]\(([^)\s]+)\))/g;
  let at = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    if (m[2] !== undefined) out.push(html`<strong>${m[2]}</strong>`);
    else if (m[3] !== undefined) out.push(html`<em>${m[3]}</em>`);
    else if (m[4] !== undefined) out.push(html`<code>${m[4]}</code>`);
    else if (/^(https?:|mailto:)/i.test(m[6] ?? '')) out.push(html`<a href=${m[6]} rel="noopener noreferrer" target="_blank">${m[5]}</a>`);
    else out.push(m[5]);
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/** @param {{ source: string }} props */
export function MarkdownPreview({ source }) {
  /** @type {any[]} */
  const blocks = [];
  /** @type {string[]} */
  let list = [];
  /** @type {string[]} */
  let paragraph = [];
  const flush = () => {
    if (paragraph.length > 0) blocks.push(html`<p>${inline(paragraph.join(' '))}</p>`);
    if (list.length > 0) blocks.push(html`<ul>${list.map((item) => html`<li>${inline(item)}</li>`)}</ul>`);
    paragraph = [];
    list = [];
  };
  for (const line of source.split('\n')) {
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const item = /^\s*[-*]\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      const level = Math.min(6, heading[1].length + 2);
      blocks.push(html`<div role="heading" aria-level=${level} class="md-heading">${inline(heading[2])}</div>`);
    } else if (item) {
      if (paragraph.length > 0) flush();
      list.push(item[1]);
    } else if (line.trim() === '') {
      flush();
    } else {
      if (list.length > 0) flush();
      paragraph.push(line.trim());
    }
  }
  flush();
  return html`<div class="markdown-preview">${blocks}</div>`;
}
