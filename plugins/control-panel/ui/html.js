// @ts-check
/** JSX-like templates without a build step: htm's tagged templates over preact's `h`. */
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
