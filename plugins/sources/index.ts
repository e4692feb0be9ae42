export { sourcesPlugin as default } from './plugin.js';
